import { randomBytes } from 'node:crypto';
import { closeRedis, type RedisClient } from '../src/redis';
import { MemoryTokenStore } from '../src/tokens/memory-store';
import { RedisTokenStore } from '../src/tokens/redis-store';
import type { TokenRecord, TokenStore } from '../src/tokens/store';
import { testRedis } from './support/redis';

const DAY = 86_400_000;

const recordOf = (userId: string, issuedAtMs = Date.now(), ttlMs = DAY): TokenRecord => ({
  user: `user-${userId}`,
  userId,
  project: `user-${userId}`,
  roles: ['swiftoperator'],
  methods: ['password'],
  userDomain: 'default',
  projectDomain: 'default',
  issuedAt: new Date(issuedAtMs).toISOString(),
  expiresAt: new Date(issuedAtMs + ttlMs).toISOString(),
  generation: '1',
  auditId: 'audit',
  listed: true,
});

/** The per-user list and cap, the same on the real Redis and on the in-process store. */
describe.each(['redis', 'memory'] as const)('the token store (%s): each user’s listed tokens', (kind) => {
  let redis: RedisClient | undefined;
  let store: TokenStore;
  let prefix: string;

  beforeAll(() => {
    if (kind === 'redis') redis = testRedis();
  });
  beforeEach(() => {
    prefix = `cairn:test-store-${randomBytes(6).toString('hex')}:`;
    store = redis ? new RedisTokenStore(redis, prefix) : new MemoryTokenStore();
  });
  afterEach(async () => {
    if (!redis) return;
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
  });
  afterAll(async () => {
    if (redis) await closeRedis(redis);
  });

  const ids = (n: number) => Array.from({ length: n }, () => randomBytes(16).toString('base64url'));
  const readable = async (list: string[]) =>
    (await Promise.all(list.map((id) => store.get(id)))).map((r) => r !== null);
  const listed = async (userId: string, list: string[]) => Promise.all(list.map((id) => store.isListed(userId, id)));

  it('when more tokens than the cap are added one by one, then the oldest are pushed out: neither listed nor stored', async () => {
    const tokens = ids(8);
    const pushed: string[] = [];
    for (const [i, id] of tokens.entries())
      pushed.push(...(await store.add(id, recordOf('7', Date.now() + i), DAY, 5)));
    expect(pushed).toEqual(tokens.slice(0, 3));
    expect(await listed('7', tokens)).toEqual([false, false, false, true, true, true, true, true]);
    expect(await readable(tokens)).toEqual([false, false, false, true, true, true, true, true]);
  });

  it('when 64 tokens of one user are added at once with a cap of 5, then exactly 5 stay listed and stored, and one user’s cap leaves another user alone', async () => {
    const other = ids(3);
    for (const id of other) await store.add(id, recordOf('8'), DAY, 5);
    const tokens = ids(64);
    const pushed = (await Promise.all(tokens.map((id) => store.add(id, recordOf('9'), DAY, 5)))).flat();
    expect(pushed).toHaveLength(59);
    expect(new Set(pushed).size).toBe(59);
    expect((await listed('9', tokens)).filter(Boolean)).toHaveLength(5);
    expect((await readable(tokens)).filter(Boolean)).toHaveLength(5);
    expect(await listed('8', other)).toEqual([true, true, true]);
    if (redis) {
      expect(await redis.zcard(`${prefix}user-tokens:9`)).toBe(5);
      expect(await redis.pttl(`${prefix}user-tokens:9`)).toBeGreaterThan(DAY - 60_000);
    }
  });

  it('when tokens issued in the same millisecond are added beyond the cap, then the one just added is never the one pushed out', async () => {
    const record = recordOf('12');
    for (const id of ids(30)) {
      const pushed = await store.add(id, record, DAY, 1);
      expect(pushed).not.toContain(id);
      expect(await store.isListed('12', id)).toBe(true);
    }
  });

  it('when a token is deleted, then it leaves its user’s list and frees its place', async () => {
    const [a, b, c] = ids(3) as [string, string, string];
    await store.add(a, recordOf('10'), DAY, 2);
    await store.add(b, recordOf('10'), DAY, 2);
    expect(await store.delete(a)).toBe(true);
    expect(await store.delete(a)).toBe(false);
    expect(await listed('10', [a, b])).toEqual([false, true]);
    expect(await store.add(c, recordOf('10'), DAY, 2)).toEqual([]);
    expect(await listed('10', [b, c])).toEqual([true, true]);
  });

  it('when counters are read together, then each has its own count and window, and one never counted reads 0', async () => {
    const tag = `{${randomBytes(6).toString('hex')}}`;
    for (let i = 0; i < 3; i++) await store.recordFailure(`${tag}:a`, 60_000);
    await store.recordFailure(`${tag}:b`, 5_000);
    expect(await store.failures([[`${tag}:a`, `${tag}:b`], [`${tag}:never`]])).toEqual([[3, 1], [0]]);
    expect(await store.failures([[`${tag}:never`, `${tag}:b`]])).toEqual([[0, 1]]);
    const [a, b, never] = await Promise.all(
      [`${tag}:a`, `${tag}:b`, `${tag}:never`].map((key) => store.failureWindowLeft(key)),
    );
    expect(a).toBeGreaterThan(50_000);
    expect(a).toBeLessThanOrEqual(60_000);
    expect(b).toBeGreaterThan(0);
    expect(b).toBeLessThanOrEqual(5_000);
    expect(never).toBe(0);
    await store.clearFailures(`${tag}:a`);
    expect(await store.failures([[`${tag}:a`]])).toEqual([[0]]);
    expect(await store.failureWindowLeft(`${tag}:a`)).toBe(0);
  });

  it('when tokens have expired, then they leave the list without counting against the cap', async () => {
    const [a, b, c] = ids(3) as [string, string, string];
    await store.add(a, recordOf('11', Date.now(), 40), 40, 2);
    await store.add(b, recordOf('11', Date.now(), 40), 40, 2);
    await new Promise((r) => setTimeout(r, 80));
    expect(await store.add(c, recordOf('11'), DAY, 2)).toEqual([]);
    expect(await listed('11', [a, b, c])).toEqual([false, false, true]);
  });
});

