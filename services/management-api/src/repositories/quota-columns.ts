import type { Quotas } from '@cairn/domain';

/**
 * How quotas are stored (migration 20261127120000_quotas): bigints (pg gives them as strings), and
 * per-policy quotas as jsonb objects of decimal strings. Users hold them as `quota_*`, clusters as
 * `default_quota_*`.
 */
export interface QuotaRow {
  quota_bytes: string | number | null;
  quota_count: string | number | null;
  quota_bytes_policy: unknown;
  quota_count_policy: unknown;
}

export const QUOTA_COLUMNS = ['quota_bytes', 'quota_count', 'quota_bytes_policy', 'quota_count_policy'] as const;

/** node-postgres parses jsonb; other drivers may hand back its text. */
const policyMap = (v: unknown): Record<string, string> | null => {
  const value = typeof v === 'string' ? (JSON.parse(v) as unknown) : v;
  return value && typeof value === 'object' && Object.keys(value).length > 0 ? (value as Record<string, string>) : null;
};
const big = (v: string | number | null): string | null => (v === null || v === undefined ? null : String(v));

export const quotasOfRow = (r: QuotaRow, prefix = ''): Quotas => {
  const row = r as unknown as Record<string, unknown>;
  return {
    bytes: big(row[`${prefix}quota_bytes`] as string | null),
    count: big(row[`${prefix}quota_count`] as string | null),
    bytesPolicy: policyMap(row[`${prefix}quota_bytes_policy`]),
    countPolicy: policyMap(row[`${prefix}quota_count_policy`]),
  };
};

/** The columns of the quotas given (a partial change writes only those). */
export function quotasToRow(q: Partial<Quotas>, prefix = ''): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const json = (m: Record<string, string> | null) => (m === null ? null : JSON.stringify(m));
  if (q.bytes !== undefined) out[`${prefix}quota_bytes`] = q.bytes;
  if (q.count !== undefined) out[`${prefix}quota_count`] = q.count;
  if (q.bytesPolicy !== undefined) out[`${prefix}quota_bytes_policy`] = json(q.bytesPolicy);
  if (q.countPolicy !== undefined) out[`${prefix}quota_count_policy`] = json(q.countPolicy);
  return out;
}
