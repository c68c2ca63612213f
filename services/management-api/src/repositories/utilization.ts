import type { Knex } from 'knex';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import type { Filter } from './list-types';
import { applyFilters } from './list-planner';
import { TRANSFER_HOUR_MAX, TRANSFER_SUM_COLUMNS } from './utilization-rollups';
import { TRANSFER_DETAIL_FIELD_NAMES, type TransferDetailField } from '@cairn/domain';

/**
 * SQL of the utilization tables (see the migration for their layout). Writes are bulk upserts of
 * parallel arrays through unnest, up to 20,000 rows per statement; the caller merges rows with
 * the same key first (one statement may not update a row twice).
 */

/** policy_index of an account's totals (storage) or of requests with no known policy (transfer). */
export const TOTAL_POLICY = -1;
const CHUNK = 20_000;

export type UtilizationKind = 'storage' | 'transfer';

/**
 * A sum read back from the database: a number while it is one exactly (up to 2^53 − 1), a bigint
 * beyond (sums over policies and days can pass it); the serializers write both as JSON integers.
 */
export type Count = number | bigint;
export function exactCount(v: string | number | bigint | null | undefined): Count {
  if (v === null || v === undefined) return 0;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : BigInt(v);
}
const HOURLY: Record<UtilizationKind, string> = {
  storage: 'utilization_storage_hourly',
  transfer: 'utilization_transfer_hourly',
};

export interface StorageRow {
  policyIndex: number;
  account: string;
  hour: Date;
  bytesUsed: number;
  objectCount: number;
  containerCount: number;
  /** Bit mask of the collection slots of the hour this sample covers. */
  slots: bigint;
  slotCount: number;
}

export interface TransferRow {
  policyIndex: number;
  account: string;
  hour: Date;
  bytesIn: number;
  bytesOut: number;
  reqCount: number;
  /** By class, API and network (TRANSFER_DETAIL_FIELDS); 0 where a collector sent none. */
  detail: Record<TransferDetailField, number>;
}

/**
 * A Postgres array literal (`{1,2,3}`) of values that need no quoting: whole numbers, and text of
 * digits and `-:.TZ` (an ISO 8601 time). The driver's array encoding quotes and escapes each
 * element, which for a batch's number columns (up to 360,000 elements) costs more than the rest
 * of the statement's encoding.
 */
const plainArray = (values: ReadonlyArray<number | string>): string => `{${values.join(',')}}`;

/** Each time's ISO text once: a write's rows share a few hours (a storage write's, all one). */
function isoTimes(rows: ReadonlyArray<{ hour: Date }>): string[] {
  const texts = new Map<number, string>();
  return rows.map((r) => {
    const t = r.hour.getTime();
    let text = texts.get(t);
    if (text === undefined) texts.set(t, (text = r.hour.toISOString()));
    return text;
  });
}

/** The sums of rows, one array literal per column of TRANSFER_SUM_COLUMNS. */
function sumColumns(rows: TransferRow[]): string[] {
  const columns: number[][] = TRANSFER_SUM_COLUMNS.map(() => new Array<number>(rows.length));
  const detail = TRANSFER_DETAIL_FIELD_NAMES;
  for (let j = 0; j < rows.length; j++) {
    const r = rows[j]!;
    columns[0]![j] = r.bytesIn;
    columns[1]![j] = r.bytesOut;
    columns[2]![j] = r.reqCount;
    for (let i = 0; i < detail.length; i++) columns[3 + i]![j] = r.detail[detail[i]!];
  }
  return columns.map(plainArray);
}

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

/** Keeps the hour's maxima; the slots seen are OR-ed, so a re-sent sample changes nothing. */
export async function upsertStorage(db: Db, clusterId: number, rows: StorageRow[]): Promise<void> {
  for (const part of chunks(rows)) {
    await withDbErrors(() =>
      db.raw(
        `INSERT INTO utilization_storage_hourly AS h
           (cluster_id, policy_index, account, hour, bytes_used, object_count, container_count, slots, slot_count)
         SELECT ?, * FROM unnest(?::smallint[], ?::varchar[], ?::timestamptz[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[], ?::smallint[])
         ON CONFLICT (cluster_id, account, policy_index, hour) DO UPDATE SET
           bytes_used = greatest(h.bytes_used, excluded.bytes_used),
           object_count = greatest(h.object_count, excluded.object_count),
           container_count = greatest(h.container_count, excluded.container_count),
           slots = h.slots | excluded.slots,
           slot_count = greatest(h.slot_count, excluded.slot_count)`,
        [
          clusterId,
          plainArray(part.map((r) => r.policyIndex)),
          part.map((r) => r.account),
          plainArray(isoTimes(part)),
          plainArray(part.map((r) => r.bytesUsed)),
          plainArray(part.map((r) => r.objectCount)),
          plainArray(part.map((r) => r.containerCount)),
          plainArray(part.map((r) => r.slots.toString())),
          plainArray(part.map((r) => r.slotCount)),
        ],
      ),
    );
  }
}

