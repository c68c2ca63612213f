import Joi from 'joi';
import type { Knex } from 'knex';
import { errors, escapeHtml, validate, type Cluster, type Operator } from '@cairn/domain';
import type { Filter } from '../http/filters';
import { recordAudit, type AuditActor } from '../repositories/audit';
import { getCluster } from '../repositories/clusters';
import { listPolicies } from '../repositories/devices';
import { ensureHourlyPartitions } from '../repositories/utilization-partitions';
import * as repo from '../repositories/utilization';
import * as summaries from '../repositories/utilization-summary';
import { TOTAL_POLICY, type HourRange, type StorageRow, type TransferRow, type UtilizationKind } from '../repositories/utilization';
import { DAY_MS, floorHour, formatUtc, HOUR_MS, parseUtc, type TimeRange, type UtilizationRetention } from './time-range';

/**
 * Utilization operations. Each takes the acting operator and a database handle, checks
 * permission, and calls the repositories; writes own their transaction and audit record. No HTTP
 * here: routes turn requests into these inputs and the results into responses.
 */
export interface Acting {
  operator: Operator;
  audit: AuditActor;
}

export interface UtilizationSettings {
  retention: UtilizationRetention;
  now: () => Date;
}

export type PolicySelector = number | 'total';

const mayRead = (op: Operator, clusterId: number): boolean => op.clusterIds.length === 0 || op.clusterIds.includes(clusterId);

/** The cluster when the operator may see it; otherwise not found, as for any cluster path. */
export async function visibleCluster(db: Knex, op: Operator, clusterId: number | null, raw: string): Promise<Cluster> {
  const cluster = clusterId === null || !mayRead(op, clusterId) ? null : await getCluster(db, clusterId);
  if (!cluster) throw errors.notFound(`No cluster with id '${escapeHtml(raw)}'.`);
  return cluster;
}

/** Collectors write with an admin key; one limited to some clusters writes only to those. */
function requireCollector(op: Operator, cluster: Cluster): void {
  if (op.role !== 'admin') throw errors.forbidden(`Operator '${op.name}' has the reader role and may not record utilization.`);
  if (!mayRead(op, cluster.id)) throw errors.forbidden(`Operator '${op.name}' may not record utilization of cluster ${cluster.id}.`);
}

/** Stored hours read for a range: each record reports the stored hour that begins inside it. */
export const hourRange = (range: TimeRange): HourRange => ({ from: range.firstHour, to: new Date(range.firstHour.getTime() + range.hours * HOUR_MS) });

const policyFilter = (kind: UtilizationKind, policy: PolicySelector): number | null => (policy === 'total' ? (kind === 'storage' ? TOTAL_POLICY : null) : policy);

// ---- account lists ------------------------------------------------------------------------

export interface AccountPage {
  total: number;
  accounts: string[];
}

export async function listAccounts(
  db: Knex,
  op: Operator,
  cluster: Cluster,
  kind: UtilizationKind,
  policy: PolicySelector,
  range: TimeRange,
  filters: readonly Filter[],
  limit: number,
  offset: number,
): Promise<AccountPage> {
  void op;
  const hours = hourRange(range);
  const p = policyFilter(kind, policy);
  const [total, accounts] = await Promise.all([
    repo.countAccounts(db, kind, cluster.id, p, hours, filters),
    repo.pageAccounts(db, kind, cluster.id, p, hours, filters, { limit, offset }),
  ]);
  return { total, accounts };
}

/** Batches of account names in order, read by key: an export of any size holds one batch at a time. */
export async function* exportAccounts(db: Knex, cluster: Cluster, kind: UtilizationKind, policy: PolicySelector, range: TimeRange, filters: readonly Filter[], batch = 5000): AsyncGenerator<string[]> {
  const hours = hourRange(range);
  let after: string | undefined;
  for (;;) {
    const accounts = await repo.pageAccounts(db, kind, cluster.id, policyFilter(kind, policy), hours, filters, { limit: batch, after });
    if (accounts.length === 0) return;
    yield accounts;
    if (accounts.length < batch) return;
    after = accounts[accounts.length - 1];
  }
}

// ---- hourly detail ------------------------------------------------------------------------

export interface StorageRecord {
  start: Date;
  end: Date;
  bytes_used: number;
  object_count: number;
  container_count: number;
  pct_complete: number;
}

export interface TransferRecord {
  start: Date;
  end: Date;
  bytes_in: number;
  bytes_out: number;
  req_count: number;
  pct_complete: number;
}

