import { readFileSync } from 'node:fs';

/**
 * TLS to Postgres and Redis with a private CA. The services read a CA file named in their
 * configuration, and a certificate that does not verify stops them at start with a sentence that
 * names the setting to check, rather than retrying until the start-up timeout.
 */

/** Node's and OpenSSL's codes for a peer certificate that did not verify. */
const VERIFY_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'INVALID_CA',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Whether `e` is a refused server certificate, or a server that does not speak TLS when asked to (pg's message). */
export function isTlsFailure(e: unknown): boolean {
  const err = e as { code?: unknown; message?: unknown } | undefined;
  if (typeof err?.code === 'string' && VERIFY_CODES.has(err.code)) return true;
  return typeof err?.message === 'string' && err.message.includes('does not support SSL connections');
}

/** The error a service exits with when a dependency's TLS fails: what happened and which settings to check. */
export class TlsFailure extends Error {
  readonly code = 'TLS_FAILURE';
  constructor(dependency: string, settings: string, cause: unknown) {
    const err = cause as { code?: unknown; message?: unknown };
    const reason = `${typeof err.code === 'string' ? `${err.code}: ` : ''}${String(err.message ?? cause)}`;
    super(
      `The TLS connection to ${dependency} failed (${reason}). Check that ${settings} names the CA that signed ${dependency}'s certificate, that the certificate names the host the URL connects to, and that ${dependency} has TLS enabled.`,
    );
    this.name = 'TlsFailure';
  }
}

/**
 * The PEM text of a CA file, or a sentence saying why it cannot be used (for a ConfigError).
 * Read at start: a missing file is a configuration mistake, not something to retry.
 */
export function readCaFile(setting: string, path: string): { pem: string } | { problem: string } {
  let pem: string;
  try {
    pem = readFileSync(path, 'utf8');
  } catch (e) {
    return { problem: `${setting} (${path}) cannot be read: ${(e as NodeJS.ErrnoException).code ?? String(e)}.` };
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----'))
    return { problem: `${setting} (${path}) holds no PEM certificate (-----BEGIN CERTIFICATE-----).` };
  return { pem };
}

/**
 * A Postgres URL that verifies the server with `caFile`: `sslrootcert` set to it and, unless
 * the URL chose an `sslmode`, `sslmode=verify-full` (certificate and host name). node-postgres
 * reads both from the URL, so the pool and a LISTEN session built from it behave alike.
 */
export function postgresUrlWithCa(url: string, caFile: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('sslrootcert', caFile);
  if (!parsed.searchParams.has('sslmode')) parsed.searchParams.set('sslmode', 'verify-full');
  return parsed.toString();
}
