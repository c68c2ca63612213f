import { TABLES } from '@cairn/contract';
import type { Db } from '../db/database';

/**
 * The primary's side of what a gateway on a hot standby follows (migration 20261127150000_change_log):
 * the heartbeat it measures its copy's age by, and the change log's retention.
 */

/** Sets the heartbeat to now(): on a standby, now() minus it bounds how far behind the copy is. */
export async function beatHeartbeat(db: Db): Promise<void> {
  await db(TABLES.heartbeat).where({ id: 1 }).update({ beat_at: db.fn.now() });
}

/**
 * How long change-log rows are kept: a gateway reads each within a poll (200 ms) of its replay,
 * and one whose standby fell further behind than its lag limit forgets every cached row when it
 * catches up, so an hour is far more than any reader needs.
 */
export const CHANGE_LOG_RETENTION_MS = 3_600_000;

/** Deletes change-log rows older than the retention; returns how many. */
export async function pruneChangeLog(db: Db, now: Date, retentionMs = CHANGE_LOG_RETENTION_MS): Promise<number> {
  // returning() rather than the affected-row count: PGlite's driver does not report the count.
  return (
    (await db(TABLES.changeLog)
      .where('logged_at', '<', new Date(now.getTime() - retentionMs))
      .delete()
      .returning('seq')) as unknown[]
  ).length;
}
