import { DAY_MS, TRANSFER_DETAIL_FIELD_NAMES } from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';

/**
 * Daily rollups, one cluster and one day at a time: each in a transaction of its own, so that a
 * failure (a lock timeout, a row the database refuses) leaves every other cluster's and every
 * other day's rollup in place, and is simply tried again at the next maintenance pass.
 * `utilization_cluster_rollups` says which (cluster, day) pairs the daily tables hold; the
 * per-day `utilization_rollups` is kept for the previous release (migration 20261127000000).
 */

/**
 * The largest value an hour's transfer sum holds (2^53 − 1 bytes or requests, 8 PiB: 2.5 TB/s for
 * a whole hour, for one account and policy). Writes saturate there, and rollups read no more than
 * this from an hour, so a day (24 hours) is at most 2^57.6 and fits the bigint columns, and every
 * figure up to the hour is an exact JSON number. Sums over days and policies are added as numeric.
 */
export const TRANSFER_HOUR_MAX = Number.MAX_SAFE_INTEGER;

/** Every summed transfer column: the totals, then the detail, in the order of TRANSFER_DETAIL_FIELDS. */
export const TRANSFER_SUM_COLUMNS = ['bytes_in', 'bytes_out', 'req_count', ...TRANSFER_DETAIL_FIELD_NAMES] as const;

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/**
 * Rolls one cluster's UTC day of hourly rows into the daily tables, replacing what was there; the day's daily
 * partitions must exist.
 */
export async function rollUpClusterDay(db: Db, clusterId: number, dayMs: number): Promise<void> {
  const from = new Date(dayMs);
  const to = new Date(dayMs + DAY_MS);
  const day = isoDay(dayMs);
  await db.transaction(async (trx) => {
    // A day's counts are those of the account's last sampled hour. A policy with no row in that
    // hour had no container left (Swift drops its headers), so its counts for the day are zero.
    await trx.raw(
      `INSERT INTO utilization_storage_daily AS d
         (cluster_id, policy_index, account, day, byte_hours, bytes_used_peak, object_count, container_count, covered_hours, sampled_hours)
       SELECT cluster_id, policy_index, account, ?::date, byte_hours, peak,
              CASE WHEN last_hour = max(last_hour) OVER w THEN object_count ELSE 0 END,
              CASE WHEN last_hour = max(last_hour) OVER w THEN container_count ELSE 0 END,
              covered, sampled
         FROM (SELECT cluster_id, policy_index, account, sum(bytes_used) AS byte_hours, max(bytes_used) AS peak, max(hour) AS last_hour,
                      (array_agg(object_count ORDER BY hour DESC))[1] AS object_count, (array_agg(container_count ORDER BY hour DESC))[1] AS container_count,
                      sum(bit_count(slots::bit(64))::real / slot_count) AS covered, count(*) AS sampled
                 FROM utilization_storage_hourly WHERE cluster_id = ? AND hour >= ? AND hour < ?
                GROUP BY cluster_id, account, policy_index) g
       WINDOW w AS (PARTITION BY cluster_id, account)
       ON CONFLICT (cluster_id, account, policy_index, day) DO UPDATE SET
         byte_hours = excluded.byte_hours, bytes_used_peak = excluded.bytes_used_peak, object_count = excluded.object_count,
         container_count = excluded.container_count, covered_hours = excluded.covered_hours,
         sampled_hours = excluded.sampled_hours`,
      [day, clusterId, from, to],
    );
    // least(): hours written before writes saturated may hold more than an hour can; they count as full.
    const columns = TRANSFER_SUM_COLUMNS;
    await trx.raw(
      `INSERT INTO utilization_transfer_daily AS d (cluster_id, policy_index, account, day, ${columns.map(() => '??').join(', ')})
       SELECT cluster_id, policy_index, account, ?::date, ${columns.map(() => 'sum(least(??, ?))').join(', ')}
         FROM utilization_transfer_hourly WHERE cluster_id = ? AND hour >= ? AND hour < ?
        GROUP BY cluster_id, policy_index, account
       ON CONFLICT (cluster_id, account, policy_index, day) DO UPDATE SET
         ${columns.map(() => '?? = ??').join(', ')}`,
      [
        ...columns,
        day,
        ...columns.flatMap((c) => [c, TRANSFER_HOUR_MAX]),
        clusterId,
        from,
        to,
        ...columns.flatMap((c) => [c, `excluded.${c}`]),
      ],
    );
    await trx.raw(
      `INSERT INTO utilization_cluster_rollups (cluster_id, day) VALUES (?, ?::date)
       ON CONFLICT (cluster_id, day) DO UPDATE SET rolled_at = now()`,
      [clusterId, day],
    );
  });
}

/** Marks a day rolled for the previous release's readers: only once every cluster's rollup of it is in place. */
export async function markDayRolledForAll(db: Db, dayMs: number): Promise<void> {
  await db.raw(
    'INSERT INTO utilization_rollups (day) VALUES (?::date) ON CONFLICT (day) DO UPDATE SET rolled_at = now()',
    [isoDay(dayMs)],
  );
}

/** The (cluster, day) pairs rolled up from `fromMs` on: cluster id -> set of days (epoch ms). */
export async function rolledDays(db: Db, fromMs: number): Promise<Map<number, Set<number>>> {
  const { rows } = (await db.raw(
    'SELECT cluster_id, day::text AS day FROM utilization_cluster_rollups WHERE day >= ?::date',
    [isoDay(fromMs)],
  )) as {
    rows: Array<{ cluster_id: number; day: string }>;
  };
  const out = new Map<number, Set<number>>();
  for (const r of rows) {
    const id = Number(r.cluster_id);
    if (!out.has(id)) out.set(id, new Set());
    out.get(id)!.add(Date.parse(`${r.day}T00:00:00Z`));
  }
  return out;
}

/** The days of [fromMs, toMs) rolled up for one cluster, as epoch ms of their UTC midnights. */
export async function clusterRolledDays(db: Db, clusterId: number, fromMs: number, toMs: number): Promise<Set<number>> {
  const { rows } = (await withDbErrors(() =>
    db.raw(
      'SELECT day::text AS day FROM utilization_cluster_rollups WHERE cluster_id = ? AND day >= ?::date AND day < ?::date',
      [clusterId, isoDay(fromMs), isoDay(toMs)],
    ),
  )) as { rows: Array<{ day: string }> };
  return new Set(rows.map((r) => Date.parse(`${r.day}T00:00:00Z`)));
}

/**
 * A write to a day already rolled up makes that cluster's rollup of it stale: the day is read from
 * the hourly rows again until maintenance rolls it anew. The per-day mark goes too, so that the
 * previous release's readers do the same.
 */
export async function invalidateRollups(db: Db, clusterId: number, hoursMs: number[]): Promise<void> {
  const days = [...new Set(hoursMs.map(isoDay))];
  if (days.length === 0) return;
  await withDbErrors(() =>
    db.raw('DELETE FROM utilization_cluster_rollups WHERE cluster_id = ? AND day = ANY(?::date[])', [clusterId, days]),
  );
  await withDbErrors(() => db.raw('DELETE FROM utilization_rollups WHERE day = ANY(?::date[])', [days]));
}

/** Forgets marks of days past the daily retention. */
export async function forgetRollupsBefore(db: Db, dayMs: number): Promise<void> {
  await db('utilization_cluster_rollups').where('day', '<', isoDay(dayMs)).delete();
  await db('utilization_rollups').where('day', '<', isoDay(dayMs)).delete();
}
