import type { Knex } from 'knex';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';

/**
 * What the console's two session tables (console_sessions for operators, storage_user_sessions
 * for storage users) have in common: an end (expires_at), a last use (last_seen_at) and the rule
 * that a session is live before its end and within its idle time. Each table keeps its own
 * queries for what differs (who the session signs in, and how that is checked); the times all use
 * the database's clock, so replicas with drifting clocks agree.
 */

/** `n` seconds as a Postgres interval, bound as a parameter. */
const seconds = (db: Db, n: number) => db.raw("? * interval '1 second'", [n]);

/** The time `n` seconds from now, by the database's clock (a session's end, a step-up's). */
export const fromNow = (db: Db, n: number) => db.raw('now() + ?', [seconds(db, n)]);

/** The select column `idle_seconds`: seconds since the session (aliased `s`) was last used. */
export const idleSecondsColumn = (db: Db) =>
  db.raw('extract(epoch from now() - s.last_seen_at)::float8 AS idle_seconds');

/**
 * A where clause: the session (columns of `alias`, or of the one table) has not passed its end and
 * has been used within `idleSeconds`.
 */
export const live =
  (db: Db, idleSeconds: number, alias?: string) =>
  (qb: Knex.QueryBuilder): void => {
    const col = (name: string) => (alias ? `${alias}.${name}` : name);
    void qb
      .where(col('expires_at'), '>', db.fn.now())
      .andWhere(col('last_seen_at'), '>', db.raw('now() - ?', [seconds(db, idleSeconds)]));
  };

/** Marks the session as used now, unless another request already did within `withinSeconds`. */
export async function touchSession(db: Db, table: string, id: string, withinSeconds: number): Promise<void> {
  await withDbErrors(() =>
    db(table)
      .where('id', id)
      .andWhere('last_seen_at', '<', db.raw('now() - ?', [seconds(db, withinSeconds)]))
      .update({ last_seen_at: db.fn.now() }),
  );
}

/** Deletes the table's sessions that have ended (past their end, or idle `idleSeconds`); how many. */
export async function deleteEndedSessions(db: Db, table: string, idleSeconds: number): Promise<number> {
  const rows = await withDbErrors(() =>
    db(table)
      .where('expires_at', '<=', db.fn.now())
      .orWhere('last_seen_at', '<=', db.raw('now() - ?', [seconds(db, idleSeconds)]))
      .delete()
      .returning('id'),
  );
  return rows.length;
}
