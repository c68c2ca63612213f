import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import {
  needsResealing,
  openS3Secret,
  parseS3SecretKeys,
  S3SecretError,
  sealedS3SecretKeyId,
  sealS3Secret,
  type S3SecretKeyring,
} from '../src';

const b64 = () => randomBytes(32).toString('base64');
const KEY_A = b64();
const KEY_B = b64();
const SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
const ACCESS = 'AKIAIOSFODNN7EXAMPLE';

function keyring(spec: string, current?: string): S3SecretKeyring {
  const parsed = parseS3SecretKeys(spec, current);
  if (!parsed.ok) throw new Error(parsed.problems.join(' '));
  return parsed.keyring;
}

function problemsOf(spec: string, current?: string): string[] {
  const parsed = parseS3SecretKeys(spec, current);
  if (parsed.ok) throw new Error('expected problems');
  return parsed.problems;
}

function openError(ring: S3SecretKeyring, access: string, sealed: string): S3SecretError {
  try {
    openS3Secret(ring, access, sealed);
  } catch (e) {
    if (e instanceof S3SecretError) return e;
    throw e;
  }
  throw new Error('expected the sealed secret not to open');
}

/** `sealed` with one base64url part changed in one bit. */
function flipBitIn(sealed: string, part: 2 | 3 | 4): string {
  const parts = sealed.split(':');
  const bytes = Buffer.from(parts[part]!, 'base64url');
  bytes[0] = bytes[0]! ^ 0x01;
  parts[part] = bytes.toString('base64url');
  return parts.join(':');
}

describe('S3 secret keys from configuration', () => {
  it('when one key is listed and no current id given, then it is the current key', () => {
    const ring = keyring(`k1:${KEY_A}`);
    expect(ring.currentKeyId).toBe('k1');
    expect([...ring.keys.keys()]).toEqual(['k1']);
  });

  it('when several keys are listed with spaces, URL-safe or unpadded base64, then all are read and the named one is current', () => {
    const urlSafe = KEY_B.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    const ring = keyring(` 2026a:${KEY_A} ,  2025_b : ${urlSafe} `, '2025_b');
    expect(ring.currentKeyId).toBe('2025_b');
    expect([...ring.keys.keys()]).toEqual(['2026a', '2025_b']);
  });

  it('when a keyring is inspected or serialised, then no key material shows', () => {
    const ring = keyring(`k1:${KEY_A}`);
    const hex = Buffer.from(KEY_A, 'base64').toString('hex');
    for (const text of [inspect(ring, { depth: 10 }), JSON.stringify({ ...ring, keys: [...ring.keys] })]) {
      expect(text).not.toContain(KEY_A);
      expect(text).not.toContain(hex);
    }
  });

  it.each<[string, string, string | undefined, RegExp]>([
    ['nothing is listed', '', undefined, /lists no key/],
    ['only commas are listed', ' , ,', undefined, /lists no key/],
    ['an entry has no colon', KEY_A, undefined, /entry 1 must be `<key id>:<base64 key>`/],
    ['a key id has a space', `key one:${KEY_A}`, undefined, /entry 1: the key id must be 1 to 32 characters/],
    ['a key id is empty', `:${KEY_A}`, undefined, /entry 1: the key id must be/],
    ['a key id is too long', `${'k'.repeat(33)}:${KEY_A}`, undefined, /entry 1: the key id must be 1 to 32/],
    ['a key is not base64', 'k1:not*base64', undefined, /entry 1 \(key id 'k1'\): the key is not base64/],
    ['a key is 16 bytes', `k1:${randomBytes(16).toString('base64')}`, undefined, /must be 32 bytes .* it is 16/],
    ['a key is 33 bytes', `k1:${randomBytes(33).toString('base64')}`, undefined, /must be 32 bytes .* it is 33/],
    ['an entry is empty', `k1:${KEY_A},,k2:${KEY_B}`, 'k1', /entry 2 is empty/],
    ['a key id is listed twice', `k1:${KEY_A},k1:${KEY_B}`, 'k1', /entry 2: key id 'k1' is listed twice/],
    ['two ids share one key', `k1:${KEY_A},k2:${KEY_A}`, 'k1', /entry 2: key id 'k2' has the same key as 'k1'/],
    ['several keys and no current id', `k1:${KEY_A},k2:${KEY_B}`, undefined, /CAIRN_S3_CURRENT_KEY_ID must name/],
    ['the current id is not listed', `k1:${KEY_A},k2:${KEY_B}`, 'k3', /'k3', which is not among the ids .* \(k1, k2\)/],
    ['the current id is not a key id', `k1:${KEY_A}`, 'k 1', /CAIRN_S3_CURRENT_KEY_ID must be a key id/],
  ])('when %s, then a sentence says what is wrong, without the key', (_, spec, current, message) => {
    const problems = problemsOf(spec, current);
    expect(problems.join('\n')).toMatch(message);
    for (const p of problems) {
      expect(p).toMatch(/\.$/);
      expect(p).not.toContain(KEY_A);
      expect(p).not.toContain(KEY_B);
    }
  });

  it('when several entries are wrong, then every problem is reported together', () => {
    const problems = problemsOf(`k1:c2hvcnQ=,bad id:${KEY_A},k3:${KEY_B}`, 'k9');
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/entry 1 .*32 bytes/);
    expect(problems[1]).toMatch(/entry 2: the key id/);
  });
});

