import type { Knex } from 'knex';
import { DAY_MS, errors, type UtilizationRetention } from '@cairn/domain';
import type { Db } from '../db/database';
import { TOTAL_POLICY } from './utilization';
import { forgetRollupsBefore, markDayRolledForAll, rollUpClusterDay, rolledDays } from './utilization-rollups';

/**
 * Partitions of the utilization tables: hourly tables by UTC week (Monday to Monday), daily rollups
 * by UTC month. Names carry the bound (`utilization_storage_hourly_w20261123`,
 * `utilization_storage_daily_p202611`) so retention can tell a partition's age from its name alone.
 * Creation and dropping are serialised by an advisory lock: two writers creating the same week's
 * partition would otherwise race in the catalog.
 *
 * Why weeks: one account's 31-day detail reads one key range per partition and policy, so daily
 * partitions cost 31 index descents per policy (62 leaf pages, mostly cold, plus planning over
 * ~95 partitions) where weekly ones cost 5. Reads of one day for every account (rollups, the
 * summary's partial days) use the BRIN index on `hour` (migration 20261124030000): rows arrive a
 * round at a time, so a day is a contiguous run of the week's heap.
 *
 * Hourly tables partitioned by day (`_pYYYYMMDD`, before weekly partitions) keep working: a week
 * that already has day partitions goes on getting day partitions, since a week's partition may not
 * overlap them, and retention drops both kinds.
 */
export const HOURLY_TABLES = ['utilization_storage_hourly', 'utilization_transfer_hourly'] as const;
export const DAILY_TABLES = ['utilization_storage_daily', 'utilization_transfer_daily'] as const;
const LOCK_KEY = 0x636169726e5554n; // "cairnUT"

const WEEK_MS = 7 * DAY_MS;
/** 1970-01-05, the first Monday after the epoch. */
const FIRST_MONDAY_MS = 4 * DAY_MS;

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const dayStart = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;
const weekStart = (ms: number): number => Math.floor((ms - FIRST_MONDAY_MS) / WEEK_MS) * WEEK_MS + FIRST_MONDAY_MS;
const monthStart = (ms: number): Date => {
  const d = new Date(ms);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1));
};
const nextMonth = (d: Date): Date => new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));

interface PartitionSpec {
  parent: string;
  name: string;
  from: string;
  to: string;
}

function spanPartition(parent: string, tag: 'p' | 'w', startMs: number, lengthMs: number): PartitionSpec {
  return {
    parent,
    name: `${parent}_${tag}${isoDay(startMs).replace(/-/g, '')}`,
    from: `${isoDay(startMs)} 00:00:00+00`,
    to: `${isoDay(startMs + lengthMs)} 00:00:00+00`,
  };
}
const weekPartition = (parent: string, ms: number): PartitionSpec => spanPartition(parent, 'w', weekStart(ms), WEEK_MS);
/** Hourly partitions of one day: made before weekly partitions, still used for the weeks that have them. */
const dayPartition = (parent: string, ms: number): PartitionSpec => spanPartition(parent, 'p', dayStart(ms), DAY_MS);

function monthPartition(parent: string, ms: number): PartitionSpec {
  const from = monthStart(ms);
  return {
    parent,
    name: `${parent}_p${isoDay(from.getTime()).slice(0, 7).replace('-', '')}`,
    from: isoDay(from.getTime()),
    to: isoDay(nextMonth(from).getTime()),
  };
}

/** Partitions known to exist, per database handle: writes check the catalog once per process and day. */
const known = new WeakMap<object, Set<string>>();
const knownOf = (db: Db): Set<string> => {
  const key = (db as Knex.Transaction).isTransaction ? (db as unknown as { client: object }).client : db;
  let set = known.get(key);
  if (!set) known.set(key, (set = new Set()));
  return set;
};

async function existingPartitions(db: Db, parents: readonly string[]): Promise<Set<string>> {
  const rows = (await db.raw(
    `SELECT c.relname AS name FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent
      WHERE p.relname = ANY(?)`,
    [parents as string[]],
  )) as { rows: Array<{ name: string }> };
  return new Set(rows.rows.map((r) => r.name));
}

