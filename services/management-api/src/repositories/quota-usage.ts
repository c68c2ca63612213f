import { TABLES } from '@cairn/contract';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { TOTAL_POLICY } from './utilization';

/**
 * What quotas are measured against: a user's latest storage sample, and a cluster's byte quotas
 * added up. Both are read for a page of rows at once, beside the page (as quota states are), so the
 * list planner's SQL stays as it is.
 */

/** The account's totals at the latest hour the storage collector sampled it. */
export interface LatestUsage {
  /** Decimal strings (bigints). */
  bytesUsed: string;
  objectCount: string;
  hour: Date;
}

interface UsageRow {
  id: string | number;
  bytes_used: string | number;
  object_count: string | number;
  hour: Date | string;
}

/**
 * The latest storage sample of each user's account `AUTH_<user>`, by user id; a user never sampled
 * (or whose samples are past the hourly retention) has none. Per user, a backward index-only probe
 * of the hourly primary key (cluster_id, account, policy_index, hour): the partitions are by hour,
 * so Postgres reads them newest first and stops at the first row. The name is compared in the
 * account column's collation: usernames are COLLATE "C", and a comparison in another collation
 * than the index's would leave the account out of the index condition and read every account of
 * the cluster. Equality is byte equality in both, so the answer is the same.
 */
export async function latestUsageOf(
  db: Db,
  users: ReadonlyArray<{ id: string; clusterId: number; username: string }>,
): Promise<Map<string, LatestUsage>> {
  if (users.length === 0) return new Map();
  const rows = (await withDbErrors(() =>
    db.raw(
      `SELECT u.id, s.bytes_used, s.object_count, s.hour
         FROM ${TABLES.storageUsers} u
         CROSS JOIN LATERAL (
           SELECT h.bytes_used, h.object_count, h.hour FROM utilization_storage_hourly h
            WHERE h.cluster_id = u.cluster_id AND h.account = ('AUTH_' || u.username) COLLATE "default" AND h.policy_index = ?
            ORDER BY h.hour DESC LIMIT 1) s
        WHERE u.id = ANY(?::bigint[])`,
      [TOTAL_POLICY, users.map((u) => u.id)],
    ),
  )) as { rows: UsageRow[] };
  return new Map(
    rows.rows.map((r) => [
      String(r.id),
      { bytesUsed: String(r.bytes_used), objectCount: String(r.object_count), hour: new Date(r.hour) },
    ]),
  );
}

/**
 * The sum of the per-policy byte quotas of each cluster's users (`quota_bytes_policy`), by cluster id,
 * then by the policy's name as the quotas spell it (decimal strings); clusters without one are absent.
 */
export async function quotaBytesPolicyTotalsOf(
  db: Db,
  clusterIds: readonly number[],
): Promise<Map<number, Record<string, string>>> {
  if (clusterIds.length === 0) return new Map();
  const rows = (await withDbErrors(() =>
    db.raw(
      `SELECT u.cluster_id, p.key AS policy, sum(p.value::numeric)::text AS total
         FROM ${TABLES.storageUsers} u
         CROSS JOIN LATERAL jsonb_each_text(u.quota_bytes_policy) p
        WHERE u.cluster_id = ANY(?::int[]) AND jsonb_typeof(u.quota_bytes_policy) = 'object' AND p.value IS NOT NULL
        GROUP BY u.cluster_id, p.key
        ORDER BY p.key`,
      [clusterIds as number[]],
    ),
  )) as { rows: Array<{ cluster_id: number | string; policy: string; total: string }> };
  const totals = new Map<number, Record<string, string>>();
  for (const r of rows.rows) {
    const id = Number(r.cluster_id);
    totals.set(id, { ...totals.get(id), [r.policy]: r.total });
  }
  return totals;
}

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
