import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from 'node:crypto';

/**
 * S3 secrets at rest. A signature check needs the secret itself (HMAC), so it cannot be hashed
 * like a password; it is sealed with AES-256-GCM under a key from configuration instead.
 *
 * Configuration (read by a service's config.ts, handed here as strings):
 *
 *   CAIRN_S3_SECRET_KEYS    comma-separated `<key id>:<key>` entries, e.g.
 *                           `2026a:Hq3…=,2025b:0xT…=`. A key id is 1 to 32 characters of
 *                           A-Z a-z 0-9 _ -; a key is 32 random bytes in base64 (standard or
 *                           URL-safe, padding optional), e.g. from `openssl rand -base64 32`.
 *                           Spaces around entries are ignored. Every key listed can decrypt.
 *   CAIRN_S3_CURRENT_KEY_ID the id of the key new secrets are sealed under; may be left out when
 *                           exactly one key is listed.
 *
 * Rotation: add a new key to CAIRN_S3_SECRET_KEYS and make it current (every service that reads
 * or writes secrets gets both); secrets sealed before keep naming their old key and still open;
 * re-seal them (`needsResealing`) and only then remove the old key. A secret whose key id is
 * no longer configured cannot be opened: the credential stops working until the key is back.
 *
 * A sealed value is one ASCII string: `v1:<key id>:<iv>:<ciphertext>:<tag>` (base64url parts,
 * 12-byte random IV, 16-byte tag). The associated data binds it to its access key and key id,
 * so a sealed secret copied onto another credential's row, or relabelled with another key id,
 * does not open.
 */

export type S3SecretErrorCode = 'UNKNOWN_KEY_ID' | 'MALFORMED_SEALED_SECRET' | 'UNAUTHENTIC_SEALED_SECRET';