describe('sealing S3 secrets with AES-256-GCM', () => {
  const ring = keyring(`k1:${KEY_A}`);

  it('when a secret is sealed and opened for the same access key, then it comes back unchanged', () => {
    for (const secret of [SECRET, 'x', 'zoë+/=€🎉'.repeat(20)]) {
      const sealed = sealS3Secret(ring, ACCESS, secret);
      expect(openS3Secret(ring, ACCESS, sealed)).toBe(secret);
    }
  });

  it('when a secret is sealed, then the stored value names the format and key id and does not contain the secret', () => {
    const sealed = sealS3Secret(ring, ACCESS, SECRET);
    expect(sealed).toMatch(/^v1:k1:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+:[A-Za-z0-9_-]{22}$/);
    expect(sealed).not.toContain(SECRET);
    expect(sealed).not.toContain(Buffer.from(SECRET).toString('base64url'));
    expect(sealedS3SecretKeyId(sealed)).toBe('k1');
  });

  it('when the same secret is sealed twice, then the sealed values differ (fresh IV each time)', () => {
    const values = new Set(Array.from({ length: 50 }, () => sealS3Secret(ring, ACCESS, SECRET)));
    expect(values.size).toBe(50);
    expect(new Set([...values].map((v) => v.split(':')[2])).size).toBe(50);
  });

  it('when a sealed secret is opened for another access key (copied onto another row), then it is refused as unauthentic', () => {
    const sealed = sealS3Secret(ring, ACCESS, SECRET);
    expect(openError(ring, 'AKIAOTHERKEY00000000', sealed).code).toBe('UNAUTHENTIC_SEALED_SECRET');
  });

  it.each([
    ['the IV', 2],
    ['the ciphertext', 3],
    ['the tag', 4],
  ] as const)('when one bit of %s is changed, then it is refused as unauthentic', (_, part) => {
    const sealed = sealS3Secret(ring, ACCESS, SECRET);
    const error = openError(ring, ACCESS, flipBitIn(sealed, part));
    expect(error.code).toBe('UNAUTHENTIC_SEALED_SECRET');
    expect(error.message).toContain(ACCESS);
    expect(error.message).not.toContain(SECRET);
  });

  it('when the ciphertext is truncated or extended, then it is refused as unauthentic', () => {
    const sealed = sealS3Secret(ring, ACCESS, SECRET);
    const parts = sealed.split(':');
    const ciphertext = Buffer.from(parts[3]!, 'base64url');
    for (const changed of [ciphertext.subarray(0, -1), Buffer.concat([ciphertext, Buffer.from([0])])]) {
      const altered = [...parts.slice(0, 3), changed.toString('base64url'), parts[4]].join(':');
      expect(openError(ring, ACCESS, altered).code).toBe('UNAUTHENTIC_SEALED_SECRET');
    }
  });

  it('when the key id in a sealed value is relabelled to another configured key, then it is refused as unauthentic', () => {
    const two = keyring(`k1:${KEY_A},k2:${KEY_B}`, 'k1');
    const sealed = sealS3Secret(two, ACCESS, SECRET);
    expect(openError(two, ACCESS, sealed.replace(/^v1:k1:/, 'v1:k2:')).code).toBe('UNAUTHENTIC_SEALED_SECRET');
  });

  it('when the key id of a sealed value is not configured, then it is refused naming the id', () => {
    const other = keyring(`k9:${KEY_B}`);
    const error = openError(other, ACCESS, sealS3Secret(ring, ACCESS, SECRET));
    expect(error.code).toBe('UNKNOWN_KEY_ID');
    expect(error.message).toMatch(/key id 'k1', which is not in CAIRN_S3_SECRET_KEYS/);
  });

  it('when the id is configured but now holds another key, then it is refused as unauthentic', () => {
    const replaced = keyring(`k1:${KEY_B}`);
    expect(openError(replaced, ACCESS, sealS3Secret(ring, ACCESS, SECRET)).code).toBe('UNAUTHENTIC_SEALED_SECRET');
  });

  it.each([
    ['an empty value', ''],
    ['the plain secret', SECRET],
    ['another format', 'v2:k1:AAAAAAAAAAAAAAAA:AAAA:AAAAAAAAAAAAAAAAAAAAAA'],
    ['too few parts', 'v1:k1:AAAAAAAAAAAAAAAA:AAAA'],
    ['too many parts', 'v1:k1:AAAAAAAAAAAAAAAA:AAAA:AAAAAAAAAAAAAAAAAAAAAA:x'],
    ['a short IV', 'v1:k1:AAAA:AAAA:AAAAAAAAAAAAAAAAAAAAAA'],
    ['a short tag', 'v1:k1:AAAAAAAAAAAAAAAA:AAAA:AAAA'],
    ['an empty ciphertext', 'v1:k1:AAAAAAAAAAAAAAAA::AAAAAAAAAAAAAAAAAAAAAA'],
    ['standard base64 characters', 'v1:k1:AAAAAAAAAAAAAAA+:AAAA:AAAAAAAAAAAAAAAAAAAAAA'],
    ['a bad key id', 'v1:k 1:AAAAAAAAAAAAAAAA:AAAA:AAAAAAAAAAAAAAAAAAAAAA'],
  ])('when the stored value is %s, then it is refused as malformed', (_, value) => {
    expect(openError(ring, ACCESS, value).code).toBe('MALFORMED_SEALED_SECRET');
    expect(sealedS3SecretKeyId(value)).toBeNull();
  });

  it('when asked to seal an empty secret or for no access key, then it refuses', () => {
    expect(() => sealS3Secret(ring, ACCESS, '')).toThrow(RangeError);
    expect(() => sealS3Secret(ring, '', SECRET)).toThrow(RangeError);
  });
});

describe('rotating the S3 secret key', () => {
  it('when a new key becomes current, then old secrets still open, new ones are sealed under the new key, and the old ones need resealing', () => {
    const before = keyring(`old:${KEY_A}`);
    const sealedBefore = sealS3Secret(before, ACCESS, SECRET);

    const during = keyring(`old:${KEY_A},new:${KEY_B}`, 'new');
    expect(openS3Secret(during, ACCESS, sealedBefore)).toBe(SECRET);
    expect(needsResealing(during, sealedBefore)).toBe(true);

    const resealed = sealS3Secret(during, ACCESS, openS3Secret(during, ACCESS, sealedBefore));
    expect(sealedS3SecretKeyId(resealed)).toBe('new');
    expect(needsResealing(during, resealed)).toBe(false);

    const after = keyring(`new:${KEY_B}`);
    expect(openS3Secret(after, ACCESS, resealed)).toBe(SECRET);
    expect(openError(after, ACCESS, sealedBefore).code).toBe('UNKNOWN_KEY_ID');
  });

  it('when a malformed value is checked for resealing, then it needs it (it cannot be opened under the current key)', () => {
    expect(needsResealing(keyring(`k1:${KEY_A}`), 'garbage')).toBe(true);
  });
});
