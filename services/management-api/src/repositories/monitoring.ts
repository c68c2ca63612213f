import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';

/** SQL of what monitoring reads and the collectors' posts record (see the collector_runs migration). */

export type Collector = 'capacity' | 'storage' | 'transfer' | 'health';

/** Marks a collector's post as accepted now (first and last time); in the post's transaction. */
export async function recordCollectorRun(db: Db, clusterId: number, collector: Collector): Promise<void> {
  await withDbErrors(() =>
    db.raw(
      `INSERT INTO collector_runs AS r (cluster_id, collector, first_success_at, last_success_at) VALUES (?, ?, now(), now())
       ON CONFLICT (cluster_id, collector) DO UPDATE SET last_success_at = now()`,
      [clusterId, collector],
    ),
  );
}

/** ORs a storage round's slot into its hour's cluster-wide coverage. */
export async function addStorageCoverage(
  db: Db,
  clusterId: number,
  hour: Date,
  slots: bigint,
  slotCount: number,
): Promise<void> {
  await withDbErrors(() =>
    db.raw(
      `INSERT INTO utilization_storage_coverage AS c (cluster_id, hour, slots, slot_count) VALUES (?, ?, ?, ?)
       ON CONFLICT (cluster_id, hour) DO UPDATE SET slots = c.slots | excluded.slots, slot_count = greatest(c.slot_count, excluded.slot_count)`,
      [clusterId, hour.toISOString(), slots.toString(), slotCount],
    ),
  );
}

export interface CollectorRun {
  cluster: string;
  collector: Collector;
  lastSuccessSeconds: number;
}

export async function collectorRuns(db: Db): Promise<CollectorRun[]> {
  const rows = (await withDbErrors(() =>
    db.raw(`SELECT c.name AS cluster, r.collector, extract(epoch FROM r.last_success_at)::float8 AS last
              FROM collector_runs r JOIN clusters c ON c.id = r.cluster_id`),
  )) as { rows: Array<{ cluster: string; collector: Collector; last: number }> };
  return rows.rows.map((r) => ({ cluster: r.cluster, collector: r.collector, lastSuccessSeconds: Number(r.last) }));
}

export interface RingSetUsage {
  cluster: string;
  ringSet: string;
  /** total_used_pct of the latest device report; null when the set has no raw capacity. */
  usedPct: number | null;
}

/** One row per cluster's latest report, a few ring sets each. */
export async function ringSetUsage(db: Db): Promise<RingSetUsage[]> {
  const rows = (await withDbErrors(() =>
    db.raw(`SELECT c.name AS cluster, e->>'ring_set' AS ring_set, (e->>'total_used_pct')::float8 AS used_pct
              FROM capacity_reports r JOIN clusters c ON c.id = r.cluster_id, jsonb_array_elements(r.elements) AS e`),
  )) as { rows: Array<{ cluster: string; ring_set: string; used_pct: number | null }> };
  return rows.rows.map((r) => ({
    cluster: r.cluster,
    ringSet: r.ring_set,
    usedPct: r.used_pct === null ? null : Number(r.used_pct),
  }));
}

export interface IncompleteHours {
  cluster: string;
  kind: 'storage' | 'transfer';
  hours: number;
}

/**
 * Hours of a window whose data is not all in, per cluster whose collector has posted: storage,
 * hours in which not every collection round posted; transfer, hours not every minute of which is
 * covered by ingested logs. Only hours from the collector's first post count. Each window is at
 * most a day of hours: at most a few dozen primary-key lookups per cluster.
 */
export async function incompleteHours(
  db: Db,
  windows: Record<'storage' | 'transfer', { from: Date; to: Date }>,
): Promise<IncompleteHours[]> {
  const query = (kind: 'storage' | 'transfer', table: string, complete: string) =>
    withDbErrors(() =>
      db.raw(
        `SELECT c.name AS cluster, count(x.hour) FILTER (WHERE x.complete IS NOT TRUE)::int AS hours
           FROM collector_runs r
           JOIN clusters c ON c.id = r.cluster_id
           LEFT JOIN LATERAL (
             SELECT h AS hour, (SELECT ${complete} FROM ${table} t WHERE t.cluster_id = r.cluster_id AND t.hour = h) AS complete
               FROM generate_series(greatest(?::timestamptz, date_trunc('hour', r.first_success_at)), ?::timestamptz, interval '1 hour') AS h
           ) x ON true
          WHERE r.collector = ?
          GROUP BY c.name`,
        [windows[kind].from.toISOString(), new Date(windows[kind].to.getTime() - 3_600_000).toISOString(), kind],
      ),
    ) as Promise<{ rows: Array<{ cluster: string; hours: number }> }>;
  const [storage, transfer] = await Promise.all([
    query('storage', 'utilization_storage_coverage', 'bit_count(t.slots::bit(64)) >= t.slot_count'),
    query('transfer', 'utilization_transfer_coverage', 'bit_count(t.minutes::bit(64)) >= 60'),
  ]);
  return [
    ...storage.rows.map((r) => ({ cluster: r.cluster, kind: 'storage' as const, hours: Number(r.hours) })),
    ...transfer.rows.map((r) => ({ cluster: r.cluster, kind: 'transfer' as const, hours: Number(r.hours) })),
  ];
}