async function createPartitions(db: Knex, specs: PartitionSpec[]): Promise<void> {
  const cache = knownOf(db);
  const missing = specs.filter((s) => !cache.has(s.name));
  if (missing.length === 0) return;
  await unavailableOnLockTimeout(() =>
    db.transaction(async (trx) => {
      await lockPartitions(trx);
      const existing = await existingPartitions(trx, [...new Set(missing.map((s) => s.parent))]);
      for (const s of missing) {
        // Identifiers come from the fixed table names and a date; the bounds are literals built here.
        if (!existing.has(s.name))
          await trx.raw(`CREATE TABLE ?? PARTITION OF ?? FOR VALUES FROM ('${s.from}') TO ('${s.to}')`, [
            s.name,
            s.parent,
          ]);
      }
    }),
  );
  for (const s of missing) cache.add(s.name);
}

/**
 * Serialises partition changes between replicas, and bounds how long a change waits for the
 * parent table: creating or dropping a partition locks the parent exclusively, and a request
 * queued behind a lock that waits for a long export would stall every read of the table. A
 * change that cannot get its lock in time fails (503 for a write; maintenance retries later).
 */
async function lockPartitions(trx: Knex.Transaction): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(?)', [LOCK_KEY.toString()]);
  await trx.raw("SET LOCAL lock_timeout = '3s'");
}

async function unavailableOnLockTimeout(fn: () => Promise<void>): Promise<void> {
  try {
    await fn();
  } catch (e) {
    if ((e as { code?: string }).code === '55P03')
      throw errors.unavailable('A utilization partition is being created or dropped; try again shortly.');
    throw e;
  }
}

/** The hourly partition holding `dayMs`, if one exists: the week's, or (made before weeks) the day's. */
function hourlyPartitionOf(existing: ReadonlySet<string>, parent: string, dayMs: number): string | null {
  for (const spec of [weekPartition(parent, dayMs), dayPartition(parent, dayMs)])
    if (existing.has(spec.name)) return spec.name;
  return null;
}

/** Makes sure the hourly partitions for these hours (epoch ms) exist. */
export async function ensureHourlyPartitions(
  db: Knex,
  hoursMs: Iterable<number>,
  tables: readonly string[] = HOURLY_TABLES,
): Promise<void> {
  const days = new Set<number>();
  for (const h of hoursMs) days.add(dayStart(h));
  const cache = knownOf(db);
  const wanted = new Map<string, PartitionSpec>();
  let existing: Set<string> | undefined;
  for (const day of days) {
    for (const parent of tables) {
      if (hourlyPartitionOf(cache, parent, day)) continue;
      // Once per process and week: the catalog says whether the week has a partition, or day partitions.
      existing ??= await existingPartitions(db, tables);
      const found = hourlyPartitionOf(existing, parent, day);
      if (found) {
        cache.add(found);
        continue;
      }
      const weekHasDays = Array.from({ length: 7 }, (_, i) => weekStart(day) + i * DAY_MS).some((d) =>
        existing!.has(dayPartition(parent, d).name),
      );
      const spec = weekHasDays ? dayPartition(parent, day) : weekPartition(parent, day);
      wanted.set(spec.name, spec);
    }
  }
  await createPartitions(db, [...wanted.values()]);
}

export async function ensureDailyPartitions(db: Knex, daysMs: Iterable<number>): Promise<void> {
  const months = new Set<number>();
  for (const d of daysMs) months.add(monthStart(d).getTime());
  await createPartitions(
    db,
    [...months].flatMap((m) => DAILY_TABLES.map((t) => monthPartition(t, m))),
  );
}

/**
 * The span of a partition, from its name (`_wYYYYMMDD` a week, `_pYYYYMMDD` a day, `_pYYYYMM` a month); null for a name
 * this module did not make.
 */
