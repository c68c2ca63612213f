import type { Knex } from 'knex';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import type { Filter } from './list-types';
import { applyFilters } from './list-planner';
import { exactCount, TOTAL_POLICY, type Count, type HourRange } from './utilization';
import { clusterRolledDays, TRANSFER_SUM_COLUMNS } from './utilization-rollups';
import { TRANSFER_DETAIL_FIELD_NAMES, type TransferDetailField, ZERO_TRANSFER_DETAIL } from '@cairn/domain';

/**
 * The billing summary's reads. Whole days that maintenance has rolled up are read from the daily
 * tables (one row per account, policy and day instead of 24), the rest of the range from the
 * hourly ones: a month's summary of 100k accounts reads a few million rows, not seventy.
 */
const DAY_MS = 86_400_000;

type Span = [Date, Date];

export interface RangeSplit {
  /** Hour spans read from the hourly tables. */
  hourly: Span[];
  /** Day spans (UTC midnights, end exclusive) read from the daily rollups. */
  daily: Span[];
}

/** Splits a range of stored hours into rolled-up whole days and the hours around and between them. */
export async function splitRange(db: Db, clusterId: number, range: HourRange): Promise<RangeSplit> {
  const from = range.from.getTime();
  const to = range.to.getTime();
  const firstDay = Math.ceil(from / DAY_MS) * DAY_MS;
  const lastDay = Math.floor(to / DAY_MS) * DAY_MS;
  const rolled = firstDay < lastDay ? await clusterRolledDays(db, clusterId, firstDay, lastDay) : new Set<number>();
  const hourly: Span[] = [];
  const daily: Span[] = [];
  const push = (spans: Span[], a: number, b: number) => {
    const last = spans[spans.length - 1];
    if (last && last[1].getTime() === a) last[1] = new Date(b);
    else spans.push([new Date(a), new Date(b)]);
  };
  let at = from;
  while (at < to) {
    if (at % DAY_MS === 0 && rolled.has(at) && at + DAY_MS <= to) {
      push(daily, at, at + DAY_MS);
      at += DAY_MS;
    } else {
      const next = Math.min(to, Math.floor(at / DAY_MS) * DAY_MS + DAY_MS);
      push(hourly, at, next);
      at = next;
    }
  }
  return { hourly, daily };
}

/** `(col >= ? AND col < ?) OR ...` for the spans; the bounds are bound parameters. */
function spansWhere(qb: Knex.QueryBuilder, column: string, spans: Span[], asDate: boolean): Knex.QueryBuilder {
  const bound = (d: Date) => (asDate ? d.toISOString().slice(0, 10) : d);
  return qb.where((w) => {
    for (const [a, b] of spans) w.orWhere((x) => x.where(column, '>=', bound(a)).where(column, '<', bound(b)));
  });
}

const PARTS = [
  { table: 'utilization_storage_hourly', column: 'hour', daily: false, storage: true },
  { table: 'utilization_storage_daily', column: 'day', daily: true, storage: true },
  { table: 'utilization_transfer_hourly', column: 'hour', daily: false, storage: false },
  { table: 'utilization_transfer_daily', column: 'day', daily: true, storage: false },
] as const;

/** One DISTINCT account query per table that has part of the range; `u` is the alias filters use. */
function accountParts(
  db: Db,
  clusterId: number,
  split: RangeSplit,
  filters: readonly Filter[],
  after: string | undefined,
  limit: number | null,
): Knex.QueryBuilder[] {
  const parts: Knex.QueryBuilder[] = [];
  for (const part of PARTS) {
    const spans = part.daily ? split.daily : split.hourly;
    if (spans.length === 0) continue;
    const q = db(`${part.table} as u`).distinct('u.account').where('u.cluster_id', clusterId);
    if (part.storage) q.where('u.policy_index', TOTAL_POLICY);
    spansWhere(q, `u.${part.column}`, spans, part.daily);
    applyFilters(q, filters);
    if (after !== undefined) q.where('u.account', '>', after);
    if (limit !== null) q.orderBy('u.account').limit(limit);
    parts.push(q);
  }
  return parts;
}