const pct = (share: number): number => Math.round(Math.min(1, Math.max(0, share)) * 10000) / 100;

/**
 * Records `first` .. `first + count - 1` of the range (paging), in time order; null for an account
 * never seen (no records at all rather than a range of zeros). Whether it was ever seen is only
 * asked when the range holds nothing for it.
 */
export async function storageDetail(db: Knex, cluster: Cluster, policy: PolicySelector, account: string, range: TimeRange, first: number, count: number): Promise<StorageRecord[] | null> {
  const n = Math.max(0, Math.min(count, range.hours - first));
  if (n === 0) return (await repo.isKnownAccount(db, cluster.id, account)) ? [] : null;
  const from = range.firstHour.getTime() + first * HOUR_MS;
  const p = policy === 'total' ? TOTAL_POLICY : policy;
  const rows = await repo.storageHours(db, cluster.id, account, [...new Set([TOTAL_POLICY, p])], { from: new Date(from), to: new Date(from + n * HOUR_MS) });
  if (rows.length === 0 && !(await repo.isKnownAccount(db, cluster.id, account))) return null;
  const totals = new Map(rows.filter((r) => r.policyIndex === TOTAL_POLICY).map((r) => [r.hour, r]));
  const values = new Map(rows.filter((r) => r.policyIndex === p).map((r) => [r.hour, r]));
  const records: StorageRecord[] = [];
  for (let i = 0; i < n; i++) {
    const hour = from + i * HOUR_MS;
    const start = range.start.getTime() + (first + i) * HOUR_MS;
    const v = values.get(hour);
    // Coverage is the account's (its totals row): an hour sampled without this policy's header is a known zero.
    const coverage = totals.get(hour)?.coverage ?? v?.coverage ?? 0;
    records.push({ start: new Date(start), end: new Date(start + HOUR_MS), bytes_used: v?.bytesUsed ?? 0, object_count: v?.objectCount ?? 0, container_count: v?.containerCount ?? 0, pct_complete: pct(coverage) });
  }
  return records;
}

export async function transferDetail(db: Knex, cluster: Cluster, policy: PolicySelector, account: string, range: TimeRange, first: number, count: number): Promise<TransferRecord[] | null> {
  const n = Math.max(0, Math.min(count, range.hours - first));
  if (n === 0) return (await repo.isKnownAccount(db, cluster.id, account)) ? [] : null;
  const from = range.firstHour.getTime() + first * HOUR_MS;
  const span = { from: new Date(from), to: new Date(from + n * HOUR_MS) };
  const [rows, coverage] = await Promise.all([repo.transferHours(db, cluster.id, account, policy === 'total' ? null : policy, span), repo.transferCoverage(db, cluster.id, span)]);
  if (rows.length === 0 && !(await repo.isKnownAccount(db, cluster.id, account))) return null;
  const byHour = new Map(rows.map((r) => [r.hour, r]));
  const records: TransferRecord[] = [];
  for (let i = 0; i < n; i++) {
    const hour = from + i * HOUR_MS;
    const start = range.start.getTime() + (first + i) * HOUR_MS;
    const v = byHour.get(hour);
    records.push({ start: new Date(start), end: new Date(start + HOUR_MS), bytes_in: v?.bytesIn ?? 0, bytes_out: v?.bytesOut ?? 0, req_count: v?.reqCount ?? 0, pct_complete: pct(coverage.get(hour) ?? 0) });
  }
  return records;
}

// ---- billing summary ----------------------------------------------------------------------

export interface PolicySummary {
  policy_index: number;
  bytes_used_avg: number;
  bytes_used_peak: number;
  object_count: number;
  container_count: number;
}

export interface AccountSummary {
  account: string;
  hours: number;
  bytes_used_avg: number;
  bytes_used_peak: number;
  object_count: number;
  container_count: number;
  bytes_in: number;
  bytes_out: number;
  req_count: number;
  storage_pct_complete: number;
  transfer_pct_complete: number;
  pct_complete: number;
  policies: PolicySummary[];
}

/** Cluster-wide transfer coverage of the range, 0..1 (the logs cover every account alike). */
async function transferShare(db: Knex, cluster: Cluster, range: TimeRange): Promise<number> {
  const coverage = await repo.transferCoverage(db, cluster.id, hourRange(range));
  let sum = 0;
  for (const v of coverage.values()) sum += v;
  return sum / range.hours;
}

