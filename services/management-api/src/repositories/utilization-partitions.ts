import type { Knex } from 'knex';
import { DAY_MS, errors, type UtilizationRetention } from '@cairn/domain';
import type { Db } from '../db/database';

/**
 * Partitions of the utilization tables: hourly tables by UTC day, daily rollups by UTC month.
 * Names carry the bound (`utilization_storage_hourly_p20261124`, `utilization_storage_daily_p202611`)
 * so retention can tell a partition's age from its name alone. Creation and dropping are
 * serialised by an advisory lock: two writers creating the same day's partition would otherwise
 * race in the catalog.
 */
export const HOURLY_TABLES = ['utilization_storage_hourly', 'utilization_transfer_hourly'] as const;
export const DAILY_TABLES = ['utilization_storage_daily', 'utilization_transfer_daily'] as const;
const LOCK_KEY = 0x636169726e5554n; // "cairnUT"

const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const dayStart = (ms: number): number => Math.floor(ms / DAY_MS) * DAY_MS;
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

function dayPartition(parent: string, dayMs: number): PartitionSpec {
  return { parent, name: `${parent}_p${isoDay(dayMs).replace(/-/g, '')}`, from: `${isoDay(dayMs)} 00:00:00+00`, to: `${isoDay(dayMs + DAY_MS)} 00:00:00+00` };
}

function monthPartition(parent: string, ms: number): PartitionSpec {
  const from = monthStart(ms);
  return { parent, name: `${parent}_p${isoDay(from.getTime()).slice(0, 7).replace('-', '')}`, from: isoDay(from.getTime()), to: isoDay(nextMonth(from).getTime()) };
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
  await unavailableOnLockTimeout(() => db.transaction(async (trx) => {
    await lockPartitions(trx);
    const existing = await existingPartitions(trx, [...new Set(missing.map((s) => s.parent))]);
    for (const s of missing) {
      // Identifiers come from the fixed table names and a date; the bounds are literals built here.
      if (!existing.has(s.name)) await trx.raw(`CREATE TABLE ?? PARTITION OF ?? FOR VALUES FROM ('${s.from}') TO ('${s.to}')`, [s.name, s.parent]);
    }
  }));
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
    if ((e as { code?: string }).code === '55P03') throw errors.unavailable('A utilization partition is being created or dropped; try again shortly.');
    throw e;
  }
}

/** Makes sure the hourly partitions for these hours (epoch ms) exist. */
export async function ensureHourlyPartitions(db: Knex, hoursMs: Iterable<number>, tables: readonly string[] = HOURLY_TABLES): Promise<void> {
  const days = new Set<number>();
  for (const h of hoursMs) days.add(dayStart(h));
  await createPartitions(db, [...days].flatMap((d) => tables.map((t) => dayPartition(t, d))));
}

export async function ensureDailyPartitions(db: Knex, daysMs: Iterable<number>): Promise<void> {
  const months = new Set<number>();
  for (const d of daysMs) months.add(monthStart(d).getTime());
  await createPartitions(db, [...months].flatMap((m) => DAILY_TABLES.map((t) => monthPartition(t, m))));
}

/** Parses the bound from a partition's name; null for a name this module did not make. */
function partitionStart(parent: string, name: string): number | null {
  const m = new RegExp(`^${parent}_p(\\d{4})(\\d{2})(\\d{2})?$`).exec(name);
  if (!m) return null;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, m[3] ? Number(m[3]) : 1);
}

export interface MaintenanceReport {
  created: number;
  rolledUp: string[];
  dropped: string[];
}

/**
 * One maintenance pass: partitions for the next days and months, daily rollups of finished days
 * (the last two are rolled again: collectors may still send late samples for them), and dropping
 * of partitions wholly older than the retention. Safe to run from several replicas at once.
 */
