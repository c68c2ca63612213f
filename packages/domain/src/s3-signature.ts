import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { hasControlCharacters } from './validation';

/**
 * AWS signature checks for Keystone's `POST /v3/s3tokens`, the call Swift's `s3token` middleware
 * makes for every S3 request it sees. Swift's `s3api` builds the string to sign from the request
 * (swift/common/middleware/s3api/s3request.py: SigCheckerV2, SigCheckerV4); `s3token` posts it,
 * urlsafe-base64-encoded, with the access key and the signature the client sent:
 * `{"credentials": {"access": …, "token": base64(string_to_sign), "signature": …}}`.
 *
 * Checked as Keystone checks it (keystone/api/s3tokens.py, keystone/api/_shared/EC2_S3_Resource.py):
 * - a string to sign starting with `AWS4` is signature V4: four lines, `AWS4-HMAC-SHA256`, the
 *   timestamp, the scope `<date>/<region>/<service>/aws4_request`, the canonical request's SHA-256;
 *   the signing key is HMAC-SHA256 chained from `"AWS4" + secret` over date, region, service and
 *   `aws4_request`, and the signature is the hex HMAC-SHA256 of the whole string under it;
 * - anything else is signature V2: the base64 HMAC-SHA1 of the string under the secret.
 * The body's credentials may sit under `credentials`, `credential` or `ec2Credentials` (Keystone
 * takes the first of them that is a non-empty object).
 *
 * Pure: the only input from outside is the `lookup` function the caller passes.
 */

export type S3SignatureVersion = 'v2' | 'v4';

/** A V4 credential scope, as the string to sign's third line names it. */
export interface SigV4Scope {
  date: string;
  region: string;
  service: string;
}

/** One s3tokens request, checked for shape (not yet for its signature). */
export interface S3TokensRequest {
  accessKey: string;
  stringToSign: Buffer;
  signature: string;
  version: S3SignatureVersion;
  /** V4 only. */
  scope?: SigV4Scope;
}

export type S3SignatureFailureReason = 'malformed' | 'unknown-access-key' | 'signature-mismatch';

/**
 * The verdict. `owner` is what the lookup said the access key belongs to; it is there on success
 * and on a signature mismatch (so the caller can count the failure against that user), never the
 * secret. The messages are for logs and operators; callers answer unknown keys and mismatches
 * with one and the same response, so that nobody can tell them apart.
 */
export type S3SignatureVerdict<O> =
  | { ok: true; accessKey: string; owner: O; version: S3SignatureVersion; scope?: SigV4Scope }
  | { ok: false; reason: 'malformed'; message: string }
  | { ok: false; reason: 'unknown-access-key'; accessKey: string; message: string }
  | { ok: false; reason: 'signature-mismatch'; accessKey: string; owner: O; message: string };

/** The secret of an access key and whom it belongs to; null when there is no such key. */
export type S3SecretLookup<O> = (
  accessKey: string,
) => Promise<{ secret: string; owner: O } | null> | { secret: string; owner: O } | null;

export interface S3SignatureOptions {
  /**
   * Services a V4 scope may name. Keystone allows s3, iam and sts; Cairn answers only for S3.
   * (AWS's generic SigV4 test suite signs for a service called "service".)
   */
  allowedServices?: readonly string[];
}

const MAX_ACCESS_KEY_CHARS = 128;
const MAX_SIGNATURE_CHARS = 256;
/** s3api's strings to sign are a few hundred bytes (paths ≤ 1 KiB, metadata ≤ 4 KiB in Swift). */
export const MAX_STRING_TO_SIGN_BYTES = 32 * 1024;
const MAX_TOKEN_CHARS = Math.ceil(MAX_STRING_TO_SIGN_BYTES / 3) * 4;

const V4_ALGORITHM = 'AWS4-HMAC-SHA256';
const V4_TERMINATOR = 'aws4_request';
const DEFAULT_SERVICES: readonly string[] = ['s3'];