describe('the in-process token store under many entries', () => {
  it('when 500,000 tokens are written, then the last writes take about as long as the first', () => {
    const store = new MemoryTokenStore();
    const record = recordOf('1');
    const BATCH = 10_000;
    const batches: number[] = [];
    let n = 0;
    for (let b = 0; b < 50; b++) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < BATCH; i++) void store.add(`t${n++}`, { ...record, userId: String(n) }, DAY, 1000);
      batches.push(Number(process.hrtime.bigint() - started) / 1e6 / BATCH);
      // A scan of every entry per write would take this batch a hundred times longer: stop early.
      if (b > 1) expect(batches.at(-1)!).toBeLessThan(Math.max(0.05, 20 * batches[1]!));
    }
    expect(store.size).toBe(500_000);
    // Batch 0 warms the JIT. A busy machine (or a major GC of the grown heap) only ever adds time
    // to a batch, so the fastest of five is the cost of the writes themselves. A scan of every
    // entry would make each of the last batches ~14 times the first ones (10-60 k entries against
    // 450-500 k); the expiry heap's log n and a Map too big for the CPU's caches leave them within
    // ~1-3 times, by machine and load.
    const fastest = (xs: number[]) => Math.min(...xs);
    const early = fastest(batches.slice(1, 6));
    const late = fastest(batches.slice(-5));
    process.stdout.write(`ms per write: first ${early.toFixed(4)}, last ${late.toFixed(4)} (500,000 entries)\n`);
    expect(late).toBeLessThan(early * 5);
  }, 120_000);
});