function toSummary(row: summaries.SummaryRow, range: TimeRange, transferPart: number, policies: readonly number[]): AccountSummary {
  // Averages are byte-hours over the hours that have a sample: an hour the collector missed lowers
  // pct_complete, not the bill.
  const avg = (s: { byteHours: number; hours: number } | undefined) => (s && s.hours > 0 ? Math.round(s.byteHours / s.hours) : 0);
  const total = row.storage.get(TOTAL_POLICY);
  const storagePart = (total?.covered ?? 0) / range.hours;
  return {
    account: row.account,
    hours: range.hours,
    bytes_used_avg: avg(total),
    bytes_used_peak: total?.peak ?? 0,
    object_count: total?.objectCount ?? 0,
    container_count: total?.containerCount ?? 0,
    bytes_in: row.bytesIn,
    bytes_out: row.bytesOut,
    req_count: row.reqCount,
    storage_pct_complete: pct(storagePart),
    transfer_pct_complete: pct(transferPart),
    pct_complete: pct(Math.min(storagePart, transferPart)),
    policies: policies.map((p) => {
      const s = row.storage.get(p);
      return { policy_index: p, bytes_used_avg: avg(s), bytes_used_peak: s?.peak ?? 0, object_count: s?.objectCount ?? 0, container_count: s?.containerCount ?? 0 };
    }),
  };
}

export interface SummaryPage {
  total: number;
  policies: number[];
  rows: AccountSummary[];
}

export async function summaryPage(db: Knex, cluster: Cluster, range: TimeRange, filters: readonly Filter[], limit: number, offset: number): Promise<SummaryPage> {
  const split = await summaries.splitRange(db, hourRange(range));
  const [total, accounts, policies, transferPart] = await Promise.all([
    summaries.countSummaryAccounts(db, cluster.id, split, filters),
    summaries.summaryAccounts(db, cluster.id, split, filters, { limit, offset }),
    repo.storagePolicies(db, cluster.id),
    transferShare(db, cluster, range),
  ]);
  const rows = await summaries.summarize(db, cluster.id, accounts, split);
  return { total, policies, rows: rows.map((r) => toSummary(r, range, transferPart, policies)) };
}

/** The policies an export's columns name, then its rows in batches read by key. */
export async function summaryExport(
  db: Knex,
  cluster: Cluster,
  range: TimeRange,
  filters: readonly Filter[],
  batch = 5000,
): Promise<{ policies: number[]; batches: AsyncGenerator<AccountSummary[]> }> {
  const split = await summaries.splitRange(db, hourRange(range));
  const policies = await repo.storagePolicies(db, cluster.id);
  const transferPart = await transferShare(db, cluster, range);
  async function* batches(): AsyncGenerator<AccountSummary[]> {
    let after: string | undefined;
    for (;;) {
      const accounts = await summaries.summaryAccounts(db, cluster.id, split, filters, { limit: batch, after });
      if (accounts.length === 0) return;
      yield (await summaries.summarize(db, cluster.id, accounts, split)).map((r) => toSummary(r, range, transferPart, policies));
      if (accounts.length < batch) return;
      after = accounts[accounts.length - 1];
    }
  }
  return { policies, batches: batches() };
}

// ---- known accounts (what the storage collector HEADs) ------------------------------------

export async function knownAccountsPage(db: Knex, cluster: Cluster, filters: readonly Filter[], limit: number, after?: string): Promise<AccountPage> {
  const [total, accounts] = await Promise.all([repo.countKnownAccounts(db, cluster.id, filters), repo.knownAccounts(db, cluster.id, after, limit, filters)]);
  return { total, accounts };
}

// ---- collector writes ---------------------------------------------------------------------

/** Samples or records per request: a collector sends a round in several requests. */
export const MAX_WRITE_ROWS = 20_000;
const count = Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER).required();
const account = Joi.string().min(1).max(300).pattern(/^[^\s/]+$/).required().messages({ 'string.pattern.base': "{{#label}} must be a Swift account name (no '/' or spaces)" });
const utc = Joi.string().max(40).required();

const storageSchema = Joi.object({
  interval: Joi.number().integer().min(60).max(3600).default(3600),
  sampled_at: utc,
  samples: Joi.array()
    .max(MAX_WRITE_ROWS)
    .items(
      Joi.object({
        account,
        bytes_used: count,
        object_count: count,
        container_count: count,
        policies: Joi.array()
          .max(64)
          .items(
            Joi.object({ index: Joi.number().integer().min(0).max(32767), name: Joi.string().max(255), bytes_used: count, object_count: count, container_count: count }).xor('index', 'name'),
          )
          .default([]),
      }),
    )
    .required(),
});