const unionOf = (db: Db, parts: Knex.QueryBuilder[]) => db.raw(parts.map(() => '(?)').join(' UNION '), parts);

/** Accounts with storage or transfer in the range, in name order, from a key on (exports) or by position (pages). */
export async function summaryAccounts(
  db: Db,
  clusterId: number,
  split: RangeSplit,
  filters: readonly Filter[],
  page: { limit: number; offset?: number; after?: string },
): Promise<string[]> {
  const parts = accountParts(db, clusterId, split, filters, page.after, page.limit + (page.offset ?? 0));
  if (parts.length === 0) return [];
  const rows = (await withDbErrors(() =>
    db
      .select('account')
      .from(db.raw('(?) AS a', [unionOf(db, parts)]))
      .orderBy('account')
      .limit(page.limit)
      .offset(page.offset ?? 0),
  )) as Array<{ account: string }>;
  return rows.map((r) => r.account);
}

export async function countSummaryAccounts(
  db: Db,
  clusterId: number,
  split: RangeSplit,
  filters: readonly Filter[],
): Promise<number> {
  const parts = accountParts(db, clusterId, split, filters, undefined, null);
  if (parts.length === 0) return 0;
  const [row] = (await withDbErrors(() =>
    db.count({ n: '*' }).from(db.raw('(?) AS a', [unionOf(db, parts)])),
  )) as Array<{ n: string | number }>;
  return Number(row!.n);
}

export interface PolicyFigures {
  byteHours: number;
  hours: number;
  peak: number;
  /** Epoch seconds of the latest sample these figures hold (a rolled-up day counts as its 23:00). */
  latestAt: number;
  objectCount: number;
  containerCount: number;
  covered: number;
}

export interface SummaryRow {
  account: string;
  /** Per policy index (TOTAL_POLICY for the account's totals). */
  storage: Map<number, PolicyFigures>;
  bytesIn: Count;
  bytesOut: Count;
  reqCount: Count;
  /** Not to be written to: rows without transfer share one object. */
  detail: Readonly<Record<TransferDetailField, Count>>;
}

/** The transfer columns a summary adds up: names from the code (TRANSFER_SUM_COLUMNS), never from a request. */
const TRANSFER_LIST = TRANSFER_SUM_COLUMNS.join(', ');
const TRANSFER_SUMS = TRANSFER_SUM_COLUMNS.map((c) => `sum(${c}) AS ${c}`).join(', ');

/** The SQL and bindings of `(col >= ? AND col < ?) OR ...`. */
function spansSql(column: string, spans: Span[], asDate: boolean): { sql: string; bindings: unknown[] } {
  return {
    sql: `(${spans.map(() => `(${column} >= ? AND ${column} < ?)`).join(' OR ')})`,
    bindings: spans.flatMap(([a, b]): unknown[] =>
      asDate ? [a.toISOString().slice(0, 10), b.toISOString().slice(0, 10)] : [a, b],
    ),
  };
}

/**
 * Billing figures of the given accounts (sorted by name) over the range: each source reads one
 * contiguous key range, first to last account. The counts "at the end" are those of the latest
 * sample: max() over [epoch, objects, containers] arrays picks the latest hour's pair.
 */
