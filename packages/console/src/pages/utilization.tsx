import { useMemo, useState } from 'preact/hooks';
import { ApiError, errorText, listAll, query, type Call, type List, type StoragePolicy } from '../api';
import { ErrorText, Loading, ScrollBox, Section, TableHead } from '../components';
import { useSession } from '../context';
import { navigate, useLoad, type Loaded } from '../hooks';
import { bytesTitle, formatBytes, formatPct } from '../lib/format';
import {
  policyNamer,
  presetStart,
  storageByPolicy,
  toSeries,
  total,
  type PolicySummary,
  type StorageRecord,
  type TransferFigures,
  type TransferRecord,
} from '../lib/utilization';
import { PolicyBars } from './policy-bars';
import { TransferBreakdown } from './transfer-breakdown';
import { TimeChart } from './timechart';

const PAGE = 50;
/** Hourly records read for an account's charts: a month and a bit. */
const MAX_HOURS = 1000;
/** Summary rows read for the cluster's storage by policy (10 requests); past it the chart says what it covers. */
const POLICY_READ_LIMIT = 10_000;

/** A summary row: the transfer figures (totals, classes, S3 and internal shares) and the storage. */
interface AccountSummary extends TransferFigures {
  account: string;
  hours: number;
  bytes_used_avg: number;
  bytes_used_peak: number;
  object_count: number;
  container_count: number;
  pct_complete: number;
  policies: PolicySummary[];
}

type Summary = List<AccountSummary> & { meta: { start: string; end: string } };

/** A missing route (an API without utilization) is a 404 naming no resource. */
const unavailable = (e: unknown) => e instanceof ApiError && e.status === 404 && /^No resource at/.test(e.message);

/** The cluster's storage policy names by index, for bars, legends and chart series ("gold", not "policy 0"). */
function usePolicyNames(call: Call, clusterId: number): (index: number) => string {
  const policies = useLoad(
    () =>
      call<List<StoragePolicy>>('GET', `clusters/${clusterId}/utilization/policies/?limit=1000`).catch((e: unknown) => {
        if (unavailable(e)) return null;
        throw e;
      }),
    [clusterId],
  );
  return useMemo(() => policyNamer(policies.data?.objects ?? []), [policies.data]);
}