/** Standard or URL-safe alphabet (s3token sends URL-safe, as Keystone decodes), padding optional. */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

type Parsed = { ok: true; request: S3TokensRequest } | { ok: false; reason: 'malformed'; message: string };

const malformed = (message: string): Parsed => ({ ok: false, reason: 'malformed', message });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON values as Python's `or` sees them: null, false, 0, "", [] and {} are false. */
function pythonTruthy(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (isObject(v)) return Object.keys(v).length > 0;
  return true;
}

function decodeToken(token: string): Buffer | null {
  if (token.length === 0 || token.length > MAX_TOKEN_CHARS || !BASE64.test(token)) return null;
  const unpadded = token.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) return null;
  if (token.length !== unpadded.length && token.length % 4 !== 0) return null;
  return Buffer.from(unpadded.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
}

function parseV4(stringToSign: Buffer, allowed: readonly string[]): { scope: SigV4Scope } | { message: string } {
  // Read as UTF-8, the text clients sign: the scope's parts then encode back (signingKeyV4) to the
  // very bytes the string carries, which is what Keystone feeds to HMAC. Bytes that are not UTF-8
  // text cannot come from a client's string, and would not encode back.
  const text = stringToSign.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(stringToSign)) return { message: 'a V4 string to sign is UTF-8 text' };
  const lines = text.split('\n');
  if (lines.length !== 4 || lines[0] !== V4_ALGORITHM) {
    return { message: `a V4 string to sign has four lines and starts with ${V4_ALGORITHM}` };
  }
  const [, timestamp = '', scopeLine = '', requestHash = ''] = lines;
  if (!/^\d{8}T\d{6}Z$/.test(timestamp)) return { message: 'the V4 timestamp must look like 20150830T123600Z' };
  const parts = scopeLine.split('/');
  const [date = '', region = '', service = '', terminator] = parts;
  if (parts.length !== 4 || terminator !== V4_TERMINATOR) {
    return { message: `the V4 scope must be <date>/<region>/<service>/${V4_TERMINATOR}` };
  }
  if (date !== timestamp.slice(0, 8)) return { message: "the V4 scope's date must be the timestamp's date" };
  if (region.length === 0 || region.length > 128 || hasControlCharacters(region))
    return { message: 'the V4 scope names no usable region' };
  if (!allowed.includes(service)) return { message: `the V4 scope's service must be ${allowed.join(' or ')}` };
  if (!/^[0-9a-f]{64}$/.test(requestHash))
    return { message: "the V4 string to sign must end with the canonical request's hex SHA-256" };
  return { scope: { date, region, service } };
}

/**
 * Checks an s3tokens body for shape. Every refusal here depends only on the body, never on
 * whether the access key exists.
 */
export function parseS3TokensBody(body: unknown, options: S3SignatureOptions = {}): Parsed {
  if (!isObject(body)) return malformed('The request body must be a JSON object with "credentials".');
  // Keystone: `credentials or credential or ec2Credentials`, the first that Python finds truthy.
  const creds = [body.credentials, body.credential, body.ec2Credentials].find(pythonTruthy);
  if (creds === undefined)
    return malformed('The request body must carry "credentials" with "access", "token" and "signature".');
  if (!isObject(creds)) return malformed('"credentials" must be an object with "access", "token" and "signature".');
  const { access, token, signature } = creds;
  if (typeof access !== 'string' || access.length === 0)
    return malformed('"credentials.access" must be the access key, a non-empty string.');
  if (access.length > MAX_ACCESS_KEY_CHARS || hasControlCharacters(access)) {
    return malformed(
      `"credentials.access" must be at most ${MAX_ACCESS_KEY_CHARS} characters with no control characters.`,
    );
  }
  if (typeof token !== 'string') return malformed('"credentials.token" must be the base64 of the string to sign.');
  const stringToSign = decodeToken(token);
  if (stringToSign === null || stringToSign.length === 0) {
    return malformed(
      `"credentials.token" must be the base64 of a string to sign of 1 to ${MAX_STRING_TO_SIGN_BYTES} bytes.`,
    );
  }
  if (typeof signature !== 'string' || signature.length === 0 || signature.length > MAX_SIGNATURE_CHARS) {
    return malformed(
      `"credentials.signature" must be a non-empty string of at most ${MAX_SIGNATURE_CHARS} characters.`,
    );
  }
  if (stringToSign.subarray(0, 4).toString('latin1') === 'AWS4') {
    const v4 = parseV4(stringToSign, options.allowedServices ?? DEFAULT_SERVICES);
    if ('message' in v4) return malformed(`"credentials.token" is not a V4 string to sign: ${v4.message}.`);
    return { ok: true, request: { accessKey: access, stringToSign, signature, version: 'v4', scope: v4.scope } };
  }
  return { ok: true, request: { accessKey: access, stringToSign, signature, version: 'v2' } };
}

