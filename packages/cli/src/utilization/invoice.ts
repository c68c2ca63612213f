import {
  invoiceLine,
  parseCsv,
  TRANSFER_CLASSES,
  type BilledUsage,
  type InvoiceLine,
  type PriceSheet,
  type TransferClass,
} from '@cairn/domain';
import { apiError, unreachable, type ApiTarget } from '../api-client';
import { listAll } from '../remote/list';

/**
 * `cairn utilization invoice`: the summary of a range priced by a price sheet, one line per account.
 * The summary is read as CSV, whose figures are digits of any length (JSON numbers would go through
 * floats past 2^53), and every figure is a bigint from there on (see @cairn/domain's invoice.ts).
 */

const big = (s: string | undefined, what: string): bigint => {
  if (s === undefined || !/^\d+$/.test(s)) throw new Error(`the summary's ${what} is not a whole number: '${s}'`);
  return BigInt(s);
};

/**
 * One account's usage from a summary CSV row. Storage is billed per policy; an account whose
 * summary has no per-policy figure (none of the cluster's policies was sampled) is billed on its
 * total at the `default` price. Egress is bytes_out less its internal share. Requests recorded
 * before classes were (totals only: req_count more than the classes' sum) count as `other`.
 */
export function usageOf(
  header: string[],
  cells: string[],
  policies: ReadonlyArray<{ index: number; name: string }>,
): BilledUsage {
  const at = (f: string) => {
    const i = header.indexOf(f);
    return i < 0 ? undefined : cells[i];
  };
  const storage: BilledUsage['storage'] = [];
  for (const p of policies) {
    const v = at(`p${p.index}_bytes_used_avg`);
    if (v !== undefined && v !== '0')
      storage.push({ policy: p.name, index: p.index, bytesAvg: big(v, 'bytes_used_avg') });
  }
  const total = big(at('bytes_used_avg'), 'bytes_used_avg');
  if (storage.length === 0 && total > 0n) storage.push({ policy: 'default', index: null, bytesAvg: total });
  const requests = Object.fromEntries(TRANSFER_CLASSES.map((c) => [c, big(at(`req_${c}`), `req_${c}`)])) as Record<
    TransferClass,
    bigint
  >;
  const classified = TRANSFER_CLASSES.reduce((n, c) => n + requests[c], 0n);
  const reqCount = big(at('req_count'), 'req_count');
  if (reqCount > classified) requests.other += reqCount - classified;
  const out = big(at('bytes_out'), 'bytes_out');
  const internalOut = big(at('internal_bytes_out'), 'internal_bytes_out');
  return {
    account: at('account') ?? '',
    hours: big(at('hours'), 'hours'),
    storage,
    bytesIn: big(at('bytes_in'), 'bytes_in'),
    externalBytesOut: out > internalOut ? out - internalOut : 0n,
    requests,
  };
}

export async function invoice(
  target: ApiTarget,
  clusterId: number,
  start: string,
  end: string,
  sheet: PriceSheet,
): Promise<InvoiceLine[]> {
  const policies = (await listAll(target, `/api/v1/clusters/${clusterId}/utilization/policies/`, [])) as Array<{
    index: number;
    name: string;
  }>;
  const query = new URLSearchParams({ start, end, format: 'csv', policy_headers: 'index' });
  let res: Response;
  let text: string;
  try {
    res = await fetch(`${target.apiUrl}/api/v1/clusters/${clusterId}/utilization/summary/?${query.toString()}`, {
      headers: target.apiKey ? { Authorization: `ApiKey ${target.apiKey}` } : {},
      signal: AbortSignal.timeout(600_000),
    });
    text = await res.text();
  } catch (e) {
    throw unreachable(e);
  }
  if (res.status !== 200) {
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = { error: text.slice(0, 200) };
    }
    throw apiError('reading the summary', { status: res.status, json });
  }
  const [header, ...rows] = parseCsv(text);
  if (!header) return [];
  return rows.map((cells) => invoiceLine(sheet, usageOf(header, cells, policies)));
}
