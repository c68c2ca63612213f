import { FencedCache } from '../src/credentials/fenced-cache';

/** The cache's reads are for the directories that extend it; the tests reach them the same way. */
class Cache<V> extends FencedCache<V> {
  read = (key: string, query: () => Promise<V>) => this.readFresh(key, query);
  recent = (key: string, query: () => Promise<V>) => this.readRecent(key, query);
  current = (key: string, query: () => Promise<V>, fenced?: Promise<boolean>) => this.readCurrent(key, query, fenced);
}

/** A query that counts its calls and answers what `answer` holds when it is called. */
function counted<V>(answer: { value: V }) {
  const query = jest.fn(async () => answer.value);
  return query;
}

/** A query held open until released, to let a notice arrive while it runs. */
function held<V>(value: V) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  return { query: async () => (await gate, value), release };
}

describe('FencedCache', () => {
  it('when an answer is younger than maxAgeMs, then recent() gives it without a query; older, it queries again', async () => {
    let now = 1_000;
    const cache = new Cache<string>(250, () => now);
    const answer = { value: 'v1' };
    const query = counted(answer);
    expect(await cache.recent('alice', query)).toBe('v1');
    answer.value = 'v2';
    now += 250;
    expect(await cache.recent('alice', query)).toBe('v1');
    expect(query).toHaveBeenCalledTimes(1);
    now += 1;
    expect(await cache.recent('alice', query)).toBe('v2');
    expect(query).toHaveBeenCalledTimes(2);
  });

  it('when the query takes long, then the age counts from before it started', async () => {
    let now = 1_000;
    const cache = new Cache<string>(250, () => now);
    const slow = held('v1');
    const reading = cache.read('alice', slow.query);
    now += 200;
    slow.release();
    await reading;
    now += 51;
    const query = counted({ value: 'v2' });
    expect(await cache.recent('alice', query)).toBe('v2');
  });

  it('when a notice makes it forget anything while a query runs, then that answer is given but not kept', async () => {
    const cache = new Cache<string>(250, () => 1_000);
    for (const forget of [
      (c: Cache<string>) => c.forget('bob'),
      (c: Cache<string>) => c.forgetAll(),
      (c: Cache<string>) => c.forgetWhere(() => false),
    ]) {
      const slow = held('before the change');
      const reading = cache.read('alice', slow.query);
      forget(cache);
      slow.release();
      expect(await reading).toBe('before the change');
      const query = counted({ value: 'after the change' });
      expect(await cache.recent('alice', query)).toBe('after the change');
      cache.forgetAll();
    }
  });

  it('when reads of one key miss together, then one query answers them all; with maxAgeMs 0, each queries', async () => {
    const cache = new Cache<string>(250, () => 1_000);
    cache.follow(async () => true);
    const slow = held('v1');
    const query = jest.fn(slow.query);
    const reads = [cache.recent('alice', query), cache.current('alice', query), cache.recent('alice', query)];
    await Promise.resolve();
    slow.release();
    expect(await Promise.all(reads)).toEqual(['v1', 'v1', 'v1']);
    expect(query).toHaveBeenCalledTimes(1);
    const uncached = new Cache<string>(0, () => 1_000);
    const each = counted({ value: 'v' });
    await Promise.all([uncached.recent('alice', each), uncached.recent('alice', each)]);
    expect(each).toHaveBeenCalledTimes(2);
  });

  it('when something is forgotten while a shared read runs, then a read arriving after it queries again', async () => {
    const cache = new Cache<string>(250, () => 1_000);
    const slow = held('before the change');
    const first = cache.recent('alice', slow.query);
    cache.forget('bob');
    const query = counted({ value: 'after the change' });
    const second = cache.recent('alice', query);
    slow.release();
    expect(await first).toBe('before the change');
    expect(await second).toBe('after the change');
    expect(query).toHaveBeenCalledTimes(1);
  });

  it('when no change feed is followed, then current() queries every time', async () => {
    const cache = new Cache<string>(250, () => 1_000);
    const query = counted({ value: 'v' });
    await cache.current('alice', query);
    await cache.current('alice', query);
    expect(query).toHaveBeenCalledTimes(2);
    expect(cache.isFollowing).toBe(false);
  });

  it('when a feed is followed, then current() uses a remembered answer only once the fence has passed', async () => {
    const cache = new Cache<string>(250, () => 1_000);
    let passed = false;
    cache.follow(async () => passed);
    expect(cache.isFollowing).toBe(true);
    const query = counted({ value: 'v' });
    await cache.current('alice', query);
    await cache.current('alice', query);
    expect(query).toHaveBeenCalledTimes(2);
    passed = true;
    await cache.current('alice', query);
    expect(query).toHaveBeenCalledTimes(2);
  });

  it('when a fence was sent earlier (startFence), then current() waits for that one and sends none of its own', async () => {
    const cache = new Cache<string>(250, () => 1_000);
    let release!: (passed: boolean) => void;
    const fence = jest.fn(() => new Promise<boolean>((resolve) => (release = resolve)));
    cache.follow(fence);
    const early = cache.startFence();
    expect(fence).toHaveBeenCalledTimes(1);
    const query = counted({ value: 'v' });
    await cache.read('alice', query);
    let answered = false;
    const reading = cache.current('alice', query, early).then((v) => ((answered = true), v));
    await new Promise((resolve) => setImmediate(resolve));
    // Held by the fence sent before: not answered from memory, not read afresh, no second fence.
    expect(answered).toBe(false);
    expect(fence).toHaveBeenCalledTimes(1);
    release(true);
    expect(await reading).toBe('v');
    expect(query).toHaveBeenCalledTimes(1);
    expect(fence).toHaveBeenCalledTimes(1);
  });

  it('when no feed is followed, then startFence() sends nothing and current() reads afresh', async () => {
    const cache = new Cache<string>(250, () => 1_000);
    expect(cache.startFence()).toBeUndefined();
    const query = counted({ value: 'v' });
    await cache.current('alice', query, cache.startFence());
    await cache.current('alice', query, cache.startFence());
    expect(query).toHaveBeenCalledTimes(2);
  });

  it('when it starts or stops following a feed, or forgets, then remembered answers are gone', async () => {
    const cache = new Cache<{ user: string } | null>(250, () => 1_000);
    const query = counted<{ user: string } | null>({ value: { user: 'alice' } });
    const refill = async () => {
      await cache.read('k1', query);
      await cache.read('k2', async () => ({ user: 'bob' }));
      await cache.read('k3', async () => null);
    };
    const queriesFor = async (key: string) => {
      const before = query.mock.calls.length;
      await cache.recent(key, query);
      return query.mock.calls.length - before;
    };
    await refill();
    cache.follow(async () => true);
    expect(await queriesFor('k1')).toBe(1);
    await refill();
    cache.follow();
    expect(cache.isFollowing).toBe(false);
    expect(await queriesFor('k2')).toBe(1);
    await refill();
    cache.forget('k1');
    expect([await queriesFor('k1'), await queriesFor('k2')]).toEqual([1, 0]);
    await refill();
    cache.forgetWhere((v) => v?.user === 'bob');
    expect([await queriesFor('k1'), await queriesFor('k2'), await queriesFor('k3')]).toEqual([0, 1, 0]);
  });

  it('when maxAgeMs is 0, then nothing is remembered', async () => {
    const cache = new Cache<string>(0, () => 1_000);
    cache.follow(async () => true);
    const query = counted({ value: 'v' });
    await cache.current('alice', query);
    await cache.recent('alice', query);
    expect(query).toHaveBeenCalledTimes(2);
  });
});
