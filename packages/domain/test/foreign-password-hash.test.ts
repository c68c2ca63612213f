import { pbkdf2Sync, scrypt, scryptSync } from 'node:crypto';
import bcryptjs from 'bcryptjs';
import fc from 'fast-check';
import {
  BCRYPT_MAX_COST,
  boundedScrypt,
  hashPassword,
  parsePasswordHash,
  passwordHashCostProblem,
  passwordScheme,
  PBKDF2_MAX_ROUNDS,
  SCRYPT_MAX_MEMORY,
  SCRYPT_MAX_WORK,
  scryptOptions,
  scryptParamsProblem,
  userCreateSchema,
  verifyPassword,
} from '../src';
import { PASSLIB_MISSING, PASSLIB_PYTHON, passlibHashes } from '../../../test-e2e/support/passlib';

const PASSWORD = 'correct horse battery staple';
/** Keystone hashes the password's UTF-8 bytes as they are. */
const UNICODE = 'pässwörd ünïcødé 🔑 — long enough';

const withPasslib = PASSLIB_PYTHON ? describe : describe.skip;
if (!PASSLIB_PYTHON) console.warn(PASSLIB_MISSING);

withPasslib('hashes made by passlib', () => {
  let made: Record<string, string>;
  beforeAll(() => {
    const wanted = {
      bcrypt2b: { scheme: 'bcrypt', password: PASSWORD, settings: { rounds: 4 } },
      bcrypt2a: { scheme: 'bcrypt', password: PASSWORD, settings: { rounds: 4, ident: '2a' } },
      bcrypt2y: { scheme: 'bcrypt', password: PASSWORD, settings: { rounds: 4, ident: '2y' } },
      bcryptKeystone: { scheme: 'bcrypt', password: UNICODE },
      pbkdf2: { scheme: 'pbkdf2_sha512', password: PASSWORD },
      pbkdf2Unicode: { scheme: 'pbkdf2_sha512', password: UNICODE, settings: { rounds: 1000 } },
      scrypt: { scheme: 'scrypt', password: PASSWORD },
      scryptUnicode: { scheme: 'scrypt', password: UNICODE, settings: { rounds: 10 } },
    } as const;
    const hashes = passlibHashes(Object.values(wanted));
    made = Object.fromEntries(Object.keys(wanted).map((k, i) => [k, hashes[i]!]));
  });

  it.each([
    ['bcrypt2b', 'bcrypt'],
    ['bcrypt2a', 'bcrypt'],
    ['bcrypt2y', 'bcrypt'],
    ['bcryptKeystone', 'bcrypt'],
    ['pbkdf2', 'pbkdf2-sha512'],
    ['scrypt', 'passlib-scrypt'],
  ])(
    'when passlib made a %s hash, then it is recognised as %s, verifies the password and refuses others',
    async (name, scheme) => {
      const stored = made[name]!;
      expect(passwordScheme(stored)).toBe(scheme);
      const password = name === 'bcryptKeystone' ? UNICODE : PASSWORD;
      await expect(verifyPassword(password, stored)).resolves.toBe(true);
      await expect(verifyPassword(`${password}x`, stored)).resolves.toBe(false);
      await expect(verifyPassword('', stored)).resolves.toBe(false);
    },
  );

  it('when the password holds non-ASCII characters, then pbkdf2-sha512 and passlib scrypt verify its UTF-8 bytes', async () => {
    await expect(verifyPassword(UNICODE, made.pbkdf2Unicode!)).resolves.toBe(true);
    await expect(verifyPassword(UNICODE, made.scryptUnicode!)).resolves.toBe(true);
    await expect(verifyPassword(UNICODE.normalize('NFD'), made.scryptUnicode!)).resolves.toBe(false);
  });

  it("when passlib's $scrypt$ and Cairn's $scrypt$ are parsed, then each is read as its own format only", async () => {
    const passlib = made.scrypt!;
    const cairn = await hashPassword(PASSWORD, { logN: 10, r: 8, p: 1 });
    expect(parsePasswordHash(passlib)).toBeNull();
    expect(passwordScheme(passlib)).toBe('passlib-scrypt');
    expect(passwordScheme(cairn)).toBe('scrypt');
    await expect(verifyPassword(PASSWORD, cairn)).resolves.toBe(true);
  });
});

