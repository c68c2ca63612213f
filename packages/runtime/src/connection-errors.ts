/**
 * Error codes meaning a dependency (Postgres, Redis, a name server) could not be reached, dropped
 * the connection, or is restarting or full: the request may succeed if retried, so callers answer
 * 503, never 4xx or 500. Node's socket codes, and Postgres SQLSTATEs besides class 08 (connection
 * exception, see isConnectionCode): 57P01-57P03 (administrator shutdown, crash shutdown, cannot
 * connect now) and 53300 (too many connections).
 */
export const CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

/** One of CONNECTION_CODES, or a Postgres SQLSTATE of class 08 (connection exception). */
export const isConnectionCode = (code: string): boolean => CONNECTION_CODES.has(code) || code.startsWith('08');

/**
 * node-postgres raises these without a code when the connection is gone or broken: the only way to
 * know them is the text. Not anchored: knex puts the failed statement's SQL before the driver's
 * message ("select … - Connection terminated unexpectedly").
 */
const CODELESS_CONNECTION_FAILURE =
  /Connection terminated|Connection ended unexpectedly|is not queryable|Timeout acquiring a connection/i;

/** Whether a Postgres driver error means the database could not be reached (a 503, not a bug). */
export function isDatabaseUnreachable(err: unknown): boolean {
  const e = (err ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
  if (typeof e.code === 'string') return isConnectionCode(e.code);
  if (e.name === 'KnexTimeoutError') return true;
  return typeof e.message === 'string' && CODELESS_CONNECTION_FAILURE.test(e.message);
}