/** Why a sealed secret did not open. Messages name key ids and access keys, never key material or secrets. */
export class S3SecretError extends Error {
  override readonly name = 'S3SecretError';
  constructor(
    readonly code: S3SecretErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface S3SecretKeyring {
  readonly currentKeyId: string;
  /** KeyObjects, so that key material does not show when a keyring is logged or inspected. */
  readonly keys: ReadonlyMap<string, KeyObject>;
}

export type S3SecretKeysResult = { ok: true; keyring: S3SecretKeyring } | { ok: false; problems: string[] };

const FORMAT = 'v1';
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

function decodeKey(text: string): Buffer | null {
  if (!BASE64.test(text)) return null;
  const unpadded = text.replace(/=+$/, '');
  if (unpadded.length % 4 === 1 || (text.length !== unpadded.length && text.length % 4 !== 0)) return null;
  return Buffer.from(unpadded.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

/** One `<key id>:<key>` entry, or a sentence saying what is wrong with it. */
function parseEntry(entry: string, where: string): { id: string; key: Buffer } | string {
  if (entry === '') return `${where} is empty (two commas in a row, or a trailing comma).`;
  const colon = entry.indexOf(':');
  if (colon < 0) return `${where} must be \`<key id>:<base64 key>\`; it has no colon.`;
  const id = entry.slice(0, colon).trim();
  if (!KEY_ID.test(id)) return `${where}: the key id must be 1 to 32 characters of A-Z, a-z, 0-9, _ and -.`;
  const key = decodeKey(entry.slice(colon + 1).trim());
  if (key === null) return `${where} (key id '${id}'): the key is not base64.`;
  if (key.length !== KEY_BYTES) {
    return `${where} (key id '${id}'): the key must be ${KEY_BYTES} bytes (44 base64 characters, e.g. \`openssl rand -base64 32\`); it is ${key.length}.`;
  }
  return { id, key };
}

/**
 * Parses the two settings above. Reports every problem found, as sentences naming the entry by
 * position and key id, never echoing key material.
 */
export function parseS3SecretKeys(spec: string, currentKeyId?: string): S3SecretKeysResult {
  const problems: string[] = [];
  const keys = new Map<string, KeyObject>();
  const seenMaterial = new Map<string, string>();
  const entries = spec.split(',').map((e) => e.trim());
  if (entries.every((e) => e === '')) {
    return {
      ok: false,
      problems: ['CAIRN_S3_SECRET_KEYS lists no key: give at least one `<key id>:<base64 of 32 bytes>`.'],
    };
  }
  for (const [index, entry] of entries.entries()) {
    const parsed = parseEntry(entry, `CAIRN_S3_SECRET_KEYS entry ${index + 1}`);
    if (typeof parsed === 'string') {
      problems.push(parsed);
      continue;
    }
    const { id, key } = parsed;
    const fingerprint = key.toString('hex');
    const twin = seenMaterial.get(fingerprint);
    if (keys.has(id)) problems.push(`CAIRN_S3_SECRET_KEYS entry ${index + 1}: key id '${id}' is listed twice.`);
    else if (twin !== undefined)
      problems.push(
        `CAIRN_S3_SECRET_KEYS entry ${index + 1}: key id '${id}' has the same key as '${twin}'; give each id its own key.`,
      );
    else {
      seenMaterial.set(fingerprint, id);
      keys.set(id, createSecretKey(key));
    }
    key.fill(0);
  }
  let current = currentKeyId?.trim();
  if (current === undefined || current === '') {
    if (entries.length > 1)
      problems.push(
        'CAIRN_S3_CURRENT_KEY_ID must name the key new secrets are sealed under (required when more than one key is listed).',
      );
    else current = [...keys.keys()][0];
  } else if (!KEY_ID.test(current)) {
    problems.push('CAIRN_S3_CURRENT_KEY_ID must be a key id: 1 to 32 characters of A-Z, a-z, 0-9, _ and -.');
  } else if (problems.length === 0 && !keys.has(current)) {
    problems.push(
      `CAIRN_S3_CURRENT_KEY_ID is '${current}', which is not among the ids in CAIRN_S3_SECRET_KEYS (${[...keys.keys()].join(', ')}).`,
    );
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, keyring: { currentKeyId: current!, keys } };
}

function associatedData(keyId: string, accessKey: string): Buffer {
  return Buffer.from(`cairn s3 secret ${FORMAT}\u0000${keyId}\u0000${accessKey}`, 'utf8');
}

/** Seals `secret` for the credential `accessKey` under the keyring's current key. */
export function sealS3Secret(keyring: S3SecretKeyring, accessKey: string, secret: string): string {
  if (accessKey.length === 0) throw new RangeError('an S3 secret is sealed for an access key; none was given');
  if (secret.length === 0) throw new RangeError('an empty S3 secret cannot be sealed');
  const keyId = keyring.currentKeyId;
  const key = keyring.keys.get(keyId);
  if (key === undefined)
    throw new S3SecretError('UNKNOWN_KEY_ID', `The current S3 secret key '${keyId}' is not in the keyring.`);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(associatedData(keyId, accessKey));
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [FORMAT, keyId, iv.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join(
    ':',
  );
}

interface SealedParts {
  keyId: string;
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

function parseSealed(sealed: string): SealedParts | null {
  const parts = sealed.split(':');
  if (parts.length !== 5) return null;
  const [format, keyId = '', iv = '', ciphertext = '', tag = ''] = parts;
  if (format !== FORMAT || !KEY_ID.test(keyId) || ![iv, ciphertext, tag].every((p) => BASE64URL.test(p))) return null;
  const parsed = {
    keyId,
    iv: Buffer.from(iv, 'base64url'),
    ciphertext: Buffer.from(ciphertext, 'base64url'),
    tag: Buffer.from(tag, 'base64url'),
  };
  if (parsed.iv.length !== IV_BYTES || parsed.tag.length !== TAG_BYTES || parsed.ciphertext.length === 0) return null;
  return parsed;
}

/** The key id a sealed value names, or null when it is not a sealed value. */
export function sealedS3SecretKeyId(sealed: string): string | null {
  return parseSealed(sealed)?.keyId ?? null;
}

/** True when `sealed` is under a key other than the current one (rotation: re-seal it). */
export function needsResealing(keyring: S3SecretKeyring, sealed: string): boolean {
  return sealedS3SecretKeyId(sealed) !== keyring.currentKeyId;
}

/**
 * Opens a secret sealed for `accessKey`. Throws S3SecretError: MALFORMED_SEALED_SECRET (not a
 * sealed value), UNKNOWN_KEY_ID (its key is not configured), UNAUTHENTIC_SEALED_SECRET (altered,
 * sealed for another access key, or the key under that id is not the one it was sealed with).
 */
export function openS3Secret(keyring: S3SecretKeyring, accessKey: string, sealed: string): string {
  const parts = parseSealed(sealed);
  if (parts === null)
    throw new S3SecretError(
      'MALFORMED_SEALED_SECRET',
      `The stored secret of S3 credential '${accessKey}' is not a sealed value (${FORMAT}:<key id>:<iv>:<ciphertext>:<tag>).`,
    );
  const key = keyring.keys.get(parts.keyId);
  if (key === undefined) {
    throw new S3SecretError(
      'UNKNOWN_KEY_ID',
      `The secret of S3 credential '${accessKey}' is sealed under key id '${parts.keyId}', which is not in CAIRN_S3_SECRET_KEYS.`,
    );
  }
  const decipher = createDecipheriv('aes-256-gcm', key, parts.iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(associatedData(parts.keyId, accessKey));
  decipher.setAuthTag(parts.tag);
  try {
    return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new S3SecretError(
      'UNAUTHENTIC_SEALED_SECRET',
      `The secret of S3 credential '${accessKey}' does not open under key id '${parts.keyId}': it was altered, sealed for another credential, or that id now holds another key.`,
    );
  }
}
