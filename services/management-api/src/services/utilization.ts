import type { Knex } from 'knex';
import {
  type Cluster,
  errors,
  escapeHtml,
  HOUR_MS,
  type Operator,
  type TimeRange,
  type TransferDetailField,
  type UtilizationRetention,
  ZERO_TRANSFER_DETAIL,
} from '@cairn/domain';
import type { Filter, ListQuery, Page } from '../repositories/list-types';
import { getCluster } from '../repositories/clusters';
import { pagePolicies, type StoredPolicy } from '../repositories/devices';
import * as repo from '../repositories/utilization';
import { TOTAL_POLICY, type Count, type HourRange, type UtilizationKind } from '../repositories/utilization';
import { canSeeCluster } from './policy';

export type { UtilizationKind };

/**
 * Utilization reads: account lists and hourly details (the summary is in utilization-summary.ts,
 * collector writes in utilization-record.ts). Each operation takes the acting operator's view (the
 * cluster it may see) and a database handle and calls the repositories; no HTTP here: routes turn
 * requests into these inputs and the results into responses.
 */
export interface UtilizationSettings {
  retention: UtilizationRetention;
  now: () => Date;
}

export type PolicySelector = number | 'total';

/** The cluster when the operator may see it; otherwise not found, as for any cluster path. */
export async function visibleCluster(db: Knex, op: Operator, clusterId: number | null, raw: string): Promise<Cluster> {
  const cluster = clusterId === null || !canSeeCluster(op, clusterId) ? null : await getCluster(db, clusterId);
  if (!cluster) throw errors.notFound(`No cluster with id '${escapeHtml(raw)}'.`);
  return cluster;
}

/** Stored hours read for a range: each record reports the stored hour that begins inside it. */
export const hourRange = (range: TimeRange): HourRange => ({
  from: range.firstHour,
  to: new Date(range.firstHour.getTime() + range.hours * HOUR_MS),
});

const policyFilter = (kind: UtilizationKind, policy: PolicySelector): number | null =>
  policy === 'total' ? (kind === 'storage' ? TOTAL_POLICY : null) : policy;

// ---- account lists ------------------------------------------------------------------------

export interface AccountPage {
  total: number;
  accounts: string[];
}

export async function listAccounts(
  db: Knex,
  cluster: Cluster,
  kind: UtilizationKind,
  policy: PolicySelector,
  range: TimeRange,
  filters: readonly Filter[],
  limit: number,
  offset: number,
): Promise<AccountPage> {
  const hours = hourRange(range);
  const p = policyFilter(kind, policy);
  const [total, accounts] = await Promise.all([
    repo.countAccounts(db, kind, cluster.id, p, hours, filters),
    repo.pageAccounts(db, kind, cluster.id, p, hours, filters, { limit, offset }),
  ]);
  return { total, accounts };
}