/**
 * Adds to the hour's sums, saturating at TRANSFER_HOUR_MAX: an hour can never hold more, so no
 * later write or rollup of it can overflow (both addends are at most 2^53 − 1, their sum fits a
 * bigint). Only for batches not counted before (see claimTransferBatch).
 */
export async function addTransfer(db: Db, clusterId: number, rows: TransferRow[]): Promise<void> {
  const columns = TRANSFER_SUM_COLUMNS;
  for (const part of chunks(rows)) {
    await withDbErrors(() =>
      db.raw(
        `INSERT INTO utilization_transfer_hourly AS h (cluster_id, policy_index, account, hour, ${columns.map(() => '??').join(', ')})
         SELECT ?, * FROM unnest(?::smallint[], ?::varchar[], ?::timestamptz[], ${columns.map(() => '?::bigint[]').join(', ')})
         ON CONFLICT (cluster_id, account, policy_index, hour) DO UPDATE SET
           ${columns.map(() => '?? = least(least(??, ?) + ??, ?)').join(',\n           ')}`,
        [
          ...columns,
          clusterId,
          plainArray(part.map((r) => r.policyIndex)),
          part.map((r) => r.account),
          plainArray(isoTimes(part)),
          ...sumColumns(part),
          ...columns.flatMap((c) => [c, `h.${c}`, TRANSFER_HOUR_MAX, `excluded.${c}`, TRANSFER_HOUR_MAX]),
        ],
      ),
    );
  }
}

/** True when this batch id is new for the cluster (and is now taken); false for a re-sent batch. */
export async function claimTransferBatch(db: Db, clusterId: number, batchId: string): Promise<boolean> {
  const rows = (await withDbErrors(() =>
    db('utilization_transfer_batches')
      .insert({ cluster_id: clusterId, batch_id: batchId })
      .onConflict(['cluster_id', 'batch_id'])
      .ignore()
      .returning('batch_id'),
  )) as unknown[];
  return rows.length > 0;
}

/** ORs minutes (bit i = minute i of the hour) into each hour's transfer coverage. */
export async function addTransferCoverage(db: Db, clusterId: number, minutes: Map<number, bigint>): Promise<void> {
  if (minutes.size === 0) return;
  const hours = [...minutes.keys()];
  await withDbErrors(() =>
    db.raw(
      `INSERT INTO utilization_transfer_coverage AS c (cluster_id, hour, minutes)
       SELECT ?, * FROM unnest(?::timestamptz[], ?::bigint[])
       ON CONFLICT (cluster_id, hour) DO UPDATE SET minutes = c.minutes | excluded.minutes`,
      [clusterId, hours.map((h) => new Date(h).toISOString()), hours.map((h) => minutes.get(h)!.toString())],
    ),
  );
}

// ---- reads --------------------------------------------------------------------------------

export interface HourRange {
  /** First stored hour (inclusive) and the end (exclusive). */
  from: Date;
  to: Date;
}

/** The accounts with rows in the range, for one policy or (null) any; `u` is the table's alias for filters. */
function accountsWithData(
  db: Db,
  kind: UtilizationKind,
  clusterId: number,
  policy: number | null,
  range: HourRange,
  filters: readonly Filter[],
): Knex.QueryBuilder {
  const q = db(`${HOURLY[kind]} as u`)
    .where('u.cluster_id', clusterId)
    .where('u.hour', '>=', range.from)
    .where('u.hour', '<', range.to);
  if (policy !== null) q.where('u.policy_index', policy);
  return applyFilters(q, filters);
}

export async function countAccounts(
  db: Db,
  kind: UtilizationKind,
  clusterId: number,
  policy: number | null,
  range: HourRange,
  filters: readonly Filter[],
): Promise<number> {
  const [row] = await withDbErrors(() =>
    accountsWithData(db, kind, clusterId, policy, range, filters).countDistinct({ n: 'u.account' }),
  );
  return Number((row as { n: string | number }).n);
}