describe('malformed or unaccepted hashes', () => {
  const bcrypt = '$2b$04$mg6ee4TepYJKmiGWRMGL4OUSck7Clc7z5WSRrx66rXpvWi3mRu3/S';
  const pbkdf2 =
    '$pbkdf2-sha512$25000$f08pJWRMidE6R2jtPafUWg$etF1jpysf6F5uScQV1dFw8ez6h2fVT4djlty8r9VDwlwVoDn9YuRsq2p3k5hzMttxqrkUk9Z8TmrcN21oJ5HFQ';
  const scrypt = '$scrypt$ln=16,r=8,p=1$QKiVknKOcc5ZC6H0fs9Zaw$IX0ITKeHpM4OK8sq6yjN7hbyZCq62S3/jy/05ZQ7Et4';

  it('when the well-formed samples are read, then each has its scheme', () => {
    expect(passwordScheme(bcrypt)).toBe('bcrypt');
    expect(passwordScheme(pbkdf2)).toBe('pbkdf2-sha512');
    expect(passwordScheme(scrypt)).toBe('passlib-scrypt');
  });

  it.each([
    ['an empty string', ''],
    ['plain text', 'correct horse battery staple'],
    ['an unknown bcrypt variant ($2x$)', bcrypt.replace('$2b$', '$2x$')],
    ['bcrypt with a cost below 4', bcrypt.replace('$04$', '$03$')],
    ['bcrypt with a cost that would stall the gateway', bcrypt.replace('$04$', '$20$')],
    ['bcrypt with a cost past the bound (14)', bcrypt.replace('$04$', '$14$')],
    ['bcrypt cut short', bcrypt.slice(0, -1)],
    ['bcrypt with a character outside its alphabet', `${bcrypt.slice(0, -1)}+`],
    ['pbkdf2-sha512 without rounds', pbkdf2.replace('$25000$', '$$')],
    ['pbkdf2-sha512 with zero rounds', pbkdf2.replace('$25000$', '$0$')],
    ['pbkdf2-sha512 with too many rounds', pbkdf2.replace('$25000$', '$99999999$')],
    ['pbkdf2-sha512 with rounds just past the bound', pbkdf2.replace('$25000$', '$1572865$')],
    ['pbkdf2-sha512 with a short checksum', pbkdf2.slice(0, -2)],
    ['pbkdf2-sha256 (not accepted)', pbkdf2.replace('sha512', 'sha256')],
    ['passlib scrypt with a short checksum', scrypt.slice(0, -1)],
    ['passlib scrypt asking for 1 GiB', scrypt.replace('ln=16', 'ln=20')],
    ['passlib scrypt with p=0', scrypt.replace('p=1', 'p=0')],
    ['passlib scrypt asking for 256 MiB and 16 lanes', scrypt.replace('ln=16,r=8,p=1', 'ln=17,r=16,p=16')],
    [
      'passlib scrypt that crypto.scrypt refuses (N not below 2^(16·r))',
      scrypt.replace('ln=16,r=8,p=1', 'ln=21,r=1,p=16'),
    ],
    ["passlib scrypt with 8 times the work of Cairn's", scrypt.replace('ln=16,r=8,p=1', 'ln=15,r=8,p=24')],
    [
      "Cairn's scrypt with r and p past the bound",
      '$scrypt$ln=22,r=99,p=99$c2FsdHNhbHRzYWx0c2FsdA==$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U=',
    ],
    [
      'scrypt with padded salt but an unpadded key',
      scrypt.replace('$QKiVknKOcc5ZC6H0fs9Zaw$', '$QKiVknKOcc5ZC6H0fs9Zaw==$'),
    ],
    ['a hash with a trailing newline', `${bcrypt}\n`],
  ])('when the hash is %s, then it has no scheme and never verifies', async (_what, stored) => {
    expect(passwordScheme(stored)).toBeNull();
    await expect(verifyPassword('correct horse battery staple', stored)).resolves.toBe(false);
  });
});