/** Batches of account names in order, read by key: an export of any size holds one batch at a time. */
export async function* exportAccounts(
  db: Knex,
  cluster: Cluster,
  kind: UtilizationKind,
  policy: PolicySelector,
  range: TimeRange,
  filters: readonly Filter[],
  batch = 5000,
): AsyncGenerator<string[]> {
  const hours = hourRange(range);
  let after: string | undefined;
  for (;;) {
    const accounts = await repo.pageAccounts(db, kind, cluster.id, policyFilter(kind, policy), hours, filters, {
      limit: batch,
      after,
    });
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
  bytes_in: Count;
  bytes_out: Count;
  req_count: Count;
  pct_complete: number;
}

/** An hour's transfer with its classes and shares (TRANSFER_DETAIL_FIELDS). */
export type TransferDetailRecord = TransferRecord & Record<TransferDetailField, Count>;

export const pct = (share: number): number => Math.round(Math.min(1, Math.max(0, share)) * 10000) / 100;

/**
 * Records `first` .. `first + count - 1` of the range (paging), in time order; null for an account
 * never seen (no records at all rather than a range of zeros). Whether it was ever seen is only
 * asked when the range holds nothing for it.
 */
export async function storageDetail(
  db: Knex,
  cluster: Cluster,
  policy: PolicySelector,
  account: string,
  range: TimeRange,
  first: number,
  count: number,
): Promise<StorageRecord[] | null> {
  const n = Math.max(0, Math.min(count, range.hours - first));
  if (n === 0) return (await repo.isKnownAccount(db, cluster.id, account)) ? [] : null;
  const from = range.firstHour.getTime() + first * HOUR_MS;
  const p = policy === 'total' ? TOTAL_POLICY : policy;
  const rows = await repo.storageHours(db, cluster.id, account, p, {
    from: new Date(from),
    to: new Date(from + n * HOUR_MS),
  });
  if (rows.length === 0 && !(await repo.isKnownAccount(db, cluster.id, account))) return null;
  const byHour = new Map(rows.map((r) => [r.hour, r]));
  const records: StorageRecord[] = [];
  for (let i = 0; i < n; i++) {
    const hour = from + i * HOUR_MS;
    const start = range.start.getTime() + (first + i) * HOUR_MS;
    const v = byHour.get(hour);
    // An hour sampled without this policy's header is a known zero, with the account's coverage.
    records.push({
      start: new Date(start),
      end: new Date(start + HOUR_MS),
      bytes_used: v?.bytesUsed ?? 0,
      object_count: v?.objectCount ?? 0,
      container_count: v?.containerCount ?? 0,
      pct_complete: pct(v?.coverage ?? 0),
    });
  }
  return records;
}

export async function transferDetail(
  db: Knex,
  cluster: Cluster,
  policy: PolicySelector,
  account: string,
  range: TimeRange,
  first: number,
  count: number,
): Promise<TransferDetailRecord[] | null> {
  const n = Math.max(0, Math.min(count, range.hours - first));
  if (n === 0) return (await repo.isKnownAccount(db, cluster.id, account)) ? [] : null;
  const from = range.firstHour.getTime() + first * HOUR_MS;
  const span = { from: new Date(from), to: new Date(from + n * HOUR_MS) };
  const [rows, coverage] = await Promise.all([
    repo.transferHours(db, cluster.id, account, policy === 'total' ? null : policy, span),
    repo.transferCoverage(db, cluster.id, span),
  ]);
  if (rows.length === 0 && !(await repo.isKnownAccount(db, cluster.id, account))) return null;
  const byHour = new Map(rows.map((r) => [r.hour, r]));
  const records: TransferDetailRecord[] = [];
  for (let i = 0; i < n; i++) {
    const hour = from + i * HOUR_MS;
    const start = range.start.getTime() + (first + i) * HOUR_MS;
    const v = byHour.get(hour);
    records.push({
      start: new Date(start),
      end: new Date(start + HOUR_MS),
      bytes_in: v?.bytesIn ?? 0,
      bytes_out: v?.bytesOut ?? 0,
      req_count: v?.reqCount ?? 0,
      ...(v?.detail ?? ZERO_TRANSFER_DETAIL),
      pct_complete: pct(coverage.get(hour) ?? 0),
    });
  }
  return records;
}

// ---- known accounts (what the storage collector HEADs) ------------------------------------

export async function knownAccountsPage(
  db: Knex,
  cluster: Cluster,
  filters: readonly Filter[],
  limit: number,
  offset: number,
): Promise<AccountPage> {
  const [total, accounts] = await Promise.all([
    repo.countKnownAccounts(db, cluster.id, filters),
    repo.knownAccounts(db, cluster.id, filters, { limit, offset }),
  ]);
  return { total, accounts };
}

/**
 * The cluster's storage policies as last reported, one page: the storage collector maps Swift's header names with them.
 */
export async function clusterPolicies(db: Knex, cluster: Cluster, query: ListQuery): Promise<Page<StoredPolicy>> {
  return pagePolicies(db, cluster.id, query);
}
