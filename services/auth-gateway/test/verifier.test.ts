import { hashPassword, passwordScheme, verifyPassword } from '@cairn/domain';
import { PasswordVerifier } from '../src/credentials/verifier';
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
      expect(foreign).toBeGreaterThan(unknown * 0.5);
    });
  });
});