describe('the cost bound', () => {
  const PW = 'correct horse battery staple';
  const b64 = (b: Buffer) => b.toString('base64');
  const salt = Buffer.from('sixteen byte slt');
  /** A real scrypt hash of PW in both $scrypt$ spellings: passlib's (unpadded) and Cairn's (padded). */
  const scryptHashes = (logN: number, r: number, p: number) => {
    const key = scryptSync(PW, salt, 32, { N: 2 ** logN, r, p, maxmem: 2 ** 30 });
    const at = `$scrypt$ln=${logN},r=${r},p=${p}$`;
    return [`${at}${b64(salt).replace(/=+$/, '')}$${b64(key).replace(/=+$/, '')}`, `${at}${b64(salt)}$${b64(key)}`];
  };

  it("when the bound is derived, then it is 4 times Cairn's own scrypt check, in work and in memory", () => {
    expect(SCRYPT_MAX_WORK).toBe(4 * 2 ** 15 * 8 * 3);
    expect(SCRYPT_MAX_MEMORY).toBe(4 * 128 * 2 ** 15 * 8);
    expect(BCRYPT_MAX_COST).toBe(13);
    expect(PBKDF2_MAX_ROUNDS).toBe(1_572_864);
    expect(scryptParamsProblem({ logN: 15, r: 8, p: 3 })).toBeNull();
    // passlib's defaults, Keystone's bcrypt and passlib's pbkdf2 are well within it.
    expect(scryptParamsProblem({ logN: 16, r: 8, p: 1 })).toBeNull();
  });

  it.each([
    ['memory past the bound (ln=18,r=8,p=1: 256 MiB)', 18, 8, 1],
    ['work past the bound (ln=14,r=8,p=25)', 14, 8, 25],
  ])(
    'when a scrypt hash of the right password asks for %s, then it never verifies, in either spelling',
    async (_what, logN, r, p) => {
      const [passlib, cairn] = scryptHashes(logN, r, p) as [string, string];
      for (const stored of [passlib, cairn]) {
        expect(passwordScheme(stored)).toBeNull();
        expect(passwordHashCostProblem(stored)).toMatch(/at most/);
        await expect(verifyPassword(PW, stored)).resolves.toBe(false);
      }
      // The same hashes within the bound do verify: only the cost refuses them.
      const [cheapPasslib, cheapCairn] = scryptHashes(10, 8, 1) as [string, string];
      await expect(verifyPassword(PW, cheapPasslib)).resolves.toBe(true);
      await expect(verifyPassword(PW, cheapCairn)).resolves.toBe(true);
    },
  );

  it('when a bcrypt or pbkdf2-sha512 hash of the right password is past the bound, then it never verifies', async () => {
    const bcrypt14 = bcryptjs.hashSync(PW, BCRYPT_MAX_COST + 1);
    const rounds = PBKDF2_MAX_ROUNDS + 1;
    const ab64 = (b: Buffer) => b64(b).replace(/=+$/, '').replace(/\+/g, '.');
    const pbkdf2 = `$pbkdf2-sha512$${rounds}$${ab64(salt)}$${ab64(pbkdf2Sync(PW, salt, rounds, 64, 'sha512'))}`;
    for (const stored of [bcrypt14, pbkdf2]) {
      expect(passwordScheme(stored)).toBeNull();
      await expect(verifyPassword(PW, stored)).resolves.toBe(false);
    }
    expect(passwordHashCostProblem(bcrypt14)).toBe(
      "bcrypt's cost must be 4 to 13 (at most 4 times the work of Cairn's own hash), not 14",
    );
    expect(passwordHashCostProblem(pbkdf2)).toBe(
      "pbkdf2-sha512 must have at most 1,572,864 rounds (at most 4 times the work of Cairn's own hash), not 1,572,865",
    );
  });

  it('when an import gives a hash past the bound, then the 400 sentence names the limit', () => {
    const refusal = (hash: string) =>
      userCreateSchema.validate({ cluster: 1, user: 'imported', password_hash: hash }).error?.message;
    const base = '$scrypt$ln=16,r=8,p=1$QKiVknKOcc5ZC6H0fs9Zaw$IX0ITKeHpM4OK8sq6yjN7hbyZCq62S3/jy/05ZQ7Et4';
    expect(refusal(base)).toBeUndefined();
    expect(refusal(base.replace('ln=16,r=8,p=1', 'ln=17,r=16,p=16'))).toBe(
      'The "password_hash" field holds a hash Cairn will not check: scrypt\'s memory (128·N·r bytes) must be at most 128 MiB, 4 times what Cairn\'s own hash needs; ln=17,r=16,p=16 needs 256 MiB.',
    );
    expect(refusal(base.replace('ln=16,r=8,p=1', 'ln=21,r=1,p=16'))).toBe(
      'The "password_hash" field holds a hash Cairn will not check: scrypt cannot run with ln=21,r=1,p=16: N = 2^ln must be below 2^(16·r), so ln at most 15 for r=1.',
    );
    expect(refusal(base.replace('ln=16,r=8,p=1', 'ln=13,r=8,p=97'))).toBe(
      'The "password_hash" field holds a hash Cairn will not check: scrypt\'s work (N·r·p) must be at most 3,145,728, 4 times that of Cairn\'s own hash; ln=13,r=8,p=97 makes 6,356,992.',
    );
  });

  it("when crypto.scrypt is given any parameters' scryptOptions, then it refuses exactly those scryptParamsProblem says cannot run, and runs those within the bound", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 40 }),
        async (logN, r, p) => {
          const params = { logN, r, p };
          const problem = scryptParamsProblem(params);
          // crypto.scrypt throws at once for parameters it refuses, before any work.
          const start = (done: (e: Error | null, key: Buffer) => void) =>
            scrypt('pw', salt, 32, scryptOptions(params), done);
          const run = () => new Promise<Buffer>((resolve, reject) => start((e, key) => (e ? reject(e) : resolve(key))));
          if (problem?.startsWith('scrypt cannot run')) {
            expect(() => start(() => {})).toThrow(/Invalid scrypt params|out of range/);
          } else if (problem !== null) {
            // Past the bound: never run, refused before crypto.scrypt.
            await expect(boundedScrypt('pw', salt, params, 32)).rejects.toThrow(RangeError);
          } else if (2 ** logN * r * p <= 2 ** 16) {
            await expect(run()).resolves.toHaveLength(32);
            await expect(boundedScrypt('pw', salt, params, 32)).resolves.toHaveLength(32);
          } else {
            // Within the bound but too slow to run many times here: crypto.scrypt accepts them at once.
            expect(scryptOptions(params).maxmem).toBeLessThanOrEqual(SCRYPT_MAX_MEMORY + 128 * r * (p + 2));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