function partitionSpan(parent: string, name: string): { start: number; end: number } | null {
  const m = new RegExp(`^${parent}_([pw])(\\d{4})(\\d{2})(\\d{2})?$`).exec(name);
  if (!m) return null;
  const start = Date.UTC(Number(m[2]), Number(m[3]) - 1, m[4] ? Number(m[4]) : 1);
  if (m[1] === 'w') return m[4] ? { start, end: start + WEEK_MS } : null;
  return { start, end: m[4] ? start + DAY_MS : nextMonth(new Date(start)).getTime() };
}

export interface RollupFailure {
  clusterId: number;
  day: string;
  error: unknown;
}

export interface MaintenanceReport {
  created: number;
  /** Days rolled up for every cluster in this pass. */
  rolledUp: string[];
  /** (cluster, day) rollups that failed in this pass; each is tried again at the next. */
  failed: RollupFailure[];
  /** Per cluster id, the oldest finished day still not rolled up after this pass (epoch ms), or null. */
  backlog: Map<number, number | null>;
  dropped: string[];
  /** Hourly partitions past the retention kept because a day of theirs is not rolled up yet. */
  kept: string[];
}

/** Told of each failed rollup as it happens (to log it and count it). */
export type RollupFailed = (failure: RollupFailure) => void;

/**
 * One maintenance pass: partitions for the next days and months, daily rollups of finished days
 * (the last two are rolled again: collectors may still send late samples for them), and dropping
 * of partitions wholly older than the retention. Safe to run from several replicas at once.
 *
 * Each cluster's day is rolled in a transaction of its own: a failure is reported, counted in
 * `failed` and tried again next pass, and stops nothing else. An hourly partition past the
 * retention is dropped only once every day of it is rolled up for every cluster (its rows are
 * otherwise gone from every summary); until then it is kept and its days retried.
 */
export async function maintainUtilization(
  db: Knex,
  retention: UtilizationRetention,
  now: Date,
  onFailure?: RollupFailed,
): Promise<MaintenanceReport> {
  const today = dayStart(now.getTime());
  const ahead = [0, 1, 2, 3].map((i) => today + i * DAY_MS);
  const before = knownOf(db).size;
  await ensureHourlyPartitions(db, ahead);
  await ensureDailyPartitions(db, [today, today + 32 * DAY_MS]);
  const created = knownOf(db).size - before;

  const hourlyOldest = today - retention.hourlyDays * DAY_MS;
  const dailyOldest = today - retention.dailyDays * DAY_MS;
  const existing = await existingPartitions(db, [...HOURLY_TABLES, ...DAILY_TABLES]);
  // Days before the hourly retention are rolled too while a partition still holds them (kept back below).
  let firstDay = hourlyOldest;
  for (const name of existing) {
    const span = partitionSpan(HOURLY_TABLES[0], name) ?? partitionSpan(HOURLY_TABLES[1], name);
    if (span && span.start < firstDay) firstDay = Math.max(span.start, dailyOldest);
  }
  const clusters = ((await db('clusters').select('id').orderBy('id')) as Array<{ id: number }>).map((c) =>
    Number(c.id),
  );
  const rolled = await rolledDays(db, firstDay);
  const rolledUp: string[] = [];
  const failed: RollupFailure[] = [];
  const fail = (failure: RollupFailure) => {
    failed.push(failure);
    onFailure?.(failure);
  };
  const days: number[] = [];
  for (let day = firstDay; day < today; day += DAY_MS) {
    if (HOURLY_TABLES.some((t) => hourlyPartitionOf(existing, t, day))) days.push(day);
  }
  for (const day of days) {
    const name = isoDay(day);
    const recent = today - day <= 2 * DAY_MS;
    const todo = clusters.filter((c) => recent || !rolled.get(c)?.has(day));
    if (todo.length === 0) continue;
    try {
      await ensureDailyPartitions(db, [day]);
    } catch (error) {
      for (const clusterId of todo) fail({ clusterId, day: name, error });
      continue;
    }
    let all = true;
    for (const clusterId of todo) {
      try {
        await rollUpClusterDay(db, clusterId, day);
        if (!rolled.has(clusterId)) rolled.set(clusterId, new Set());
        rolled.get(clusterId)!.add(day);
      } catch (error) {
        rolled.get(clusterId)?.delete(day);
        all = false;
        fail({ clusterId, day: name, error });
      }
    }
    if (all) {
      await markDayRolledForAll(db, day);
      rolledUp.push(name);
    }
  }
  const isRolled = (day: number) => clusters.every((c) => rolled.get(c)?.has(day));
  const backlog = new Map<number, number | null>(
    clusters.map((c) => [c, days.find((d) => !rolled.get(c)?.has(d)) ?? null]),
  );

  const dropped: string[] = [];
  const kept: string[] = [];
  await db.transaction(async (trx) => {
    await lockPartitions(trx);
    for (const name of await existingPartitions(trx, [...HOURLY_TABLES, ...DAILY_TABLES])) {
      const hourly = HOURLY_TABLES.find((t) => partitionSpan(t, name) !== null);
      const daily = DAILY_TABLES.find((t) => partitionSpan(t, name) !== null);
      const span = partitionSpan((hourly ?? daily)!, name);
      if (span === null) continue;
      // A partition goes when its whole span is older than the oldest day kept.
      if (span.end > (hourly ? hourlyOldest : dailyOldest)) continue;
      if (hourly && span.end > dailyOldest && !everyDay(span, isRolled)) {
        kept.push(name);
        continue;
      }
      await trx.raw('DROP TABLE ??', [name]);
      dropped.push(name);
      if (hourly === HOURLY_TABLES[0]) await latestStorageDropped(trx, span);
    }
    // Coverage is one small row per cluster and hour: kept as long as the rollups it qualifies.
    await trx('utilization_transfer_coverage').where('hour', '<', new Date(dailyOldest)).delete();
    await trx('utilization_transfer_batches')
      .where('received_at', '<', new Date(hourlyOldest - DAY_MS))
      .delete();
    await forgetRollupsBefore(trx, dailyOldest);
  });
  for (const name of dropped) knownOf(db).delete(name);
  return { created, rolledUp, failed, backlog, dropped, kept };
}

