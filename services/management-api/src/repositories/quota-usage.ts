import { TABLES } from '@cairn/contract';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';

/**
 * What quotas are measured against: a user's latest storage sample, and a cluster's byte quotas
 * added up. A user's is a column of the statement that reads the user (as its quota state is),
 * after a list's page is cut.
 */

/** The account's totals at the latest hour the storage collector sampled it. */
export interface LatestUsage {
  /** Decimal strings (bigints). */
  bytesUsed: string;
  objectCount: string;
  hour: Date;
}

/**
 * Each user's account `AUTH_<user>` at its latest storage sample, as a column of the statement that
 * reads the user (`users`: its alias): a scalar subquery, one index lookup in
 * utilization_storage_latest (kept from the hourly samples, see its migration); NULL: never sampled,
 * or its samples are past the hourly retention. The figures go as text (bigints). The name is
 * compared in the account column's collation: usernames are COLLATE "C", and a comparison in
 * another collation than the index's would leave the account out of the index condition and read
 * every account of the cluster. Equality is byte equality in both, so the answer is the same.
 */
export const latestUsageColumn = (users: string) => ({
  sql: `(SELECT json_build_array(l.bytes_used::text, l.object_count::text, l.hour) FROM utilization_storage_latest AS l
          WHERE l.cluster_id = ${users}.cluster_id AND l.account = (?::text || ${users}.username) COLLATE "default") AS latest_usage`,
  bindings: ['AUTH_'],
});

export interface LatestUsageColumn {
  /** [bytes_used, object_count, hour]; node-postgres parses json, other drivers may hand back its text. */
  latest_usage: [string, string, string] | string | null;
}

export const latestUsageOfRow = (r: LatestUsageColumn): LatestUsage | null => {
  if (r.latest_usage === null) return null;
  const [bytesUsed, objectCount, hour] = (
    typeof r.latest_usage === 'string' ? JSON.parse(r.latest_usage) : r.latest_usage
  ) as [string, string, string];
  return { bytesUsed, objectCount, hour: new Date(timeOf(hour)) };
};

/**
 * The time a sample's hour text names. A page's users share a few sample hours, so the last text
 * read is kept: parsing it was most of reading a row's usage.
 */
let lastHourText = '';
let lastHourTime = NaN;
const timeOf = (text: string): number => {
  if (text !== lastHourText) {
    lastHourTime = Date.parse(text);
    lastHourText = text;
  }
  return lastHourTime;
};

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

/**
 * The account's figures per storage policy at one sampled hour (the hour of its latest totals), by
 * policy index (decimal strings); a policy the sample did not report holds nothing.
 */
export async function policyUsageAt(
  db: Db,
  clusterId: number,
  account: string,
  hour: Date,
): Promise<Map<number, { bytesUsed: string; objectCount: string }>> {
  const rows = (await withDbErrors(() =>
    db('utilization_storage_hourly')
      .select('policy_index', db.raw('bytes_used::text AS bytes_used'), db.raw('object_count::text AS object_count'))
      .where({ cluster_id: clusterId, account, hour })
      .andWhere('policy_index', '>=', 0),
  )) as Array<{ policy_index: number | string; bytes_used: string; object_count: string }>;
  return new Map(rows.map((r) => [Number(r.policy_index), { bytesUsed: r.bytes_used, objectCount: r.object_count }]));
}
