import { scryptSync } from 'node:crypto';
import bcryptjs from 'bcryptjs';
import { hashPassword, passwordScheme, verifyPassword } from '@cairn/domain';
import { BcryptWorker } from '../src/credentials/bcrypt-worker';
import { ForeignCheckQueue, PasswordVerifier, type Warn } from '../src/credentials/verifier';
import type { UserRecord } from '../src/credentials/users';

const PARAMS = { logN: 10, r: 8, p: 1 };

describe('PasswordVerifier', () => {
  let alice: UserRecord;
  beforeAll(async () => {
    alice = {
      id: '1',
      username: 'alice',
      passwordHash: await hashPassword('right-password-right-pw', PARAMS),
      enabled: true,
      isSuperuser: false,
      generation: '1',
    };
  });

  it('when many identical checks run at once, then each gets the right answer', async () => {
    const verifier = new PasswordVerifier(60);
    const right = await Promise.all(
      Array.from({ length: 8 }, () => verifier.check('alice', alice, 'right-password-right-pw')),
    );
    const wrong = await Promise.all(
      Array.from({ length: 8 }, () => verifier.check('alice', alice, 'wrong-password-wrong-pw')),
    );
    const unknown = await Promise.all(
      Array.from({ length: 8 }, () => verifier.check('nobody', null, 'right-password-right-pw')),
    );
    expect(right).toEqual(Array(8).fill(true));
    expect(wrong).toEqual(Array(8).fill(false));
    expect(unknown).toEqual(Array(8).fill(false));
  });

  it('when asked whether it remembers a password, then only one it verified as right, still within its time, for the same enabled credential', async () => {
    let now = 1_000;
    const verifier = new PasswordVerifier(60, () => now);
    expect(verifier.remembers('alice', alice, 'right-password-right-pw')).toBe(false);
    expect(await verifier.check('alice', alice, 'wrong-password-wrong-pw')).toBe(false);
    expect(verifier.remembers('alice', alice, 'wrong-password-wrong-pw')).toBe(false);
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
    expect(verifier.remembers('alice', alice, 'right-password-right-pw')).toBe(true);
    expect(verifier.remembers('alice', { ...alice, enabled: false }, 'right-password-right-pw')).toBe(false);
    expect(verifier.remembers('alice', { ...alice, generation: '2' }, 'right-password-right-pw')).toBe(false);
    expect(verifier.remembers('alice', null, 'right-password-right-pw')).toBe(false);
    now += 61_000;
    expect(verifier.remembers('alice', alice, 'right-password-right-pw')).toBe(false);
  });

  it('when the user is disabled, then even the right password fails, also after a cached success', async () => {
    const verifier = new PasswordVerifier(60);
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
    expect(await verifier.check('alice', { ...alice, enabled: false }, 'right-password-right-pw')).toBe(false);
  });

  it('when the generation changes, then a remembered success no longer applies', async () => {
    let now = 1_000;
    const verifier = new PasswordVerifier(60, () => now);
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
    const changed = {
      ...alice,
      generation: '2',
      passwordHash: await hashPassword('a-new-password-of-20-chars', PARAMS),
    };
    expect(await verifier.check('alice', changed, 'right-password-right-pw')).toBe(false);
    now += 61_000;
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
  });

  it('when a user is deleted and re-created with the same name and generation but another password, then the old password is refused at once', async () => {
    const verifier = new PasswordVerifier(60);
    expect(await verifier.check('alice', alice, 'right-password-right-pw')).toBe(true);
    // A new row (new id) with generation 1 again and a new hash: nothing of the old one may match.
    const recreated = { ...alice, id: '2', passwordHash: await hashPassword('a-new-password-of-20-chars', PARAMS) };
    expect(await verifier.check('alice', recreated, 'right-password-right-pw')).toBe(false);
    expect(await verifier.check('alice', recreated, 'a-new-password-of-20-chars')).toBe(true);
  });

  it.each([
    ['a new row id with the same hash', { id: '2' }, false],
    ['a new hash (new salt) on the same row id', {}, true],
  ])(
    'when only the credential changes (%s), then a remembered success does not apply: the check runs again',
    async (_, change: Partial<UserRecord>, rehash: boolean) => {
      // Same password, new salt: the check must run again (and pass), not be taken from memory.
      const rehashed = rehash ? { passwordHash: await hashPassword('right-password-right-pw', PARAMS) } : {};
      const runs: number[] = [];
      const counting = new PasswordVerifier(60, Date.now, (s) => runs.push(s));
      expect(await counting.check('alice', alice, 'right-password-right-pw')).toBe(true);
      expect(await counting.check('alice', alice, 'right-password-right-pw')).toBe(true);
      expect(runs).toHaveLength(1);
      expect(await counting.check('alice', { ...alice, ...change, ...rehashed }, 'right-password-right-pw')).toBe(true);
      expect(runs).toHaveLength(2);
    },
  );

  describe('imported users', () => {
    /** Made by passlib 1.7.4 for the password 'pw'. */
    const FOREIGN = {
      bcrypt: '$2y$04$mg6ee4TepYJKmiGWRMGL4OUSck7Clc7z5WSRrx66rXpvWi3mRu3/S',
      pbkdf2:
        '$pbkdf2-sha512$25000$f08pJWRMidE6R2jtPafUWg$etF1jpysf6F5uScQV1dFw8ez6h2fVT4djlty8r9VDwlwVoDn9YuRsq2p3k5hzMttxqrkUk9Z8TmrcN21oJ5HFQ',
      scrypt: '$scrypt$ln=16,r=8,p=1$QKiVknKOcc5ZC6H0fs9Zaw$IX0ITKeHpM4OK8sq6yjN7hbyZCq62S3/jy/05ZQ7Et4',
    };
    const imported = (hash: string): UserRecord => ({
      id: '7',
      username: 'imported',
      passwordHash: hash,
      enabled: true,
      isSuperuser: false,
      generation: '3',
    });

    it.each(Object.entries(FOREIGN))(
      'when the right password matches a %s hash, then the login succeeds and a Cairn scrypt hash of it is handed over once',
      async (_scheme, hash) => {
        const replaced: Array<[UserRecord, string]> = [];
        const verifier = new PasswordVerifier(
          60,
          Date.now,
          () => {},
          async (user, h) => {
            replaced.push([user, h]);
          },
        );
        const user = imported(hash);
        expect(await verifier.check('imported', user, 'pw')).toBe(true);
        expect(replaced).toHaveLength(1);
        expect(replaced[0]![0]).toBe(user);
        expect(passwordScheme(replaced[0]![1])).toBe('scrypt');
        await expect(verifyPassword('pw', replaced[0]![1])).resolves.toBe(true);
        // Remembered like any success: no second KDF run, no second replacement.
        expect(await verifier.check('imported', user, 'pw')).toBe(true);
        expect(replaced).toHaveLength(1);
      },
    );

    it("when the users' hashes are made with other parameters, then an unknown user is checked against a hash made with them, and an imported hash is replaced by one", async () => {
      const params = { logN: 9, r: 8, p: 2 };
      const runs = { theirs: [] as number[], cairns: [] as number[] };
      const replaced: string[] = [];
      const verifier = new PasswordVerifier(
        60,
        Date.now,
        (seconds) => runs.theirs.push(seconds),
        async (_u, h) => {
          replaced.push(h);
        },
        undefined,
        undefined,
        undefined,
        params,
      );
      const cairns = new PasswordVerifier(60, Date.now, (seconds) => runs.cairns.push(seconds));
      await Promise.all([verifier.warmUp(), cairns.warmUp()]);
      expect(await verifier.check('nobody', null, 'pw')).toBe(false);
      expect(await cairns.check('nobody', null, 'pw')).toBe(false);
      // A check against Cairn's own parameters does 96 times the work (2^6 the memory, 3/2 the lanes):
      // under a tenth leaves room for a loaded machine, and fails if the default's hash was used.
      expect(runs.theirs[0]!).toBeLessThan(runs.cairns[0]! / 10);
      expect(await verifier.check('imported', imported(FOREIGN.bcrypt), 'pw')).toBe(true);
      expect(replaced).toEqual([expect.stringMatching(/^\$scrypt\$ln=9,r=8,p=2\$/)]);
    });

    it('when the password is wrong or the user disabled, then nothing is replaced', async () => {
      const replaced: string[] = [];
      const verifier = new PasswordVerifier(
        60,
        Date.now,
        () => {},
        async (_u, h) => {
          replaced.push(h);
        },
      );
      expect(await verifier.check('imported', imported(FOREIGN.bcrypt), 'wrong')).toBe(false);
      expect(await verifier.check('imported', { ...imported(FOREIGN.bcrypt), enabled: false }, 'pw')).toBe(false);
      expect(replaced).toEqual([]);
    });

    it('when a foreign hash is checked, then it costs at least the scrypt run an unknown user costs', async () => {
      // A pbkdf2-sha512 hash of one round costs nothing: the check still runs scrypt alongside it.
      const cheap =
        '$pbkdf2-sha512$1$' + Buffer.alloc(16, 1).toString('base64').replace(/=+$/, '') + '$' + 'A'.repeat(86);
      expect(passwordScheme(cheap)).toBe('pbkdf2-sha512');
      const runs: number[] = [];
      const verifier = new PasswordVerifier(0, Date.now, (s) => runs.push(s));
      await verifier.warmUp();
      await verifier.check('nobody', null, 'wrong-password');
      await verifier.check('imported', imported(cheap), 'wrong-password');
      const [unknown, foreign] = runs as [number, number];
      // Without the scrypt run the check costs microseconds, a thousandth of the unknown user's:
      // a tenth leaves room for a loaded machine without letting that through.
      expect(foreign).toBeGreaterThan(unknown * 0.1);
    });
  });

  describe('hashes whose check would cost too much, or fail', () => {
    const user = (hash: string): UserRecord => ({
      id: '9',
      username: 'costly',
      passwordHash: hash,
      enabled: true,
      isSuperuser: false,
      generation: '1',
    });
    const warnings = () => {
      const lines: Array<[Record<string, unknown>, string]> = [];
      const warn: Warn = (fields, message) => lines.push([fields, message]);
      return { lines, warn };
    };

    it('when a stored hash of the right password is past the bound, then the login fails without computing it, with a warning naming the limit', async () => {
      // passlib's spelling, 256 MiB (128·N·r): twice the bound; written to the database directly, say.
      const salt = Buffer.from('sixteen byte slt');
      const key = scryptSync('pw', salt, 32, { N: 2 ** 18, r: 8, p: 1, maxmem: 2 ** 30 });
      const strip = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
      const stored = `$scrypt$ln=18,r=8,p=1$${strip(salt)}$${strip(key)}`;
      const { lines, warn } = warnings();
      const runs: number[] = [];
      const verifier = new PasswordVerifier(60, Date.now, (s) => runs.push(s), undefined, warn);
      expect(await verifier.check('costly', user(stored), 'pw')).toBe(false);
      expect(lines).toEqual([
        [
          {
            user: 'costly',
            reason:
              "scrypt's memory (128·N·r bytes) must be at most 128 MiB, 4 times what Cairn's own hash needs; ln=18,r=8,p=1 needs 256 MiB",
          },
          'stored password hash refused without being checked; the login fails',
        ],
      ]);
      // It cost the unknown user's run (the dummy hash), not nothing.
      expect(runs).toHaveLength(1);
    });

    it('when the check itself fails (the bcrypt thread cannot start), then it is a failed login with a one-line warning', async () => {
      const broken = new BcryptWorker('/nonexistent/bcryptjs.js');
      const { lines, warn } = warnings();
      const verifier = new PasswordVerifier(60, Date.now, () => {}, undefined, warn, broken.compare);
      const hash = '$2y$04$mg6ee4TepYJKmiGWRMGL4OUSck7Clc7z5WSRrx66rXpvWi3mRu3/S';
      expect(await verifier.check('costly', user(hash), 'pw')).toBe(false);
      expect(lines).toHaveLength(1);
      const [fields, message] = lines[0]!;
      expect(message).toBe('password check failed with an error; counted as a failed login');
      expect(fields).toMatchObject({ user: 'costly', scheme: 'bcrypt', error: expect.stringMatching(/bcrypt thread/) });
      expect(JSON.stringify(fields)).not.toMatch(/\n\s+at /);
      await broken.close();
    });

    it('when more foreign checks arrive than the queue holds, then they wait one at a time and the ones past it fail', async () => {
      const hash = '$2y$04$mg6ee4TepYJKmiGWRMGL4OUSck7Clc7z5WSRrx66rXpvWi3mRu3/S';
      const { lines, warn } = warnings();
      // One at a time, one waiting: of three right passwords sent together (each its own
      // credential), the third finds the queue full.
      const verifier = new PasswordVerifier(
        0,
        Date.now,
        () => {},
        undefined,
        warn,
        undefined,
        new ForeignCheckQueue(1, 1),
      );
      const answers = await Promise.all([
        verifier.check('costly', user(hash), 'pw'),
        verifier.check('costly', { ...user(hash), id: '10' }, 'pw'),
        verifier.check('costly', { ...user(hash), id: '11' }, 'pw'),
      ]);
      expect(answers).toEqual([true, true, false]);
      expect(lines.map(([f]) => f.error)).toEqual(['1 checks of imported password hashes are already waiting']);
      // Cairn's own hashes never wait there.
      const cairn = await hashPassword('pw', PARAMS);
      expect(await verifier.check('alice', { ...alice, passwordHash: cairn }, 'pw')).toBe(true);
    });

    it('when checks are queued, then no more than its concurrency run at once and each gets its own answer', async () => {
      const queue = new ForeignCheckQueue(2, 10);
      let running = 0;
      let most = 0;
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          queue
            .run(async () => {
              running++;
              most = Math.max(most, running);
              await new Promise((r) => setImmediate(r));
              running--;
              if (i === 3) throw new Error('this one fails');
              return i;
            })
            .catch((e: Error) => e.message),
        ),
      );
      expect(answers).toEqual([0, 1, 2, 'this one fails', 4, 5, 6, 7]);
      expect(most).toBe(2);
      // Past a failure the slots are all free again.
      await expect(Promise.all([queue.run(async () => 'a'), queue.run(async () => 'b')])).resolves.toEqual(['a', 'b']);
    });

    it('when a bcrypt hash is checked on the bcrypt thread, then the event loop keeps turning, as it does not with bcryptjs on the main thread', async () => {
      const hash = bcryptjs.hashSync('pw', 10);
      /** setImmediate turns of the event loop while `check` runs. */
      const turnsDuring = async (check: () => Promise<boolean>) => {
        let turns = 0;
        let done = false;
        const spin = () => {
          turns++;
          if (!done) setImmediate(spin);
        };
        setImmediate(spin);
        const ok = await check();
        done = true;
        expect(ok).toBe(true);
        return turns;
      };
      const worker = new BcryptWorker();
      await worker.compare('warm-up', hash);
      const offThread = await turnsDuring(() => worker.compare('pw', hash));
      const onThread = await turnsDuring(() => bcryptjs.compare('pw', hash));
      await worker.close();
      // bcryptjs's async compare yields every 100 ms: a handful of turns in all.
      expect(onThread).toBeLessThan(50);
      expect(offThread).toBeGreaterThan(1000);
    });
  });
});
