import { errors } from '@cairn/domain';
import { isDatabaseUnreachable } from '@cairn/runtime';

/**
 * Rethrows a failed read or write of the gateway's Postgres tables: out of reach, it becomes
 * UNAVAILABLE (a 503: never a 401, or clients would doubt their password); anything else as it is.
 */
export const unreachable = (err: unknown): never => {
  if (isDatabaseUnreachable(err))
    throw errors.unavailable('The user database (Postgres) is unavailable.', { cause: (err as Error).message });
  throw err;
};

/**
 * The same for what goes to the primary (CAIRN_PRIMARY_DATABASE_URL): a gateway reading a standby
 * keeps logging users in while the primary is out of reach, and says that only changes wait.
 */
export const primaryUnreachable = (err: unknown): never => {
  if (isDatabaseUnreachable(err)) {
    throw errors.unavailable(
      'The primary database (Postgres) is unreachable from this gateway, so S3 credentials cannot be listed, created or deleted here now; logins and tokens are not affected. Try again later.',
      {
        cause: (err as Error).message,
        shown: true,
      },
    );
  }
  throw err;
};
