import { LoginService, type LoginCredential, type LoginLimits } from '../src/credentials/logins';
import type { UserDirectory, UserRecord } from '../src/credentials/users';
import type { PasswordVerifier } from '../src/credentials/verifier';
import { MemoryTokenStore } from '../src/tokens/memory-store';

/**
 * The failure counts a login reads before its password is checked, shared by the logins on the
 * same counters that arrive while a read of them is out (LoginService). The store is the
 * in-process one the embedded gateway runs on; only the moment its reads are answered is held.
 */
const user: UserRecord = {
  id: '7',
  username: 'carol',
  passwordHash: 'unused',
  enabled: true,
  isSuperuser: false,
  generation: '1',
};
const LIMITS: LoginLimits = {
  limit: 2,
  windowMs: 60_000,
  addressLimit: 100,
  addressWindowMs: 60_000,
  userLimit: 100,
  userWindowMs: 60_000,
  knownAddressMs: 60_000,
};
const ADDRESS = '192.0.2.10';

/** A password check that ends when the test says, with the answer it says. */
function heldCheck(right: boolean, remembered = false) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let checks = 0;
  const credential: LoginCredential = {
    subject: 'carol',
    find: () => Promise.resolve(user),
    remembers: () => remembered,
    check: async () => {
      checks++;
      await released;
      return right;
    },
  };
  return { credential, release, checks: () => checks };
}

/** The store's reads of counts, counted, each answered only once `answerReads()` is called. */
function heldReads(store: MemoryTokenStore) {
  const read = store.failures.bind(store);
  let open!: () => void;
  let gate = new Promise<void>((resolve) => (open = resolve));
  let reads = 0;
  store.failures = (groups) => {
    reads++;
    // Read when asked, answered when let through: what a round trip to Redis looks like.
    const counts = read(groups);
    return gate.then(() => counts);
  };
  return {
    reads: () => reads,
    answerReads: () => {
      open();
      gate = new Promise<void>((resolve) => (open = resolve));
    },
  };
}

const service = (store: MemoryTokenStore) =>
  new LoginService({} as UserDirectory, {} as PasswordVerifier, store, LIMITS);
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('the failure counts read before a password check', () => {
  it('when logins of one name from one address arrive while a read is out, then that one read serves them all, and a login after its answer reads again', async () => {
    const store = new MemoryTokenStore();
    const held = heldReads(store);
    const logins = service(store);
    const client = heldCheck(true, true);
    client.release();
    const together = Array.from({ length: 8 }, () => logins.loginWith(client.credential, ADDRESS));
    await tick();
    expect(held.reads()).toBe(1);
    held.answerReads();
    expect((await Promise.all(together)).map((r) => r.ok)).toEqual(Array(8).fill(true));

    const after = logins.loginWith(client.credential, ADDRESS);
    await tick();
    expect(held.reads()).toBe(2);
    held.answerReads();
    expect((await after).ok).toBe(true);
    // Another address has counters of its own: a read of its own.
    const elsewhere = logins.loginWith(client.credential, '192.0.2.11');
    await tick();
    expect(held.reads()).toBe(3);
    held.answerReads();
    await elsewhere;
  });

  it('when a guess ends while a shared read is out, then a login that joins the read after counts it, and no more guesses are checked than the limit allows', async () => {
    const store = new MemoryTokenStore();
    const held = heldReads(store);
    const logins = service(store);
    // The first guess: its count read and answered, its check running.
    const first = heldCheck(false);
    const firstResult = logins.loginWith(first.credential, ADDRESS);
    await tick();
    held.answerReads();
    await tick();
    expect(first.checks()).toBe(1);

    // A second guess sends a read; the first guess ends (its failure counted) while that read is out;
    // a third guess arrives after that and joins the read, which answers with the count before.
    const second = heldCheck(false);
    const secondResult = logins.loginWith(second.credential, ADDRESS);
    await tick();
    expect(held.reads()).toBe(2);
    first.release();
    expect(await firstResult).toEqual({ ok: false, reason: 'invalid' });
    const third = heldCheck(false);
    const thirdResult = logins.loginWith(third.credential, ADDRESS);
    await tick();
    expect(held.reads()).toBe(2);
    held.answerReads();
    await tick();
    // The second is checked (none counted, the first ended meanwhile: 1 < 2); the third, counting the first as ended
    // meanwhile and the second in flight, waits for the second instead of being checked beside it.
    expect([second.checks(), third.checks()]).toEqual([1, 0]);
    second.release();
    third.release();
    expect(await secondResult).toEqual({ ok: false, reason: 'invalid' });
    // It reads again once the second has ended, with a read of its own, and finds the limit reached.
    await tick();
    held.answerReads();
    expect(await thirdResult).toMatchObject({ ok: false, reason: 'limited' });
    expect(third.checks()).toBe(0);
  });
});
