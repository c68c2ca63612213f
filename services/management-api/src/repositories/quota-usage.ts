import { TABLES } from '@cairn/contract';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';

/**
 * What quotas are measured against: a user's latest storage sample, and a cluster's byte quotas
 * added up. A user's is joined to the user's row in the statement that reads it (as its quota
 * state is), after a list's page is cut.
 */

/** The account's totals at the latest hour the storage collector sampled it. */
export interface LatestUsage {
  /** Decimal strings (bigints). */
  bytesUsed: string;
  objectCount: string;
  hour: Date;
}

/**
 * Each user's account `AUTH_<user>` at its latest storage sample, joined to the user's row (`users`:
 * its alias), for the statement that reads the user: the join, and the columns it adds (all NULL:
 * never sampled, or its samples are past the hourly retention). One index lookup in
 * utilization_storage_latest (kept from the hourly samples, see its migration). The name is
 * compared in the account column's collation: usernames are COLLATE "C", and a comparison in
 * another collation than the index's would leave the account out of the index condition and read
 * every account of the cluster. Equality is byte equality in both, so the answer is the same.
 */
export const latestUsageJoin = (users: string) => ({
  joins: {
    sql: `LEFT JOIN utilization_storage_latest AS ${users}_usage ON ${users}_usage.cluster_id = ${users}.cluster_id AND ${users}_usage.account = (?::text || ${users}.username) COLLATE "default"`,
    bindings: ['AUTH_'],
  },
  columns: [
    { sql: `${users}_usage.bytes_used AS usage_bytes_used`, bindings: [] },
    { sql: `${users}_usage.object_count AS usage_object_count`, bindings: [] },
    { sql: `${users}_usage.hour AS usage_hour`, bindings: [] },
  ],
});

export interface LatestUsageColumns {
  usage_bytes_used: string | number | null;
  usage_object_count: string | number | null;
  usage_hour: Date | string | null;
}

export const latestUsageOfRow = (r: LatestUsageColumns): LatestUsage | null =>
  r.usage_hour === null
    ? null
    : {
        bytesUsed: String(r.usage_bytes_used),
        objectCount: String(r.usage_object_count),
        hour: new Date(r.usage_hour),
      };

/**
 * The sum of the byte quotas of each cluster's users (a decimal string: it may pass 2^63), by cluster id; clusters
 * without one are absent.
 */
export async function quotaBytesTotalsOf(db: Db, clusterIds: readonly number[]): Promise<Map<number, string>> {
  if (clusterIds.length === 0) return new Map();
  const rows = (await withDbErrors(() =>
    db(TABLES.storageUsers)
      .select('cluster_id')
      .select(db.raw('sum(quota_bytes)::text AS total'))
      .whereIn('cluster_id', clusterIds as number[])
      .whereNotNull('quota_bytes')
      .groupBy('cluster_id'),
  )) as Array<{ cluster_id: number | string; total: string }>;
  return new Map(rows.map((r) => [Number(r.cluster_id), r.total]));
}
