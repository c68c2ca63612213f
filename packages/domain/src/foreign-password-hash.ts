import { pbkdf2, timingSafeEqual } from 'node:crypto';
import bcrypt from 'bcryptjs';
import {
  boundedScrypt,
  readPasswordHash,
  SCRYPT_MAX_WORK,
  scryptParamsProblem,
  verifyScryptPassword,
} from './password-hash';

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
 * Each format's cost is bounded by one rule, HASH_COST_FACTOR (password-hash.ts): a check costs at
 * most 4 times a check of Cairn's own hash. A hash past it is refused on import (passwordHashProblem
 * says why) and, when stored anyway (by an older version), never verifies and is never computed.
 */
export type PasswordScheme = 'scrypt' | 'bcrypt' | 'pbkdf2-sha512' | 'passlib-scrypt';
export const PASSWORD_SCHEMES: readonly PasswordScheme[] = ['scrypt', 'bcrypt', 'pbkdf2-sha512', 'passlib-scrypt'];

/**
 * What one round of each foreign scheme costs in units of scrypt's N·r·p work, measured with node 20
 * on x86-64: Cairn's own check (N·r·p = 786,432) took 360 ms, bcryptjs at cost 12 (4,096 rounds)
 * 450 ms, 1,000,000 rounds of node's pbkdf2-sha512 950 ms.
 */
const BCRYPT_ROUND_WORK = 256;
const PBKDF2_ROUND_WORK = 2;
/** bcrypt's cost is log2 of its rounds, from 4: at most 13 (Keystone's default is 12). */
export const BCRYPT_MAX_COST = Math.floor(Math.log2(SCRYPT_MAX_WORK / BCRYPT_ROUND_WORK));
/** At most 1,572,864 rounds (passlib's default is 29,000). */
export const PBKDF2_MAX_ROUNDS = SCRYPT_MAX_WORK / PBKDF2_ROUND_WORK;

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

const count = (n: number): string => n.toLocaleString('en-US');

/** How `bcryptjs.compare` is run: as it is, or elsewhere (the gateway runs it on a worker thread). */
export type BcryptCompare = (password: string, hash: string) => Promise<boolean>;

/** A hash in one of the accepted formats, read but not yet checked against the bound. */
interface ReadHash {
  scheme: PasswordScheme;
  /** Why a check would cost more than the bound (a sentence naming the limit); null within it. */
  problem: string | null;
  verify(password: string, bcryptCompare: BcryptCompare): Promise<boolean>;
}

const pbkdf2Async = (password: string, h: Pbkdf2Hash): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    pbkdf2(Buffer.from(password, 'utf8'), h.salt, h.rounds, 64, 'sha512', (e, key) => (e ? reject(e) : resolve(key))),
  );

const sameBytes = (a: Buffer, b: Buffer): boolean => a.length === b.length && timingSafeEqual(a, b);

function readHash(encoded: string): ReadHash | null {
  const cairn = readPasswordHash(encoded);
  if (cairn)
    return {
      scheme: 'scrypt',
      problem: scryptParamsProblem(cairn.params),
      verify: (password) => verifyScryptPassword(password, encoded),
    };
  const bcryptMatch = BCRYPT.exec(encoded);
  if (bcryptMatch) {
    const cost = Number(bcryptMatch[1]);
    return {
      scheme: 'bcrypt',
      problem:
        cost < 4 || cost > BCRYPT_MAX_COST
          ? `bcrypt's cost must be 4 to ${BCRYPT_MAX_COST} (at most 4 times the work of Cairn's own hash), not ${cost}`
          : null,
      // bcryptjs compares in constant time; like passlib it reads at most 72 bytes of the password.
      verify: (password, bcryptCompare) => bcryptCompare(password, encoded),
    };
  }
  const pbkdf2Match = PBKDF2_SHA512.exec(encoded);
  if (pbkdf2Match) {
    const h = { rounds: Number(pbkdf2Match[1]), salt: ab64(pbkdf2Match[2]!), checksum: ab64(pbkdf2Match[3]!) };
    return {
      scheme: 'pbkdf2-sha512',
      problem:
        h.rounds > PBKDF2_MAX_ROUNDS
          ? `pbkdf2-sha512 must have at most ${count(PBKDF2_MAX_ROUNDS)} rounds (at most 4 times the work of Cairn's own hash), not ${count(h.rounds)}`
          : null,
      verify: async (password) => sameBytes(await pbkdf2Async(password, h), h.checksum),
    };
  }
  const scryptMatch = PASSLIB_SCRYPT.exec(encoded);
  if (scryptMatch) {
    const h: PasslibScryptHash = {
      logN: Number(scryptMatch[1]),
      r: Number(scryptMatch[2]),
      p: Number(scryptMatch[3]),
      salt: b64s(scryptMatch[4]!),
      checksum: b64s(scryptMatch[5]!),
    };
    return {
      scheme: 'passlib-scrypt',
      problem: scryptParamsProblem(h),
      verify: async (password) =>
        sameBytes(await boundedScrypt(Buffer.from(password, 'utf8'), h.salt, h, h.checksum.length), h.checksum),
    };
  }
  return null;
}

/**
 * The scheme of a stored or imported hash; null when it is none Cairn accepts, is malformed, or its
 * check would cost more than the bound.
 */
export function passwordScheme(encoded: string): PasswordScheme | null {
  const read = readHash(encoded);
  return read && read.problem === null ? read.scheme : null;
}

/**
 * Why a hash in an accepted format is refused for its cost (a sentence naming the limit the
 * verifier applies); null when it is within the bound, or in no accepted format at all.
 */
export function passwordHashCostProblem(encoded: string): string | null {
  return readHash(encoded)?.problem ?? null;
}

/**
 * Constant-time check of `password` against a hash of any accepted scheme; a malformed hash, or one
 * past the bound, never verifies and is never computed. Foreign schemes get the password's UTF-8
 * bytes as they are, as their own systems did (Cairn's scrypt normalises to NFC first).
 */
export async function verifyPassword(
  password: string,
  encoded: string,
  bcryptCompare: BcryptCompare = bcrypt.compare,
): Promise<boolean> {
  const read = readHash(encoded);
  if (!read || read.problem !== null) return false;
  return read.verify(password, bcryptCompare);
}
