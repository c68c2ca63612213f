import {
  TRANSFER_CLASSES,
  classField,
  type TransferClass,
  type TransferDetailField,
} from '@cairn/domain/transfer-classes';

/** The utilization page's pure parts: time ranges and hourly records turned into chart series. */

const DAY = 86_400_000;

/** A preset range ending now, as the API's `start` (UTC date-time; it rounds down to the half hour). */
export function presetStart(days: number, now: Date = new Date()): string {
  return new Date(Math.floor((now.getTime() - days * DAY) / 1_800_000) * 1_800_000)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z');
}

/** '2026-11-24 22:00:00Z' (the API's record bounds) → milliseconds. */
export function parseRecordTime(s: string): number {
  return Date.parse(s.replace(' ', 'T'));
}

export interface StorageRecord {
  start: string;
  end: string;
  bytes_used: number;
  object_count: number;
  container_count: number;
  pct_complete: number;
}

/** Transfer totals with their requests by class, S3 share and internal share (TRANSFER_DETAIL_FIELDS). */
export type TransferFigures = { bytes_in: number; bytes_out: number; req_count: number } & Record<
  TransferDetailField,
  number
>;

export type TransferRecord = TransferFigures & {
  start: string;
  end: string;
  pct_complete: number;
};

/**
 * Chart data: x in seconds (uPlot's unit), one y series per input; an hour with nothing known
 * (pct_complete 0) is a gap (null), not a drop to zero.
 */
export function toSeries<R extends { start: string; pct_complete: number }>(
  records: readonly R[][],
  value: (r: R) => number,
): { x: number[]; ys: Array<Array<number | null>> } {
  const times = new Set<number>();
  for (const list of records) for (const r of list) times.add(parseRecordTime(r.start));
  const x = [...times].sort((a, b) => a - b);
  const at = new Map(x.map((t, i) => [t, i]));
  const ys = records.map((list) => {
    const y: Array<number | null> = x.map(() => null);
    for (const r of list) if (r.pct_complete > 0) y[at.get(parseRecordTime(r.start))!] = value(r);
    return y;
  });
  return { x: x.map((t) => t / 1000), ys };
}

/**
 * A storage policy's name from the cluster's policies (`utilization/policies/`), by index; an index
 * the cluster no longer reports reads "policy 3".
 */
export function policyNamer(policies: ReadonlyArray<{ index: number; name: string }>): (index: number) => string {
  const names = new Map(policies.map((p) => [p.index, p.name]));
  return (index) => names.get(index) ?? `policy ${index}`;
}

/** Sum of a transfer field over the records (bytes or requests over the range). */
export const total = <R>(records: readonly R[], value: (r: R) => number): number =>
  records.reduce((a, r) => a + value(r), 0);

/** What the summary gives per account and storage policy, by policy index (names: {@link policyNamer}). */
export interface PolicySummary {
  policy_index: number;
  bytes_used_avg: number;
  bytes_used_peak: number;
  object_count: number;
  container_count: number;
}

export interface PolicyTotal {
  policy_index: number;
  /** Sum of the accounts' average bytes stored: the cluster's average over the range. */
  bytes_used_avg: number;
  /** Sum of the accounts' objects at their latest sampled hour. */
  object_count: number;
  /** Accounts with anything stored in the policy. */
  accounts: number;
}

/**
 * The cluster's storage per policy from summary rows, by policy index. Averages add up (each is
 * byte-hours over the range); peaks do not (accounts peak at different hours), so none is summed.
 */
export function storageByPolicy(rows: ReadonlyArray<{ policies: readonly PolicySummary[] }>): PolicyTotal[] {
  const by = new Map<number, PolicyTotal>();
  for (const row of rows) {
    for (const p of row.policies) {
      const t = by.get(p.policy_index) ?? {
        policy_index: p.policy_index,
        bytes_used_avg: 0,
        object_count: 0,
        accounts: 0,
      };
      t.bytes_used_avg += p.bytes_used_avg;
      t.object_count += p.object_count;
      if (p.bytes_used_avg > 0 || p.object_count > 0) t.accounts += 1;
      by.set(p.policy_index, t);
    }
  }
  return [...by.values()].sort((a, b) => a.policy_index - b.policy_index);
}

/** Bytes and requests of one side of a split (the Swift API or S3; internal or external networks). */
export interface TransferShare {
  label: string;
  bytes_in: number;
  bytes_out: number;
  req_count: number;
}

export interface TransferBreakdown {
  classes: Array<{ cls: TransferClass; count: number }>;
  errors: number;
  /** Requests in the totals but in no class: hours recorded before classes were metered. */
  unclassified: number;
  apis: [TransferShare, TransferShare];
  networks: [TransferShare, TransferShare];
}

/**
 * Requests by class and the two splits of a range's transfer: the S3 and internal shares are
 * recorded, the Swift API's and the external ones are the totals less them.
 */
export function transferBreakdown(t: TransferFigures): TransferBreakdown {
  const classes = TRANSFER_CLASSES.map((cls) => ({ cls, count: t[classField(cls)] }));
  const share = (label: string, bytesIn: number, bytesOut: number, requests: number): TransferShare => ({
    label,
    bytes_in: bytesIn,
    bytes_out: bytesOut,
    req_count: requests,
  });
  return {
    classes,
    errors: t.req_errors,
    unclassified: Math.max(0, t.req_count - total(classes, (c) => c.count)),
    apis: [
      share('Swift API', t.bytes_in - t.s3_bytes_in, t.bytes_out - t.s3_bytes_out, t.req_count - t.s3_req_count),
      share('S3 API', t.s3_bytes_in, t.s3_bytes_out, t.s3_req_count),
    ],
    networks: [
      share(
        'External',
        t.bytes_in - t.internal_bytes_in,
        t.bytes_out - t.internal_bytes_out,
        t.req_count - t.internal_req_count,
      ),
      share('Internal', t.internal_bytes_in, t.internal_bytes_out, t.internal_req_count),
    ],
  };
}

/** A class as a column heads it: the HTTP method, or what the class counts. */
export const CLASS_HEADINGS: Readonly<Record<TransferClass, string>> = {
  get: 'GET',
  head: 'HEAD',
  put: 'PUT',
  post: 'POST',
  delete: 'DELETE',
  list: 'Listings',
  copy: 'Copies',
  other: 'Other',
};
