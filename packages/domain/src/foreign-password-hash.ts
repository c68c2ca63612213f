import { pbkdf2, scrypt, timingSafeEqual } from 'node:crypto';
import bcrypt from 'bcryptjs';
import { parsePasswordHash, verifyScryptPassword } from './password-hash';

/**
 * Password hashes of other systems that Cairn accepts on import, so that their users keep their
 * passwords: bcrypt (`$2a$`, `$2b$`, `$2y$`: Keystone's default, through passlib), passlib's
 * `$pbkdf2-sha512$` and passlib's `$scrypt$`. The gateway verifies them at login and then replaces
 * them with Cairn's own scrypt hash (`scrypt`).
 *
 * Cairn's `$scrypt$ln=15,r=8,p=3$<salt>$<key>` and passlib's `$scrypt$ln=16,r=8,p=1$<salt>$<checksum>`
 * share a prefix; they differ in their base64's padding: Cairn's is padded (its 32-byte key is 44
 * characters ending in '='), passlib's ("b64s", passlib/handlers/scrypt.py) is not (its 32-byte
 * checksum is 43 characters), so no string parses as both.
 *
 * Each format's cost is bounded: a hash whose single check would take the gateway seconds (or
 * gigabytes) is refused on import rather than served.
 */
export type PasswordScheme = 'scrypt' | 'bcrypt' | 'pbkdf2-sha512' | 'passlib-scrypt';
export const PASSWORD_SCHEMES: readonly PasswordScheme[] = ['scrypt', 'bcrypt', 'pbkdf2-sha512', 'passlib-scrypt'];

/** bcrypt's cost is log2 of its rounds: 4 is its minimum, 15 takes about 4 s in bcryptjs. */
export const BCRYPT_MAX_COST = 14;
export const PBKDF2_MAX_ROUNDS = 2_000_000;
/** passlib scrypt: at most 256 MiB (128·N·r bytes) and p ≤ 16. */
const PASSLIB_SCRYPT_MAX_MEMORY = 256 * 2 ** 20;

const BCRYPT = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const PBKDF2_SHA512 = /^\$pbkdf2-sha512\$([1-9]\d{0,8})\$([./A-Za-z0-9]*)\$([./A-Za-z0-9]{86})$/;
const PASSLIB_SCRYPT =
  /^\$scrypt\$ln=([1-9]\d?),r=([1-9]\d{0,2}),p=([1-9]\d{0,2})\$([+/A-Za-z0-9]*)\$([+/A-Za-z0-9]{43})$/;

/** passlib's "adapted base64" (pbkdf2): standard base64 with '.' for '+', without padding. */
const ab64 = (text: string): Buffer => Buffer.from(text.replace(/\./g, '+'), 'base64');
/** passlib's "b64s" (scrypt): standard base64 without padding. */
const b64s = (text: string): Buffer => Buffer.from(text, 'base64');

interface Pbkdf2Hash {
  rounds: number;
  salt: Buffer;
  checksum: Buffer;
}
interface PasslibScryptHash {
  logN: number;
  r: number;
  p: number;
  salt: Buffer;
  checksum: Buffer;
}

function parsePbkdf2(encoded: string): Pbkdf2Hash | null {
  const m = PBKDF2_SHA512.exec(encoded);
  if (!m || Number(m[1]) > PBKDF2_MAX_ROUNDS) return null;
  return { rounds: Number(m[1]), salt: ab64(m[2]!), checksum: ab64(m[3]!) };
}

function parsePasslibScrypt(encoded: string): PasslibScryptHash | null {
  const m = PASSLIB_SCRYPT.exec(encoded);
  if (!m) return null;
  const [logN, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (logN > 24 || 128 * 2 ** logN * r > PASSLIB_SCRYPT_MAX_MEMORY || p > 16) return null;
  return { logN, r, p, salt: b64s(m[4]!), checksum: b64s(m[5]!) };
}

function bcryptCostOk(encoded: string): boolean {
  const m = BCRYPT.exec(encoded);
  return m !== null && Number(m[1]) >= 4 && Number(m[1]) <= BCRYPT_MAX_COST;
}

/** The scheme of a stored or imported hash; null when it is none Cairn accepts (or is malformed). */
export function passwordScheme(encoded: string): PasswordScheme | null {
  if (parsePasswordHash(encoded)) return 'scrypt';
  if (bcryptCostOk(encoded)) return 'bcrypt';
  if (parsePbkdf2(encoded)) return 'pbkdf2-sha512';
  if (parsePasslibScrypt(encoded)) return 'passlib-scrypt';
  return null;
}

const pbkdf2Async = (password: string, h: Pbkdf2Hash): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    pbkdf2(Buffer.from(password, 'utf8'), h.salt, h.rounds, 64, 'sha512', (e, key) => (e ? reject(e) : resolve(key))),
  );

const passlibScryptAsync = (password: string, h: PasslibScryptHash): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    scrypt(
      Buffer.from(password, 'utf8'),
      h.salt,
      32,
      { N: 2 ** h.logN, r: h.r, p: h.p, maxmem: 2 * PASSLIB_SCRYPT_MAX_MEMORY },
      (e, key) => (e ? reject(e) : resolve(key)),
    ),
  );

const sameBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

/**
 * Constant-time check of `password` against a hash of any accepted scheme; a malformed hash never
 * verifies. Foreign schemes get the password's UTF-8 bytes as they are, as their own systems did
 * (Cairn's scrypt normalises to NFC first).
 */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  switch (passwordScheme(encoded)) {
    case 'scrypt':
      return verifyScryptPassword(password, encoded);
    case 'bcrypt':
      // bcryptjs compares in constant time; like passlib it reads at most 72 bytes of the password.
      return bcrypt.compare(password, encoded);
    case 'pbkdf2-sha512': {
      const h = parsePbkdf2(encoded)!;
      return sameBytes(await pbkdf2Async(password, h), h.checksum);
    }
    case 'passlib-scrypt': {
      const h = parsePasslibScrypt(encoded)!;
      return sameBytes(await passlibScryptAsync(password, h), h.checksum);
    }
    default:
      return false;
  }
}