interface StorageInput {
  interval: number;
  sampled_at: string;
  samples: Array<{ account: string; bytes_used: number; object_count: number; container_count: number; policies: Array<{ index?: number; name?: string; bytes_used: number; object_count: number; container_count: number }> }>;
}

function checkWriteTime(label: string, raw: string, settings: UtilizationSettings): Date {
  const t = parseUtc(raw);
  if (!t) throw errors.invalidInput(`'${label}' must be an ISO 8601 UTC date-time, such as 2026-11-24T22:05:00Z.`);
  const now = settings.now().getTime();
  const oldest = floorHour(now - settings.retention.hourlyDays * DAY_MS) + DAY_MS;
  if (t.getTime() < oldest) throw errors.invalidInput(`'${label}' (${formatUtc(t)}) is older than the hourly retention allows (${formatUtc(new Date(oldest))}).`);
  if (t.getTime() > now + 15 * 60_000) throw errors.invalidInput(`'${label}' (${formatUtc(t)}) is in the future; check the collector's clock.`);
  return t;
}

export interface WriteResult {
  accepted: number;
  duplicate: boolean;
}

/** A round (or part of one) of account HEADs. Each hour keeps its maxima; re-sent samples count once. */
export async function recordStorage(db: Knex, acting: Acting, cluster: Cluster, body: unknown, settings: UtilizationSettings): Promise<WriteResult> {
  requireCollector(acting.operator, cluster);
  const input = validate<StorageInput>(storageSchema, body);
  if (3600 % input.interval !== 0) throw errors.invalidInput(`'interval' must divide an hour (3600 seconds) evenly; ${input.interval} does not.`);
  const at = checkWriteTime('sampled_at', input.sampled_at, settings).getTime();
  const hourMs = floorHour(at);
  const hour = new Date(hourMs);
  const slotCount = 3600 / input.interval;
  const slots = 1n << BigInt(Math.floor((at - hourMs) / (input.interval * 1000)));
  const needsNames = input.samples.some((s) => s.policies.some((p) => p.name !== undefined));
  const byName = needsNames ? new Map((await listPolicies(db, cluster.id)).map((p) => [p.name.toLowerCase(), p.index])) : new Map<string, number>();
  const unknown = new Set<string>();
  const rows = new Map<string, StorageRow>();
  const add = (r: StorageRow) => {
    const key = `${r.policyIndex}\u0000${r.account}`;
    const prev = rows.get(key);
    rows.set(key, prev ? { ...r, bytesUsed: Math.max(prev.bytesUsed, r.bytesUsed), objectCount: Math.max(prev.objectCount, r.objectCount), containerCount: Math.max(prev.containerCount, r.containerCount) } : r);
  };
  for (const s of input.samples) {
    add({ policyIndex: TOTAL_POLICY, account: s.account, hour, bytesUsed: s.bytes_used, objectCount: s.object_count, containerCount: s.container_count, slots, slotCount });
    for (const p of s.policies) {
      // Swift matches policy names without regard to case (and title-cases them in headers).
      const index = p.index ?? byName.get(p.name!.toLowerCase());
      if (index === undefined) {
        unknown.add(p.name!);
        continue;
      }
      add({ policyIndex: index, account: s.account, hour, bytesUsed: p.bytes_used, objectCount: p.object_count, containerCount: p.container_count, slots, slotCount });
    }
  }
  if (unknown.size > 0) {
    throw errors.invalidInput(
      `Unknown storage policy name(s) ${[...unknown].map((n) => `'${escapeHtml(n)}'`).join(', ')} for cluster ${cluster.id}: report the cluster's policies (PUT .../devices/) or send policy indexes.`,
    );
  }
  await ensureHourlyPartitions(db, [hourMs]);
  await db.transaction(async (trx) => {
    await repo.upsertStorage(trx, cluster.id, [...rows.values()]);
    await repo.invalidateRollups(trx, [hourMs]);
    await repo.rememberAccounts(trx, cluster.id, [...new Set(input.samples.map((s) => s.account))]);
    await repo.rememberPolicies(trx, cluster.id, [...new Set([...rows.values()].map((r) => r.policyIndex))].filter((p) => p !== TOTAL_POLICY));
    await recordAudit(trx, acting.audit, {
      action: 'record_utilization',
      target: utilizationTarget(cluster, 'storage'),
      before: null,
      after: { kind: 'storage', sampled_at: new Date(at).toISOString(), samples: input.samples.length },
    });
  });
  return { accepted: input.samples.length, duplicate: false };
}