/**
 * The accounts whose latest sample (utilization_storage_latest, see its migration) was in a dropped
 * hourly partition: back to their latest sample in the partitions left, or none.
 */
async function latestStorageDropped(trx: Knex.Transaction, span: { start: number; end: number }): Promise<void> {
  const within = [new Date(span.start), new Date(span.end)];
  await trx.raw(
    `INSERT INTO utilization_storage_latest AS l (cluster_id, account, hour, bytes_used, object_count)
     SELECT g.cluster_id, g.account, s.hour, s.bytes_used, s.object_count
       FROM utilization_storage_latest g
       CROSS JOIN LATERAL (
         SELECT h.hour, h.bytes_used, h.object_count FROM utilization_storage_hourly h
          WHERE h.cluster_id = g.cluster_id AND h.account = g.account AND h.policy_index = ?
          ORDER BY h.hour DESC LIMIT 1) s
      WHERE g.hour >= ? AND g.hour < ?
     ON CONFLICT (cluster_id, account) DO UPDATE
       SET hour = excluded.hour, bytes_used = excluded.bytes_used, object_count = excluded.object_count`,
    [TOTAL_POLICY, ...within],
  );
  await trx.raw('DELETE FROM utilization_storage_latest WHERE hour >= ? AND hour < ?', within);
}

function everyDay(span: { start: number; end: number }, test: (day: number) => boolean): boolean {
  for (let day = span.start; day < span.end; day += DAY_MS) if (!test(day)) return false;
  return true;
}

/**
 * Rolls one UTC day of every cluster into the daily tables (each cluster on its own); throws the first failure after
 * trying all.
 */
export async function rollUpDay(db: Knex, dayMs: number): Promise<void> {
  await ensureDailyPartitions(db, [dayMs]);
  const clusters = (await db('clusters').select('id').orderBy('id')) as Array<{ id: number }>;
  let first: unknown;
  for (const c of clusters) await rollUpClusterDay(db, Number(c.id), dayMs).catch((e: unknown) => (first ??= e));
  if (first !== undefined) throw first;
  await markDayRolledForAll(db, dayMs);
}
