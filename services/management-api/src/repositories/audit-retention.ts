import { STORAGE_USER_ACTOR_PREFIX, TABLES } from '@cairn/contract';
import type { Db } from '../db/database';

/** How long audit entries are kept, in days; 0 keeps them for ever. */
export interface AuditRetention {
  /** Entries of operators (over the API) and of commands run on the host (`cli`, `bootstrap`, `migrate`). */
  operatorDays: number;
  /** Entries of storage users' own changes through the gateway (OS-EC2 credentials): many, and less telling. */
  storageUserDays: number;
}

export const DEFAULT_AUDIT_RETENTION: AuditRetention = Object.freeze({ operatorDays: 730, storageUserDays: 90 });

export interface AuditPruneReport {
  operatorEntries: number;
  storageUserEntries: number;
}

const DAY_MS = 86_400_000;

/**
 * The storage users' entries, exactly as the partial index audit_log_storage_user_idx states it
 * (Postgres uses that index only for a query holding the same predicate). `operator_id IS NULL`
 * keeps an operator who happens to be called "storage user …" among the operators.
 */
export const STORAGE_USER_ENTRY = `operator_id IS NULL AND operator_name LIKE '${STORAGE_USER_ACTOR_PREFIX}%'`;

export interface PruneOptions {
  /** Rows per DELETE: each batch is its own short statement, so no long lock is held and writers are not held up. */
  batchSize?: number;
  /**
   * Batches per call; the rest waits for the next maintenance pass (a first pass over years of entries stays bounded).
   */
  maxBatches?: number;
}

/**
 * Deletes the entries older than their kind's retention, oldest first, in batches. Safe from
 * several replicas at once (two batches may pick the same rows; the second deletes fewer).
 */
export async function pruneAudit(
  db: Db,
  retention: AuditRetention,
  now: Date,
  options: PruneOptions = {},
): Promise<AuditPruneReport> {
  const batchSize = options.batchSize ?? 5000;
  const maxBatches = options.maxBatches ?? 200;
  const prune = async (days: number, kind: string): Promise<number> => {
    if (days === 0) return 0;
    const cutoff = new Date(now.getTime() - days * DAY_MS);
    let deleted = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      const oldest = db(TABLES.audit)
        .select('id')
        .whereRaw(kind)
        .where('occurred_at', '<', cutoff)
        .orderBy('occurred_at')
        .limit(batchSize);
      // returning() rather than the affected-row count: PGlite's driver does not report the count.
      const count = ((await db(TABLES.audit).whereIn('id', oldest).delete().returning('id')) as unknown[]).length;
      deleted += count;
      if (count < batchSize) break;
    }
    return deleted;
  };
  return {
    storageUserEntries: await prune(retention.storageUserDays, STORAGE_USER_ENTRY),
    operatorEntries: await prune(retention.operatorDays, `NOT (${STORAGE_USER_ENTRY})`),
  };
}