/** Storage and transfer per account over a range: the billing summary, then one account's hours. */
export function UtilizationPage({ clusterId, params }: { clusterId: number; params: URLSearchParams }) {
  const { call, clusters, download } = useSession();
  const cluster = clusters.find((c) => c.id === clusterId);
  const start = params.get('start') || presetStart(7);
  const end = params.get('end') ?? '';
  const prefix = params.get('q') ?? '';
  const account = params.get('account') ?? '';
  const offset = Math.max(0, Number(params.get('offset') ?? 0) || 0);
  const state = { start: params.get('start') ?? undefined, end, q: prefix, account };
  const base = `clusters/${clusterId}/utilization`;
  const range = { start, end: end || undefined };
  const summary = useLoad(
    () =>
      call<Summary>(
        'GET',
        `${base}/summary/${query({ ...range, account__startswith: prefix || undefined, limit: PAGE, offset })}`,
      ).catch((e: unknown) => {
        if (unavailable(e)) return null;
        throw e;
      }),
    [clusterId, start, end, prefix, offset],
  );
  const everyAccount = useLoad(
    () =>
      listAll<AccountSummary>(
        call,
        `${base}/summary/${query({ ...range, account__startswith: prefix || undefined, limit: 1000 })}`,
        POLICY_READ_LIMIT,
      ).catch((e: unknown) => {
        if (unavailable(e)) return null;
        throw e;
      }),
    [clusterId, start, end, prefix],
  );
  const [csvError, csv] = useCsvDownload(download);
  const nameOf = usePolicyNames(call, clusterId);
  const go = (changes: Record<string, string | number | undefined>) =>
    navigate(`/clusters/${clusterId}/utilization`, { ...state, offset: undefined, ...changes });
  if (!cluster) return <ErrorText error={`No cluster with id ${clusterId} (or you may not see it).`} />;
  const count = summary.data?.meta.total_count ?? 0;
  return (
    <>
      <div class="page-head">
        <h1 tabIndex={-1}>Utilization — {cluster.name}</h1>
        <a href="#/clusters">All clusters</a>
      </div>
      {summary.data === null ? (
        <p class="notice" role="status">
          This management API has no utilization API yet; upgrade it to see storage and transfer per account.
        </p>
      ) : (
        <>
          <form
            class="row filters"
            onSubmit={(e) => {
              e.preventDefault();
              const f = new FormData(e.currentTarget);
              go({
                start: String(f.get('start') ?? '') || undefined,
                end: String(f.get('end') ?? ''),
                q: String(f.get('q') ?? ''),
              });
            }}
          >
            <label>
              From (UTC)
              <input name="start" value={start} required />
            </label>
            <label>
              To (UTC, empty: now)
              <input name="end" value={end} />
            </label>
            <label>
              Account starts with
              <input name="q" type="search" value={prefix} />
            </label>
            <button type="submit">Apply</button>
            {[1, 7, 30].map((d) => (
              <button type="button" class="secondary" onClick={() => go({ start: presetStart(d), end: '' })}>
                Last {d === 1 ? '24 h' : `${d} days`}
              </button>
            ))}
          </form>
          {summary.data ? (
            <p class="hint">
              {summary.data.meta.start} to {summary.data.meta.end} (the API rounds the start down to the half hour and
              the end up to whole hours). Swift's account statistics are eventually consistent: the latest hours may
              still grow.
            </p>
          ) : null}
          <ErrorText error={summary.error} />
          <PolicySection load={everyAccount} prefix={prefix} nameOf={nameOf} />
          <Section
            title="Accounts (billing summary)"
            actions={
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  csv(
                    // Columns headed by policy name (gold_bytes_used_avg), as the bars and legends name them.
                    `${base}/summary/${query({ ...range, account__startswith: prefix || undefined, policy_headers: 'name' })}`,
                    `summary-${cluster.name}.csv`,
                  )
                }
              >
                Download CSV
              </button>
            }
          >
            <ErrorText error={csvError} />
            {summary.loading && !summary.data ? <Loading what="utilization" /> : null}
            {summary.data ? (
              <ScrollBox label="Accounts" busy={summary.loading}>
                <table class="utilization">
                  <TableHead
                    row="Account"
                    nums={['Stored (avg)', 'Peak', 'Objects', 'Containers', 'In', 'Out', 'Requests', 'Complete']}
                  />
                  <tbody>
                    {summary.data.objects.map((s) => (
                      <tr data-account={s.account} aria-current={s.account === account ? 'true' : undefined}>
                        <th scope="row">
                          <a
                            href={`#/clusters/${clusterId}/utilization?${new URLSearchParams({ ...(params.get('start') ? { start } : {}), ...(end ? { end } : {}), ...(prefix ? { q: prefix } : {}), account: s.account })}`}
                          >
                            {s.account}
                          </a>
                        </th>
                        <td class="num" data-raw={String(s.bytes_used_avg)} title={bytesTitle(s.bytes_used_avg)}>
                          {formatBytes(s.bytes_used_avg)}
                        </td>
                        <td class="num" title={bytesTitle(s.bytes_used_peak)}>
                          {formatBytes(s.bytes_used_peak)}
                        </td>
                        <td class="num">{s.object_count.toLocaleString()}</td>
                        <td class="num">{s.container_count.toLocaleString()}</td>
                        <td class="num" data-raw={String(s.bytes_in)} title={bytesTitle(s.bytes_in)}>
                          {formatBytes(s.bytes_in)}
                        </td>
                        <td class="num" data-raw={String(s.bytes_out)} title={bytesTitle(s.bytes_out)}>
                          {formatBytes(s.bytes_out)}
                        </td>
                        <td class="num">{s.req_count.toLocaleString()}</td>
                        <td class="num">{formatPct(s.pct_complete)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                {summary.data.objects.length === 0 ? <p>No account has data in this range.</p> : null}
              </ScrollBox>
            ) : null}
            {summary.data && count > PAGE ? (
              <nav class="pager row" aria-label="Pages">
                <button
                  type="button"
                  class="secondary"
                  disabled={offset === 0}
                  onClick={() => go({ offset: Math.max(0, offset - PAGE) || undefined })}
                >
                  Previous
                </button>
                <span role="status">
                  {offset + 1}–{Math.min(offset + PAGE, count)} of {count.toLocaleString()}
                </span>
                <button
                  type="button"
                  class="secondary"
                  disabled={offset + PAGE >= count}
                  onClick={() => go({ offset: offset + PAGE })}
                >
                  Next
                </button>
              </nav>
            ) : null}
          </Section>
          {account && summary.data ? (
            <AccountDetail call={call} base={base} account={account} range={range} onCsv={csv} nameOf={nameOf} />
          ) : null}
        </>
      )}
    </>
  );
}

/** The cluster's (or the filtered accounts') average bytes stored per policy over the range. */
function PolicySection({
  load,
  prefix,
  nameOf,
}: {
  load: Loaded<{ rows: AccountSummary[]; total: number } | null>;
  prefix: string;
  nameOf: (index: number) => string;
}) {
  const totals = useMemo(() => storageByPolicy(load.data?.rows ?? []), [load.data]);
  const whose = prefix ? `accounts starting with ${prefix}` : 'the cluster';
  return (
    <Section title="Storage by policy">
      {load.loading && !load.data ? <Loading what="storage by policy" /> : null}
      <ErrorText error={load.error} />
      {load.data && totals.length === 0 ? <p>No storage data in this range.</p> : null}
      {load.data && totals.length > 0 ? (
        <>
          <PolicyBars totals={totals} nameOf={nameOf} label={`Average bytes stored per storage policy, ${whose}`} />
          <p class="legend">
            Average stored per policy in this range, across {load.data.rows.length.toLocaleString()}{' '}
            {load.data.rows.length === 1 ? 'account' : 'accounts'}
            {prefix ? ` starting with ${prefix}` : ''}
            {load.data.total > load.data.rows.length
              ? ` (the first ${load.data.rows.length.toLocaleString()} of ${load.data.total.toLocaleString()})`
              : ''}
            :{' '}
            {totals
              .map(
                (t) =>
                  `${nameOf(t.policy_index)} ${formatBytes(t.bytes_used_avg)} in ${t.object_count.toLocaleString()} objects`,
              )
              .join(' · ')}
          </p>
        </>
      ) : null}
    </Section>
  );
}

/** Saves a CSV export as a file; a failure becomes the error to show next to the buttons. */
function useCsvDownload(
  download: (path: string, filename: string) => Promise<void>,
): [string | undefined, (path: string, filename: string) => Promise<void>] {
  const [error, setError] = useState<string>();
  const csv = async (path: string, filename: string) => {
    setError(undefined);
    try {
      await download(path, filename);
    } catch (e) {
      setError(errorText(e));
    }
  };
  return [error, csv];
}

/** A user's page: its account's last 7 days, the same charts and CSV as on the utilization page. */
export function UserUsage({ clusterId, account }: { clusterId: number; account: string }) {
  const { call, download } = useSession();
  const [csvError, csv] = useCsvDownload(download);
  const range = useMemo(() => ({ start: presetStart(7) }), []);
  const nameOf = usePolicyNames(call, clusterId);
  return (
    <>
      <ErrorText error={csvError} />
      <AccountDetail
        call={call}
        base={`clusters/${clusterId}/utilization`}
        account={account}
        range={range}
        onCsv={csv}
        nameOf={nameOf}
      />
    </>
  );
}

function AccountDetail({
  call,
  base,
  account,
  range,
  onCsv,
  nameOf,
}: {
  call: Call;
  base: string;
  account: string;
  range: { start: string; end?: string };
  onCsv: (path: string, filename: string) => void;
  nameOf: (index: number) => string;
}) {
  const enc = encodeURIComponent(account);
  const detail = useLoad(async () => {
    const q = query({ ...range, limit: MAX_HOURS });
    const [row] = (await call<List<AccountSummary>>('GET', `${base}/summary/${query({ ...range, account, limit: 1 })}`))
      .objects;
    const policies = row?.policies.map((p) => p.policy_index) ?? [];
    const [storage, transfer, ...byPolicy] = await Promise.all([
      call<List<StorageRecord>>('GET', `${base}/storage/total/${enc}/detail/${q}`),
      call<List<TransferRecord>>('GET', `${base}/transfer/total/${enc}/detail/${q}`),
      ...policies.map((p) => call<List<StorageRecord>>('GET', `${base}/storage/${p}/${enc}/detail/${q}`)),
    ]);
    return {
      summary: row,
      storage: storage.objects,
      transfer: transfer.objects,
      policies,
      byPolicy: byPolicy.map((l) => l.objects),
      truncated: storage.meta.total_count > MAX_HOURS,
    };
  }, [base, account, range.start, range.end]);
  const charts = useMemo(() => {
    const d = detail.data;
    if (!d) return null;
    const stored = toSeries(d.byPolicy.length > 0 ? d.byPolicy : [d.storage], (r) => r.bytes_used);
    const bytesIn = toSeries([d.transfer], (r) => r.bytes_in);
    const bytesOut = toSeries([d.transfer], (r) => r.bytes_out);
    return { stored, moved: { x: bytesIn.x, ys: [bytesIn.ys[0]!, bytesOut.ys[0]!] } };
  }, [detail.data]);
  const q = query(range);
  return (
    <Section
      title={`Account ${account}`}
      actions={
        <span class="row">
          <button
            type="button"
            class="secondary"
            onClick={() => onCsv(`${base}/storage/total/${enc}/detail/${q}`, `storage-${account}.csv`)}
          >
            Storage CSV
          </button>
          <button
            type="button"
            class="secondary"
            onClick={() => onCsv(`${base}/transfer/total/${enc}/detail/${q}`, `transfer-${account}.csv`)}
          >
            Transfer CSV
          </button>
        </span>
      }
    >
      <ErrorText error={detail.error} />
      {detail.loading && !detail.data ? <Loading what="the account's hours" /> : null}
      {detail.data && charts ? (
        <>
          {detail.data.truncated ? (
            <p class="warning">Showing the first {MAX_HOURS} hours; narrow the range to see the rest.</p>
          ) : null}
          {detail.data.storage.length === 0 ? <p>No records for this account in the range.</p> : null}
          <div class="grid">
            <TimeChart
              title="Bytes stored, by storage policy"
              x={charts.stored.x}
              unit="bytes"
              series={charts.stored.ys.map((values, i) => ({
                label: detail.data!.policies.length > 0 ? nameOf(detail.data!.policies[i]!) : 'all policies',
                values,
              }))}
            />
            <TimeChart
              title="Bytes transferred per hour"
              x={charts.moved.x}
              unit="bytes/h"
              series={[
                { label: 'in', values: charts.moved.ys[0]! },
                { label: 'out', values: charts.moved.ys[1]! },
              ]}
            />
          </div>
          <p class="legend">
            Over the range: in {formatBytes(total(detail.data.transfer, (r) => r.bytes_in))} · out{' '}
            {formatBytes(total(detail.data.transfer, (r) => r.bytes_out))} ·{' '}
            {total(detail.data.transfer, (r) => r.req_count).toLocaleString()} requests
          </p>
          {detail.data.summary ? <TransferBreakdown figures={detail.data.summary} caption="over the range" /> : null}
          <details>
            <summary>Hourly records</summary>
            <ScrollBox label="Hourly records">
              <table class="hours">
                <TableHead row="Hour (UTC)" nums={['Stored', 'Objects', 'In', 'Out', 'Requests', 'Complete']} />
                <tbody>
                  {detail.data.storage.map((s, i) => {
                    const t = detail.data!.transfer[i];
                    return (
                      <tr>
                        <td>{s.start}</td>
                        <td class="num" title={bytesTitle(s.bytes_used)}>
                          {formatBytes(s.bytes_used)}
                        </td>
                        <td class="num">{s.object_count.toLocaleString()}</td>
                        <td class="num">{t ? formatBytes(t.bytes_in) : '—'}</td>
                        <td class="num">{t ? formatBytes(t.bytes_out) : '—'}</td>
                        <td class="num">{t ? t.req_count.toLocaleString() : '—'}</td>
                        <td class="num">{formatPct(Math.min(s.pct_complete, t?.pct_complete ?? s.pct_complete))}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </ScrollBox>
          </details>
        </>
      ) : null}
    </Section>
  );
}