export async function summarize(
  db: Db,
  clusterId: number,
  accounts: string[],
  split: RangeSplit,
): Promise<SummaryRow[]> {
  if (accounts.length === 0) return [];
  const first = accounts[0]!;
  const last = accounts[accounts.length - 1]!;
  const storageParts: string[] = [];
  const transferParts: string[] = [];
  const storageBindings: unknown[] = [];
  const transferBindings: unknown[] = [];
  if (split.hourly.length) {
    const w = spansSql('hour', split.hourly, false);
    storageParts.push(`SELECT account, policy_index, bytes_used AS byte_hours, 1 AS hours, bytes_used AS peak,
        ARRAY[extract(epoch FROM hour)::bigint, object_count, container_count] AS latest, bit_count(slots::bit(64))::float8 / slot_count AS covered
      FROM utilization_storage_hourly WHERE cluster_id = ? AND account >= ? AND account <= ? AND ${w.sql}`);
    storageBindings.push(clusterId, first, last, ...w.bindings);
    transferParts.push(
      `SELECT account, ${TRANSFER_LIST} FROM utilization_transfer_hourly WHERE cluster_id = ? AND account >= ? AND account <= ? AND ${w.sql}`,
    );
    transferBindings.push(clusterId, first, last, ...w.bindings);
  }
  if (split.daily.length) {
    const w = spansSql('day', split.daily, true);
    // A day's counts are those of its last sampled hour: ordered as if taken at 23:00.
    storageParts.push(`SELECT account, policy_index, byte_hours, sampled_hours AS hours, bytes_used_peak AS peak,
        ARRAY[extract(epoch FROM day::timestamp AT TIME ZONE 'UTC')::bigint + 82800, object_count, container_count] AS latest, covered_hours::float8 AS covered
      FROM utilization_storage_daily WHERE cluster_id = ? AND account >= ? AND account <= ? AND ${w.sql}`);
    storageBindings.push(clusterId, first, last, ...w.bindings);
    transferParts.push(
      `SELECT account, ${TRANSFER_LIST} FROM utilization_transfer_daily WHERE cluster_id = ? AND account >= ? AND account <= ? AND ${w.sql}`,
    );
    transferBindings.push(clusterId, first, last, ...w.bindings);
  }
  // Rows as arrays (the driver's rowMode): a summary reads a few rows per account, and naming each
  // row's columns cost more than the figures themselves.
  const storage = (await withDbErrors(() =>
    db
      .raw(
        `SELECT account, policy_index, sum(byte_hours) AS byte_hours, sum(hours) AS hours, max(peak) AS peak,
              (max(latest))[1] AS latest_at, (max(latest))[2] AS object_count, (max(latest))[3] AS container_count, sum(covered) AS covered
         FROM (${storageParts.join(' UNION ALL ')}) s GROUP BY account, policy_index`,
        storageBindings as Knex.RawBinding[],
      )
      .options({ rowMode: 'array' }),
  )) as { rows: Array<[string, ...Array<string | number>]> };
  const transfer = (await withDbErrors(() =>
    db
      .raw(
        `SELECT account, ${TRANSFER_SUMS}
         FROM (${transferParts.join(' UNION ALL ')}) t GROUP BY account`,
        transferBindings as Knex.RawBinding[],
      )
      .options({ rowMode: 'array' }),
  )) as { rows: Array<[string, ...Array<string | number | bigint>]> };
  const byAccount = new Map<string, SummaryRow>();
  for (const a of accounts)
    byAccount.set(a, {
      account: a,
      storage: new Map(),
      bytesIn: 0,
      bytesOut: 0,
      reqCount: 0,
      detail: ZERO_TRANSFER_DETAIL,
    });
  for (const r of storage.rows) {
    byAccount.get(r[0])?.storage.set(Number(r[1]), {
      byteHours: Number(r[2]),
      hours: Number(r[3]),
      peak: Number(r[4]),
      latestAt: Number(r[5]),
      objectCount: Number(r[6]),
      containerCount: Number(r[7]),
      covered: Number(r[8]),
    });
  }
  // Columns after the account, in TRANSFER_SUM_COLUMNS order: the totals, then the detail fields.
  const names = TRANSFER_DETAIL_FIELD_NAMES;
  const firstDetail = 1 + TRANSFER_SUM_COLUMNS.length - names.length;
  for (const r of transfer.rows) {
    const row = byAccount.get(r[0]);
    if (!row) continue;
    row.bytesIn = exactCount(r[1]);
    row.bytesOut = exactCount(r[2]);
    row.reqCount = exactCount(r[3]);
    const detail = {} as Record<TransferDetailField, Count>;
    for (let i = 0; i < names.length; i++) detail[names[i]!] = exactCount(r[firstDetail + i]);
    row.detail = detail;
  }
  return [...byAccount.values()];
}