/** Signature V2: base64 HMAC-SHA1 of the string to sign under the secret. */
export function signatureV2(stringToSign: Buffer, secret: string): string {
  return createHmac('sha1', Buffer.from(secret, 'utf8')).update(stringToSign).digest('base64');
}

/** Signature V4's signing key for one scope. */
export function signingKeyV4(secret: string, scope: SigV4Scope): Buffer {
  const step = (key: Buffer, data: string) => createHmac('sha256', key).update(data, 'utf8').digest();
  const date = step(Buffer.from(`AWS4${secret}`, 'utf8'), scope.date);
  return step(step(step(date, scope.region), scope.service), V4_TERMINATOR);
}

/** Signature V4: hex HMAC-SHA256 of the string to sign under the scope's signing key. */
export function signatureV4(stringToSign: Buffer, secret: string, scope: SigV4Scope): string {
  return createHmac('sha256', signingKeyV4(secret, scope)).update(stringToSign).digest('hex');
}

function expectedSignature(request: S3TokensRequest, secret: string): string {
  return request.version === 'v4'
    ? signatureV4(request.stringToSign, secret, request.scope!)
    : signatureV2(request.stringToSign, secret);
}

/**
 * Equal strings, in time that says nothing about where they differ or how long the guess was:
 * both sides are hashed to 32 bytes first.
 */
function sameText(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/**
 * Stands in for the secret of an access key that does not exist, so that an unknown key costs the
 * same HMAC work as a wrong signature. Random per process and as long as a generated secret, so
 * it is no key anyone could sign with.
 */
const DUMMY_SECRET = randomBytes(30).toString('base64');

/**
 * Verifies an s3tokens body. `lookup` runs once for every well-formed body, and the signature is
 * computed and compared whether or not the key exists.
 */
export async function verifyS3Signature<O>(
  body: unknown,
  lookup: S3SecretLookup<O>,
  options: S3SignatureOptions = {},
): Promise<S3SignatureVerdict<O>> {
  const parsed = parseS3TokensBody(body, options);
  if (!parsed.ok) return parsed;
  const { request } = parsed;
  const found = await lookup(request.accessKey);
  const matches = sameText(request.signature, expectedSignature(request, found?.secret ?? DUMMY_SECRET));
  if (found === null) {
    return {
      ok: false,
      reason: 'unknown-access-key',
      accessKey: request.accessKey,
      message: 'No S3 credential has this access key.',
    };
  }
  if (!matches) {
    return {
      ok: false,
      reason: 'signature-mismatch',
      accessKey: request.accessKey,
      owner: found.owner,
      message: 'The signature does not match the credential.',
    };
  }
  return {
    ok: true,
    accessKey: request.accessKey,
    owner: found.owner,
    version: request.version,
    ...(request.scope ? { scope: request.scope } : {}),
  };
}
