/**
 * The billing summary's public shape, declared once: the JSON and XML rows, the CSV columns and
 * the OpenAPI schema are all read from these tables, in this order.
 *
 * Kinds: `count` a whole number ≥ 0 (exact past 2^53); `share` a percentage 0..100; `quota` a
 * whole number or null (no quota); `used` a percentage of a quota, null without one, above 100
 * when the account went over (Swift lets uploads overshoot while usage catches up).
 */
export type SummaryFieldKind = 'text' | 'count' | 'share' | 'quota' | 'used';

export interface SummaryField {
  kind: SummaryFieldKind;
  description: string;
}

/** What a billing operator reads of an account's quotas in the summary (per account and per policy). */
const quotaFields = (whose: string, objects: string) =>
  ({
    quota_bytes: {
      kind: 'quota',
      description: `The byte quota ${whose} as it stands now (not as it was during the range); null: none.`,
    },
    quota_count: { kind: 'quota', description: `The object-count quota ${whose} as it stands now; null: none.` },
    quota_bytes_used_pct: {
      kind: 'used',
      description: `bytes_used_peak as a percentage of quota_bytes (over 100: the account went over); null without a byte quota, or with a quota of 0.`,
    },
    quota_count_used_pct: {
      kind: 'used',
      description: `${objects} as a percentage of quota_count; null without an object-count quota, or with a quota of 0.`,
    },
  }) as const satisfies Record<string, SummaryField>;

export const POLICY_SUMMARY_FIELDS = {
  policy_index: { kind: 'count', description: 'Storage policy index, as in swift.conf.' },
  bytes_used_avg: {
    kind: 'count',
    description:
      'Byte-hours in this policy ÷ the hours the account was sampled; an hour sampled without the policy counts 0.',
  },
  bytes_used_peak: { kind: 'count', description: 'Largest hourly bytes_used in this policy.' },
  object_count: { kind: 'count', description: "At the account's latest sample (0 when the policy was not in it)." },
  container_count: { kind: 'count', description: "At the account's latest sample (0 when the policy was not in it)." },
  ...quotaFields("of the user owning the account in this policy (by the policy's name)", 'object_count in this policy'),
} as const satisfies Record<string, SummaryField>;

export const SUMMARY_FIELDS = {
  account: { kind: 'text', description: 'Swift account, AUTH_<user>.' },
  hours: { kind: 'count', description: 'Hours in the range.' },
  bytes_used_avg: { kind: 'count', description: 'Byte-hours ÷ the hours the account was sampled.' },
  bytes_used_peak: { kind: 'count', description: 'Largest hourly bytes_used.' },
  object_count: { kind: 'count', description: 'At the latest sampled hour of the range.' },
  container_count: { kind: 'count', description: 'At the latest sampled hour of the range.' },
  bytes_in: { kind: 'count', description: 'Sum over the range, all policies.' },
  bytes_out: { kind: 'count', description: 'Sum over the range, all policies.' },
  req_count: { kind: 'count', description: 'Sum over the range, all policies.' },
  storage_pct_complete: { kind: 'share', description: "Sampled share of the range's hours." },
  transfer_pct_complete: { kind: 'share', description: 'Share of the range covered by ingested logs.' },
  pct_complete: { kind: 'share', description: 'The lower of the two.' },
  ...quotaFields('of the user owning the account (null also when no user owns it any more)', 'object_count'),
} as const satisfies Record<string, SummaryField>;

export type SummaryFieldName = keyof typeof SUMMARY_FIELDS;
export type PolicySummaryFieldName = keyof typeof POLICY_SUMMARY_FIELDS;
