import { CairnError, errors } from '@cairn/domain';
import { isDatabaseUnreachable } from '@cairn/runtime';

/**
 * Translates driver errors into domain errors, once, at the data layer. Repositories name what a
 * constraint means to a person; everything about connectivity becomes UNAVAILABLE (503) so clients
 * retry instead of believing their input was wrong.
 */
export interface ConstraintMessages {
  [constraint: string]: () => CairnError;
}

interface PgError {
  code?: string;
  constraint?: string;
  message?: string;
}

export function translateDbError(e: unknown, messages: ConstraintMessages = {}): unknown {
  if (e instanceof CairnError) return e;
  const err = (e ?? {}) as PgError;
  const code = err.code ?? '';
  // 23001: a RESTRICT foreign key, as newer Postgres releases (and PGlite) report it; older ones say 23503.
  if (code === '23505' || code === '23503' || code === '23001') {
    const make = err.constraint ? messages[err.constraint] : undefined;
    if (make) return make();
    return code === '23505'
      ? errors.alreadyExists('That object already exists.')
      : errors.inUse('That object is still referenced by others.');
  }
  if (code === '22P02' || code === '22003' || code === '22001' || code === '22021') {
    return errors.invalidInput('A value is out of range or not valid for its field.');
  }
  // The same test as the gateway's (@cairn/runtime), so both services call the same failures 503.
  if (isDatabaseUnreachable(e)) {
    return errors.unavailable('The database is unavailable; try again shortly.');
  }
  return e;
}

/** Runs `fn`, rethrowing database errors as domain errors. */
export async function withDbErrors<T>(fn: () => Promise<T>, messages?: ConstraintMessages): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw translateDbError(e, messages);
  }
}
