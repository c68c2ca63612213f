import type { Knex } from 'knex';
import { type Quotas, type TimeRange, type TransferDetailField } from '@cairn/domain';
import type { Cluster } from '@cairn/domain';
import { listPolicies } from '../repositories/devices';
import type { Filter } from '../repositories/list-types';
import { quotasOfAccounts } from '../repositories/quotas';
import * as repo from '../repositories/utilization';
import { exactCount, TOTAL_POLICY, type Count } from '../repositories/utilization';
import * as summaries from '../repositories/utilization-summary';
import { hourRange, pct } from './utilization';

/** The billing summary: one row per account over a range, as a page or as an export read by key. */

/** What the summary shows of a quota (see resources/utilization-summary.ts). */
export interface QuotaSummary {
  quota_bytes: Count | null;
  quota_count: Count | null;
  quota_bytes_used_pct: number | null;
  quota_count_used_pct: number | null;
}

export interface PolicySummary extends QuotaSummary {
  policy_index: number;
  bytes_used_avg: number;
  bytes_used_peak: number;
  object_count: number;
  container_count: number;
}

/** Requests by class, API and network (TRANSFER_DETAIL_FIELDS), summed like req_count. */
export type AccountSummary = AccountFigures & Record<TransferDetailField, Count>;

interface AccountFigures extends QuotaSummary {
  account: string;
  hours: number;
  bytes_used_avg: number;
  bytes_used_peak: number;
  object_count: number;
  container_count: number;
  bytes_in: Count;
  bytes_out: Count;
  req_count: Count;
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

/** A percentage of a quota, 2 decimals, not capped; null without a quota, or with 0 (any use of it is over). */
function usedPct(used: number, quota: Count | null): number | null {
  if (quota === null || Number(quota) === 0) return null;
  return Math.round((used / Number(quota)) * 10000) / 100;
}

/**
 * The quotas shown beside figures: the desired quotas as they stand now, not as they were during
 * the range (a change is in the audit trail). Bytes are compared with the peak (did the account
 * reach its quota), objects with the count at the end.
 */
function quotaSummary(
  bytes: string | null | undefined,
  count: string | null | undefined,
  peak: number,
  objects: number,
): QuotaSummary {
  const quotaBytes = bytes == null ? null : exactCount(bytes);
  const quotaCount = count == null ? null : exactCount(count);
  return {
    quota_bytes: quotaBytes,
    quota_count: quotaCount,
    quota_bytes_used_pct: usedPct(peak, quotaBytes),
    quota_count_used_pct: usedPct(objects, quotaCount),
  };
}

/** A per-policy quota by the policy's name; Swift matches those names without regard to case. */
const byPolicyName = (map: Record<string, string> | null | undefined, name: string | undefined): string | null => {
  if (!map || name === undefined) return null;
  const key = Object.keys(map).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? null : map[key]!;
};

/** `names`: the cluster's policy names by index; `quotas`: the quotas of the accounts that have a user. */
interface QuotaContext {
  names: Map<number, string>;
  quotas: Map<string, Quotas>;
}

function toSummary(
  row: summaries.SummaryRow,
  range: TimeRange,
  transferPart: number,
  policies: readonly number[],
  q: QuotaContext,
): AccountSummary {
  // Averages are byte-hours over the hours in which the account was sampled: an hour the collector
  // missed lowers pct_complete, not the bill. Policies share the account's hours, because Swift
  // drops a policy's headers once the account has no container in it: a sampled hour without a
  // policy's row is a zero for that policy, so the per-policy averages add up to the total's.
  const total = row.storage.get(TOTAL_POLICY);
  const hours = total?.hours ?? 0;
  const avg = (s: { byteHours: number } | undefined) => (s && hours > 0 ? Math.round(s.byteHours / hours) : 0);
  // Counts "at the end" are those of the account's latest sample; a policy missing from it is at zero.
  const atEnd = (s: summaries.PolicyFigures | undefined) =>
    s && total && s.latestAt >= total.latestAt ? s : undefined;
  const storagePart = (total?.covered ?? 0) / range.hours;
  const quotas = q.quotas.get(row.account);
  const peak = total?.peak ?? 0;
  const objects = total?.objectCount ?? 0;
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
    ...row.detail,
    storage_pct_complete: pct(storagePart),
    transfer_pct_complete: pct(transferPart),
    pct_complete: pct(Math.min(storagePart, transferPart)),
    ...quotaSummary(quotas?.bytes, quotas?.count, peak, objects),
    policies: policies.map((p) => {
      const s = row.storage.get(p);
      const end = atEnd(s);
      const name = q.names.get(p);
      const policyPeak = s?.peak ?? 0;
      const policyObjects = end?.objectCount ?? 0;
      // One literal with one spread: a summary builds one of these per account and policy.
      return {
        policy_index: p,
        bytes_used_avg: avg(s),
        bytes_used_peak: policyPeak,
        object_count: policyObjects,
        container_count: end?.containerCount ?? 0,
        ...quotaSummary(
          byPolicyName(quotas?.bytesPolicy, name),
          byPolicyName(quotas?.countPolicy, name),
          policyPeak,
          policyObjects,
        ),
      };
    }),
  };
}

