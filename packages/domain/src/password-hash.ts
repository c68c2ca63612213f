import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Memory-hard password hashing with scrypt (node:crypto), stored self-describing so parameters can be
 * raised later without breaking old hashes:  $scrypt$ln=15,r=8,p=3$<salt base64>$<hash base64>
 *
 * Default: N=2^15, r=8, p=3 (32 MiB, one of OWASP's scrypt settings). Pure computation, no I/O.
 */
export interface ScryptParams {
  logN: number;
  r: number;
  p: number;
}

export const DEFAULT_SCRYPT_PARAMS: ScryptParams = { logN: 15, r: 8, p: 3 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

function scryptAsync(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = {
    N: 2 ** params.logN,
    r: params.r,
    p: params.p,
    // scrypt needs 128·N·r bytes; leave headroom so node does not refuse valid parameters.
    maxmem: 256 * 2 ** params.logN * params.r,
  };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await scryptAsync(password, salt, params);
  return `$scrypt$ln=${params.logN},r=${params.r},p=${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * Both parts are padded standard base64 (a length that is a multiple of 4), which is what tells
 * Cairn's own `$scrypt$` apart from passlib's (unpadded, a 43-character checksum; see
 * foreign-password-hash.ts).
 */
const FORMAT =
  /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)\$((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;

export function parsePasswordHash(encoded: string): { params: ScryptParams; salt: Buffer; key: Buffer } | null {
  const m = FORMAT.exec(encoded);
  if (!m || m[4] === '' || m[5] === '') return null;
  const params = { logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  if (params.logN < 1 || params.logN > 22 || params.r < 1 || params.p < 1) return null;
  return { params, salt: Buffer.from(m[4]!, 'base64'), key: Buffer.from(m[5]!, 'base64') };
}

/** Constant-time check of `password` against one of Cairn's own hashes; a malformed hash never verifies. */
export async function verifyScryptPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parsePasswordHash(encoded);
  if (!parsed) return false;
  const key = await scryptAsync(password, parsed.salt, parsed.params);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}