export async function maintainUtilization(db: Knex, retention: UtilizationRetention, now: Date): Promise<MaintenanceReport> {
  const today = dayStart(now.getTime());
  const ahead = [0, 1, 2, 3].map((i) => today + i * DAY_MS);
  const before = knownOf(db).size;
  await ensureHourlyPartitions(db, ahead);
  await ensureDailyPartitions(db, [today, today + 32 * DAY_MS]);
  const created = knownOf(db).size - before;

  const hourlyOldest = today - retention.hourlyDays * DAY_MS;
  const rolledUp: string[] = [];
  const rolledRows = (await db.raw('SELECT day::text AS day FROM utilization_rollups')) as { rows: Array<{ day: string }> };
  const rolled = new Set(rolledRows.rows.map((r) => r.day));
  const existing = await existingPartitions(db, [...HOURLY_TABLES, ...DAILY_TABLES]);
  for (let day = hourlyOldest; day < today; day += DAY_MS) {
    const name = isoDay(day);
    const recent = today - day <= 2 * DAY_MS;
    if (rolled.has(name) && !recent) continue;
    if (!existing.has(dayPartition(HOURLY_TABLES[0], day).name)) continue;
    await rollUpDay(db, day);
    rolledUp.push(name);
  }

  const dropped: string[] = [];
  const dailyOldest = today - retention.dailyDays * DAY_MS;
  await db.transaction(async (trx) => {
    await lockPartitions(trx);
    for (const name of await existingPartitions(trx, [...HOURLY_TABLES, ...DAILY_TABLES])) {
      const hourly = HOURLY_TABLES.find((t) => partitionStart(t, name) !== null);
      const daily = DAILY_TABLES.find((t) => partitionStart(t, name) !== null);
      const start = partitionStart((hourly ?? daily)!, name);
      if (start === null) continue;
      // A partition goes when its whole span is older than the oldest day kept.
      const end = hourly ? start + DAY_MS : nextMonth(new Date(start)).getTime();
      if (end <= (hourly ? hourlyOldest : dailyOldest)) {
        await trx.raw('DROP TABLE ??', [name]);
        dropped.push(name);
      }
    }
    // Coverage is one small row per cluster and hour: kept as long as the rollups it qualifies.
    await trx('utilization_transfer_coverage').where('hour', '<', new Date(dailyOldest)).delete();
    await trx('utilization_transfer_batches').where('received_at', '<', new Date(hourlyOldest - DAY_MS)).delete();
    await trx('utilization_rollups').where('day', '<', isoDay(dailyOldest)).delete();
  });
  for (const name of dropped) knownOf(db).delete(name);
  return { created, rolledUp, dropped };
}

/** Rolls one UTC day of hourly rows (all clusters) into the daily tables, replacing what was there. */
export async function rollUpDay(db: Knex, dayMs: number): Promise<void> {
  const from = new Date(dayMs);
  const to = new Date(dayMs + DAY_MS);
  const day = isoDay(dayMs);
  await ensureDailyPartitions(db, [dayMs]);
  await db.transaction(async (trx) => {
    await trx.raw(
      `INSERT INTO utilization_storage_daily AS d
         (cluster_id, policy_index, account, day, byte_hours, bytes_used_peak, object_count, container_count, covered_hours, sampled_hours)
       SELECT cluster_id, policy_index, account, ?::date, sum(bytes_used), max(bytes_used),
              (array_agg(object_count ORDER BY hour DESC))[1], (array_agg(container_count ORDER BY hour DESC))[1],
              sum(bit_count(slots::bit(64))::real / slot_count), count(*)
         FROM utilization_storage_hourly WHERE hour >= ? AND hour < ?
        GROUP BY cluster_id, policy_index, account
       ON CONFLICT (cluster_id, account, policy_index, day) DO UPDATE SET
         byte_hours = excluded.byte_hours, bytes_used_peak = excluded.bytes_used_peak, object_count = excluded.object_count,
         container_count = excluded.container_count, covered_hours = excluded.covered_hours,
         sampled_hours = excluded.sampled_hours`,
      [day, from, to],
    );
    await trx.raw(
      `INSERT INTO utilization_transfer_daily AS d (cluster_id, policy_index, account, day, bytes_in, bytes_out, req_count)
       SELECT cluster_id, policy_index, account, ?::date, sum(bytes_in), sum(bytes_out), sum(req_count)
         FROM utilization_transfer_hourly WHERE hour >= ? AND hour < ?
        GROUP BY cluster_id, policy_index, account
       ON CONFLICT (cluster_id, account, policy_index, day) DO UPDATE SET
         bytes_in = excluded.bytes_in, bytes_out = excluded.bytes_out, req_count = excluded.req_count`,
      [day, from, to],
    );
    await trx.raw('INSERT INTO utilization_rollups (day) VALUES (?::date) ON CONFLICT (day) DO UPDATE SET rolled_at = now()', [day]);
  });
}