async function policyNames(db: Knex, cluster: Cluster): Promise<Map<number, string>> {
  return new Map((await listPolicies(db, cluster.id)).map((p) => [p.index, p.name]));
}

/** Summaries of a batch of accounts, with their users' quotas. */
async function summarizeBatch(
  db: Knex,
  cluster: Cluster,
  accounts: string[],
  split: summaries.RangeSplit,
  range: TimeRange,
  transferPart: number,
  policies: readonly number[],
  names: Map<number, string>,
): Promise<AccountSummary[]> {
  const [rows, quotas] = await Promise.all([
    summaries.summarize(db, cluster.id, accounts, split),
    quotasOfAccounts(db, cluster.id, accounts),
  ]);
  return rows.map((r) => toSummary(r, range, transferPart, policies, { names, quotas }));
}

export interface SummaryPage {
  total: number;
  policies: number[];
  /** The cluster's policy names by index (a CSV may head columns with them); an index may have none. */
  policyNames: ReadonlyMap<number, string>;
  rows: AccountSummary[];
}

export async function summaryPage(
  db: Knex,
  cluster: Cluster,
  range: TimeRange,
  filters: readonly Filter[],
  limit: number,
  offset: number,
): Promise<SummaryPage> {
  const split = await summaries.splitRange(db, cluster.id, hourRange(range));
  const [total, accounts, policies, transferPart, names] = await Promise.all([
    summaries.countSummaryAccounts(db, cluster.id, split, filters),
    summaries.summaryAccounts(db, cluster.id, split, filters, { limit, offset }),
    repo.storagePolicies(db, cluster.id),
    transferShare(db, cluster, range),
    policyNames(db, cluster),
  ]);
  return {
    total,
    policies,
    policyNames: names,
    rows: await summarizeBatch(db, cluster, accounts, split, range, transferPart, policies, names),
  };
}

/** The policies an export's columns name, then its rows in batches read by key. */
export async function summaryExport(
  db: Knex,
  cluster: Cluster,
  range: TimeRange,
  filters: readonly Filter[],
  batch = 5000,
): Promise<Omit<SummaryPage, 'total' | 'rows'> & { batches: AsyncGenerator<AccountSummary[]> }> {
  const split = await summaries.splitRange(db, cluster.id, hourRange(range));
  const policies = await repo.storagePolicies(db, cluster.id);
  const transferPart = await transferShare(db, cluster, range);
  const names = await policyNames(db, cluster);
  type Read = { rows: AccountSummary[]; last: string | undefined };
  const read = async (after: string | undefined): Promise<Read> => {
    const accounts = await summaries.summaryAccounts(db, cluster.id, split, filters, { limit: batch, after });
    const rows = await summarizeBatch(db, cluster, accounts, split, range, transferPart, policies, names);
    return { rows, last: accounts.length < batch ? undefined : accounts[accounts.length - 1] };
  };
  // One batch read ahead: the database works on the next while this one is written to the client,
  // and a slow client holds at most two batches in memory (the CSV waits for the socket to drain).
  async function* batches(): AsyncGenerator<AccountSummary[]> {
    let next: Promise<Read> | undefined = read(undefined);
    while (next) {
      const done: Read = await next;
      next = done.last === undefined ? undefined : read(done.last);
      // A failed read ahead is thrown when its turn comes; a client gone before then leaves it unawaited.
      next?.catch(() => {});
      if (done.rows.length > 0) yield done.rows;
    }
  }
  return { policies, policyNames: names, batches: batches() };
}
