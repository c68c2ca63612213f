import type { Knex } from 'knex';
import { type TimeRange } from '@cairn/domain';
import type { Cluster } from '@cairn/domain';
import type { Filter } from '../repositories/list-types';
import * as repo from '../repositories/utilization';
import { TOTAL_POLICY, type Count } from '../repositories/utilization';
import * as summaries from '../repositories/utilization-summary';
import { hourRange, pct } from './utilization';

/** The billing summary: one row per account over a range, as a page or as an export read by key. */

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

function toSummary(row: summaries.SummaryRow, range: TimeRange, transferPart: number, policies: readonly number[]): AccountSummary {
  // Averages are byte-hours over the hours in which the account was sampled: an hour the collector
  // missed lowers pct_complete, not the bill. Policies share the account's hours, because Swift
  // drops a policy's headers once the account has no container in it: a sampled hour without a
  // policy's row is a zero for that policy, so the per-policy averages add up to the total's.
  const total = row.storage.get(TOTAL_POLICY);
  const hours = total?.hours ?? 0;
  const avg = (s: { byteHours: number } | undefined) => (s && hours > 0 ? Math.round(s.byteHours / hours) : 0);
  // Counts "at the end" are those of the account's latest sample; a policy missing from it is at zero.
  const atEnd = (s: summaries.PolicyFigures | undefined) => (s && total && s.latestAt >= total.latestAt ? s : undefined);
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
      const end = atEnd(s);
      return { policy_index: p, bytes_used_avg: avg(s), bytes_used_peak: s?.peak ?? 0, object_count: end?.objectCount ?? 0, container_count: end?.containerCount ?? 0 };
    }),
  };
}

export interface SummaryPage {
  total: number;
  policies: number[];
  rows: AccountSummary[];
}

export async function summaryPage(db: Knex, cluster: Cluster, range: TimeRange, filters: readonly Filter[], limit: number, offset: number): Promise<SummaryPage> {
  const split = await summaries.splitRange(db, cluster.id, hourRange(range));
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
  const split = await summaries.splitRange(db, cluster.id, hourRange(range));
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
