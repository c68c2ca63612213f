import { errors } from '@cairn/domain';
import { isDatabaseUnreachable } from '@cairn/runtime';

/**
 * Rethrows a failed read or write of the gateway's Postgres tables: out of reach, it becomes
 * UNAVAILABLE (a 503: never a 401, or clients would doubt their password); anything else as it is.
 */
export const unreachable = (err: unknown): never => {
  if (isDatabaseUnreachable(err)) throw errors.unavailable('The user database (Postgres) is unavailable.', { cause: (err as Error).message });
  throw err;
};
