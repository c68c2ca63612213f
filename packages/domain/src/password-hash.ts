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

/**
 * The most any stored hash's check may cost, in times a check of Cairn's own (DEFAULT_SCRYPT_PARAMS),
 * in time and in memory: no login computes more, whatever a hash asks for (imported, or stored by an
 * older version). foreign-password-hash.ts derives the bcrypt and pbkdf2-sha512 bounds from it.
 */
export const HASH_COST_FACTOR = 4;
const CAIRN_N = 2 ** DEFAULT_SCRYPT_PARAMS.logN;
/** scrypt's time grows with N·r·p: at most 4 × 2^15·8·3 = 3,145,728. */
export const SCRYPT_MAX_WORK = HASH_COST_FACTOR * CAIRN_N * DEFAULT_SCRYPT_PARAMS.r * DEFAULT_SCRYPT_PARAMS.p;
/** scrypt's memory is 128·N·r bytes: at most 4 × 32 MiB = 128 MiB. */
export const SCRYPT_MAX_MEMORY = HASH_COST_FACTOR * 128 * CAIRN_N * DEFAULT_SCRYPT_PARAMS.r;

const mebibytes = (bytes: number): string =>
  `${(bytes / 2 ** 20).toLocaleString('en-US', { maximumFractionDigits: 1 })} MiB`;
const count = (n: number): string => n.toLocaleString('en-US');

/**
 * The options node's crypto.scrypt gets for these parameters. maxmem is exactly the memory OpenSSL
 * (EVP_PBE_scrypt) reserves for them, 128·r·(N + 2) + 128·r·p bytes: the memory bound is
 * scryptParamsProblem's.
 */
export function scryptOptions(params: ScryptParams): Required<Pick<ScryptOptions, 'N' | 'r' | 'p' | 'maxmem'>> {
  const N = 2 ** params.logN;
  return { N, r: params.r, p: params.p, maxmem: 128 * params.r * (N + 2 + params.p) };
}

/**
 * Why a check with these parameters would not run, or would cost more than HASH_COST_FACTOR times
 * Cairn's own: a sentence naming the limit; null when it runs within the bound. The rules are those
 * crypto.scrypt applies to scryptOptions(params) (OpenSSL's EVP_PBE_scrypt: N a power of 2 from 2, r
 * and p from 1, r·p below 2^30, N below 2^(16·r), the memory within maxmem), then the bound: for
 * parameters that pass, crypto.scrypt does not throw.
 */
export function scryptParamsProblem({ logN, r, p }: ScryptParams): string | null {
  const at = `ln=${logN},r=${r},p=${p}`;
  if (![logN, r, p].every((n) => Number.isSafeInteger(n) && n >= 1))
    return `scrypt's ln, r and p must be whole numbers from 1 (not ${at})`;
  if (16 * r <= 63 && logN >= 16 * r)
    return `scrypt cannot run with ${at}: N = 2^ln must be below 2^(16·r), so ln at most ${16 * r - 1} for r=${r}`;
  const N = 2 ** logN;
  if (128 * N * r > SCRYPT_MAX_MEMORY)
    return `scrypt's memory (128·N·r bytes) must be at most ${mebibytes(SCRYPT_MAX_MEMORY)}, ${HASH_COST_FACTOR} times what Cairn's own hash needs; ${at} needs ${mebibytes(128 * N * r)}`;
  // This also keeps r·p far below OpenSSL's 2^30 (N is at least 2).
  if (N * r * p > SCRYPT_MAX_WORK)
    return `scrypt's work (N·r·p) must be at most ${count(SCRYPT_MAX_WORK)}, ${HASH_COST_FACTOR} times that of Cairn's own hash; ${at} makes ${count(N * r * p)}`;
  return null;
}

/** The least memory a Cairn hash may take (128·N·r bytes): below it scrypt is not memory-hard. */
export const SCRYPT_MIN_MEMORY = 2 ** 20;

/**
 * The parameters of CAIRN_PASSWORD_HASH_PARAMS, written as in the hashes (`ln=15,r=8,p=3`): those
 * Cairn hashes new passwords with. A sentence when they are not well-formed, when a check with them
 * would pass the bound (scryptParamsProblem), or when they take less than SCRYPT_MIN_MEMORY.
 */
export function parseScryptSetting(text: string): { params: ScryptParams } | { problem: string } {
  const m = /^ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})$/.exec(text);
  if (!m)
    return {
      problem: `scrypt parameters are written ln=<log2 N>,r=<block size>,p=<parallelism>, e.g. ln=15,r=8,p=3; not ${JSON.stringify(text)}`,
    };
  const params = { logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  const problem = scryptParamsProblem(params);
  if (problem) return { problem };
  if (128 * 2 ** params.logN * params.r < SCRYPT_MIN_MEMORY)
    return {
      problem: `scrypt's memory (128·N·r bytes) must be at least ${mebibytes(SCRYPT_MIN_MEMORY)}; ${text} needs ${mebibytes(128 * 2 ** params.logN * params.r)}`,
    };
  return { params };
}

/**
 * scrypt with scryptOptions(params), for Cairn's hashes and passlib's (foreign-password-hash.ts).
 * Parameters past the bound (scryptParamsProblem) are refused with a RangeError, never run.
 */
export function boundedScrypt(
  password: string | Buffer,
  salt: Buffer,
  params: ScryptParams,
  keyLength: number,
): Promise<Buffer> {
  const problem = scryptParamsProblem(params);
  if (problem) return Promise.reject(new RangeError(problem));
  return new Promise((resolve, reject) =>
    scrypt(password, salt, keyLength, scryptOptions(params), (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string, params: ScryptParams = DEFAULT_SCRYPT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await boundedScrypt(password.normalize('NFC'), salt, params, KEY_LENGTH);
  return `$scrypt$ln=${params.logN},r=${params.r},p=${params.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/**
 * Both parts are padded standard base64 (a length that is a multiple of 4), which is what tells
 * Cairn's own `$scrypt$` apart from passlib's (unpadded, a 43-character checksum; see
 * foreign-password-hash.ts).
 */
const FORMAT =
  /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)\$((?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?)$/;

/** Cairn's format, whatever its parameters cost (parsePasswordHash also checks those). */
export function readPasswordHash(encoded: string): { params: ScryptParams; salt: Buffer; key: Buffer } | null {
  const m = FORMAT.exec(encoded);
  if (!m || m[4] === '' || m[5] === '') return null;
  const params = { logN: Number(m[1]), r: Number(m[2]), p: Number(m[3]) };
  return { params, salt: Buffer.from(m[4]!, 'base64'), key: Buffer.from(m[5]!, 'base64') };
}

/** One of Cairn's own hashes whose check runs within the bound (scryptParamsProblem); otherwise null. */
export function parsePasswordHash(encoded: string): { params: ScryptParams; salt: Buffer; key: Buffer } | null {
  const parsed = readPasswordHash(encoded);
  return parsed && scryptParamsProblem(parsed.params) === null ? parsed : null;
}

/**
 * Constant-time check of `password` against one of Cairn's own hashes; a malformed hash, or one past
 * the bound, never verifies (and is never computed).
 */
export async function verifyScryptPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parsePasswordHash(encoded);
  if (!parsed) return false;
  const key = await boundedScrypt(password.normalize('NFC'), parsed.salt, parsed.params, KEY_LENGTH);
  return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
}