const transferSchema = Joi.object({
  batch_id: Joi.string().min(8).max(128).pattern(/^[\w.:-]+$/).required(),
  covered: Joi.object({ start: utc, end: utc }),
  records: Joi.array()
    .max(MAX_WRITE_ROWS)
    .items(Joi.object({ account, policy_index: Joi.number().integer().min(0).max(32767).allow(null).default(null), hour: utc, bytes_in: count, bytes_out: count, req_count: count }))
    .required(),
});

interface TransferInput {
  batch_id: string;
  covered?: { start: string; end: string };
  records: Array<{ account: string; policy_index: number | null; hour: string; bytes_in: number; bytes_out: number; req_count: number }>;
}

/** Minutes [start, end) as a bit mask per hour. */
function minuteMasks(start: number, end: number): Map<number, bigint> {
  const masks = new Map<number, bigint>();
  for (let m = Math.floor(start / 60_000) * 60_000; m < end; m += 60_000) {
    const hour = floorHour(m);
    masks.set(hour, (masks.get(hour) ?? 0n) | (1n << BigInt((m - hour) / 60_000)));
  }
  return masks;
}

/**
 * A batch of access-log sums. A batch id already counted is acknowledged and ignored, so a
 * collector may re-send after a crash or a timeout without counting twice.
 */
export async function recordTransfer(db: Knex, acting: Acting, cluster: Cluster, body: unknown, settings: UtilizationSettings): Promise<WriteResult> {
  requireCollector(acting.operator, cluster);
  const input = validate<TransferInput>(transferSchema, body);
  const rows = new Map<string, TransferRow>();
  input.records.forEach((r, i) => {
    const hour = checkWriteTime(`records[${i}].hour`, r.hour, settings);
    if (hour.getTime() % HOUR_MS !== 0) throw errors.invalidInput(`'records[${i}].hour' (${formatUtc(hour)}) must be the start of an hour.`);
    const policyIndex = r.policy_index ?? TOTAL_POLICY;
    const key = `${policyIndex}\u0000${r.account}\u0000${hour.getTime()}`;
    const prev = rows.get(key);
    rows.set(key, {
      policyIndex,
      account: r.account,
      hour,
      bytesIn: (prev?.bytesIn ?? 0) + r.bytes_in,
      bytesOut: (prev?.bytesOut ?? 0) + r.bytes_out,
      reqCount: (prev?.reqCount ?? 0) + r.req_count,
    });
  });
  let coverage = new Map<number, bigint>();
  if (input.covered) {
    const start = checkWriteTime('covered.start', input.covered.start, settings).getTime();
    const end = checkWriteTime('covered.end', input.covered.end, settings).getTime();
    if (end < start) throw errors.invalidInput("'covered.end' must not be before 'covered.start'.");
    coverage = minuteMasks(start, Math.max(end, start + 1));
  }
  await ensureHourlyPartitions(db, [...rows.values()].map((r) => r.hour.getTime()));
  const counted = await db.transaction(async (trx) => {
    if (!(await repo.claimTransferBatch(trx, cluster.id, input.batch_id))) return false;
    await repo.addTransfer(trx, cluster.id, [...rows.values()]);
    await repo.invalidateRollups(trx, [...rows.values()].map((r) => r.hour.getTime()));
    await repo.addTransferCoverage(trx, cluster.id, coverage);
    // An account first met in a log (created outside Cairn, say) is HEADed from now on.
    await repo.rememberAccounts(trx, cluster.id, [...new Set(input.records.map((r) => r.account))]);
    await recordAudit(trx, acting.audit, {
      action: 'record_utilization',
      target: utilizationTarget(cluster, 'transfer'),
      before: null,
      after: { kind: 'transfer', batch_id: input.batch_id, records: input.records.length },
    });
    return true;
  });
  return { accepted: counted ? input.records.length : 0, duplicate: !counted };
}

const utilizationTarget = (cluster: Cluster, kind: UtilizationKind) => ({
  type: 'clusters',
  id: cluster.id,
  name: cluster.name,
  uri: `/api/v1/clusters/${cluster.id}/utilization/${kind}/`,
});