/** One page of account names in order; `after` reads by key (exports), `offset` by position (pages). */
export async function pageAccounts(
  db: Db,
  kind: UtilizationKind,
  clusterId: number,
  policy: number | null,
  range: HourRange,
  filters: readonly Filter[],
  page: { limit: number; offset?: number; after?: string },
): Promise<string[]> {
  const q = accountsWithData(db, kind, clusterId, policy, range, filters)
    .distinct('u.account')
    .orderBy('u.account')
    .limit(page.limit);
  if (page.after !== undefined) q.where('u.account', '>', page.after);
  if (page.offset) q.offset(page.offset);
  const rows = (await withDbErrors(() => q)) as Array<{ account: string }>;
  return rows.map((r) => r.account);
}

/** One stored hour of an account's storage under one policy (or its totals). */
export interface StoredStorageHour {
  hour: number;
  /** Null: the account was sampled that hour but reported nothing under this policy (a known zero). */
  bytesUsed: number | null;
  objectCount: number | null;
  containerCount: number | null;
  /** Share of the hour's collection slots in which the account was sampled, 0..1. */
  coverage: number;
}

const COVERAGE = 'bit_count(slots::bit(64))::float8 / slot_count';

/**
 * The stored hours of one account under `policy` (TOTAL_POLICY: its totals), one row per hour.
 * Coverage is the account's, from its totals row (an hour can be sampled without this policy's
 * header); the two rows of an hour are folded here rather than in JS, which halves the rows a
 * 31-day detail parses (1,488 -> 744). Hours as epoch seconds: parsing a timestamptz per row costs
 * more than the query itself.
 */
export async function storageHours(
  db: Db,
  clusterId: number,
  account: string,
  policy: number,
  range: HourRange,
): Promise<StoredStorageHour[]> {
  const where = 'cluster_id = ? AND account = ? AND hour >= ? AND hour < ?';
  const bounds = [clusterId, account, range.from, range.to];
  const query =
    policy === TOTAL_POLICY
      ? db.raw(
          `SELECT extract(epoch FROM hour)::int AS at, bytes_used, object_count, container_count, ${COVERAGE} AS coverage
             FROM utilization_storage_hourly WHERE ${where} AND policy_index = ?`,
          [...bounds, TOTAL_POLICY],
        )
      : db.raw(
          `SELECT extract(epoch FROM hour)::int AS at,
                  max(bytes_used) FILTER (WHERE policy_index = ?) AS bytes_used,
                  max(object_count) FILTER (WHERE policy_index = ?) AS object_count,
                  max(container_count) FILTER (WHERE policy_index = ?) AS container_count,
                  coalesce(max(${COVERAGE}) FILTER (WHERE policy_index = ?), max(${COVERAGE})) AS coverage
             FROM utilization_storage_hourly WHERE ${where} AND policy_index IN (?, ?)
            GROUP BY hour`,
          [policy, policy, policy, TOTAL_POLICY, ...bounds, TOTAL_POLICY, policy],
        );
  const { rows } = (await withDbErrors(() => query)) as { rows: Array<Record<string, string | number | null>> };
  const num = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));
  return rows.map((r) => ({
    hour: Number(r.at) * 1000,
    bytesUsed: num(r.bytes_used),
    objectCount: num(r.object_count),
    containerCount: num(r.container_count),
    coverage: Number(r.coverage),
  }));
}

export interface StoredTransferHour {
  hour: number;
  bytesIn: Count;
  bytesOut: Count;
  reqCount: Count;
  detail: Record<TransferDetailField, Count>;
}

/** Sums per hour, for one policy or (null) all of them. */
export async function transferHours(
  db: Db,
  clusterId: number,
  account: string,
  policy: number | null,
  range: HourRange,
): Promise<StoredTransferHour[]> {
  const q = db('utilization_transfer_hourly')
    .select(db.raw('extract(epoch FROM hour)::int AS at'))
    .sum(Object.fromEntries(TRANSFER_SUM_COLUMNS.map((c) => [c, c])))
    .where({ cluster_id: clusterId, account })
    .where('hour', '>=', range.from)
    .where('hour', '<', range.to)
    .groupBy('hour');
  if (policy !== null) q.where('policy_index', policy);
  const rows = (await withDbErrors(() => q)) as Array<Record<string, string | number | Date>>;
  return rows.map((r) => ({
    hour: Number(r.at) * 1000,
    bytesIn: exactCount(r.bytes_in as string),
    bytesOut: exactCount(r.bytes_out as string),
    reqCount: exactCount(r.req_count as string),
    detail: Object.fromEntries(TRANSFER_DETAIL_FIELD_NAMES.map((f) => [f, exactCount(r[f] as string)])) as Record<
      TransferDetailField,
      Count
    >,
  }));
}

