import { hashPassword, parsePasswordHash, passwordScheme, verifyPassword } from '../src';
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
    ['bcrypt cut short', bcrypt.slice(0, -1)],
    ['bcrypt with a character outside its alphabet', `${bcrypt.slice(0, -1)}+`],
    ['pbkdf2-sha512 without rounds', pbkdf2.replace('$25000$', '$$')],
    ['pbkdf2-sha512 with zero rounds', pbkdf2.replace('$25000$', '$0$')],
    ['pbkdf2-sha512 with too many rounds', pbkdf2.replace('$25000$', '$99999999$')],
    ['pbkdf2-sha512 with a short checksum', pbkdf2.slice(0, -2)],
    ['pbkdf2-sha256 (not accepted)', pbkdf2.replace('sha512', 'sha256')],
    ['passlib scrypt with a short checksum', scrypt.slice(0, -1)],
    ['passlib scrypt asking for 1 GiB', scrypt.replace('ln=16', 'ln=20')],
    ['passlib scrypt with p=0', scrypt.replace('p=1', 'p=0')],
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