/** Hour (epoch ms) -> share of its minutes covered by ingested logs, 0..1. */
export async function transferCoverage(db: Db, clusterId: number, range: HourRange): Promise<Map<number, number>> {
  const rows = (await withDbErrors(() =>
    db('utilization_transfer_coverage')
      .select('hour', db.raw('bit_count(minutes::bit(64))::float8 / 60 AS coverage'))
      .where('cluster_id', clusterId)
      .where('hour', '>=', range.from)
      .where('hour', '<', range.to),
  )) as Array<{ hour: Date; coverage: number | string }>;
  return new Map(rows.map((r) => [new Date(r.hour).getTime(), Math.min(1, Number(r.coverage))]));
}

/** The policy indexes the cluster's storage samples have named, in order. */
export async function storagePolicies(db: Db, clusterId: number): Promise<number[]> {
  const rows = (await withDbErrors(() =>
    db('utilization_policies').select('policy_index').where('cluster_id', clusterId).orderBy('policy_index'),
  )) as Array<{ policy_index: number }>;
  return rows.map((r) => Number(r.policy_index));
}

export async function rememberPolicies(db: Db, clusterId: number, policies: number[]): Promise<void> {
  if (policies.length === 0) return;
  await withDbErrors(() =>
    db('utilization_policies')
      .insert(policies.map((p) => ({ cluster_id: clusterId, policy_index: p })))
      .onConflict(['cluster_id', 'policy_index'])
      .ignore(),
  );
}

/**
 * Account names ever created in the cluster (or seen by a collector), in order: one page, by
 * position (`offset`) after the filters (`account__gt` reads by key).
 */
export async function knownAccounts(
  db: Db,
  clusterId: number,
  filters: readonly Filter[],
  page: { limit: number; offset: number },
): Promise<string[]> {
  const q = applyFilters(db('utilization_accounts as u').select('u.account').where('u.cluster_id', clusterId), filters)
    .orderBy('u.account')
    .limit(page.limit);
  if (page.offset) q.offset(page.offset);
  const rows = (await withDbErrors(() => q)) as Array<{ account: string }>;
  return rows.map((r) => r.account);
}

export async function countKnownAccounts(db: Db, clusterId: number, filters: readonly Filter[]): Promise<number> {
  const [row] = await withDbErrors(() =>
    applyFilters(db('utilization_accounts as u').where('u.cluster_id', clusterId), filters).count({ n: '*' }),
  );
  return Number((row as { n: string | number }).n);
}

/** Accounts a storage round sampled (the collector HEADs only known ones; a direct POST may name others). */
export async function rememberAccounts(db: Db, clusterId: number, accounts: string[]): Promise<void> {
  if (accounts.length === 0) return;
  await withDbErrors(() =>
    db.raw(
      `INSERT INTO utilization_accounts (cluster_id, account) SELECT ?, unnest(?::varchar[]) ON CONFLICT DO NOTHING`,
      [clusterId, accounts],
    ),
  );
}

/** Which of `accounts` (one write's, bounded by its size) the cluster knows. */
export async function knownAmong(db: Db, clusterId: number, accounts: string[]): Promise<Set<string>> {
  if (accounts.length === 0) return new Set();
  const { rows } = (await withDbErrors(() =>
    db.raw('SELECT account FROM utilization_accounts WHERE cluster_id = ? AND account = ANY(?::varchar[])', [
      clusterId,
      accounts,
    ]),
  )) as { rows: Array<{ account: string }> };
  return new Set(rows.map((r) => r.account));
}

export async function isKnownAccount(db: Db, clusterId: number, account: string): Promise<boolean> {
  const row = await withDbErrors(() =>
    db('utilization_accounts').select('account').where({ cluster_id: clusterId, account }).first(),
  );
  return row !== undefined;
}
