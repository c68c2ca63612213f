import Joi from 'joi';
import { TRANSFER_DETAIL_FIELDS, type TransferDetailField } from '@cairn/domain';

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

/**
 * Transfer by class, API and network, as the summary and the transfer detail show them (declared in
 * @cairn/domain, where the log reader fills the same fields).
 */
export const transferDetailFields = (how: string) =>
  Object.fromEntries(
    Object.entries(TRANSFER_DETAIL_FIELDS).map(([name, description]) => [
      name,
      { kind: 'count', description: `${description} ${how}` } satisfies SummaryField,
    ]),
  ) as Record<TransferDetailField, SummaryField>;

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
  ...transferDetailFields('Sum over the range, all policies.'),
  storage_pct_complete: { kind: 'share', description: "Sampled share of the range's hours." },
  transfer_pct_complete: { kind: 'share', description: 'Share of the range covered by ingested logs.' },
  pct_complete: { kind: 'share', description: 'The lower of the two.' },
  ...quotaFields('of the user owning the account (null also when no user owns it any more)', 'object_count'),
} as const satisfies Record<string, SummaryField>;

export type SummaryFieldName = keyof typeof SUMMARY_FIELDS;
export type PolicySummaryFieldName = keyof typeof POLICY_SUMMARY_FIELDS;

/**
 * How the summary's CSV heads each policy's columns (`policy_headers`): `index` gives
 * `p<index>_<field>`, the 1.0 form billing scripts parse and this 1.x API's default; `name` gives
 * `<policy name>_<field>`. Declared once: the route validates with the joi schema, the OpenAPI
 * document and docs/utilization.md describe this parameter.
 */
export const POLICY_HEADERS = ['index', 'name'] as const;
export type PolicyHeaders = (typeof POLICY_HEADERS)[number];
export const DEFAULT_POLICY_HEADERS: PolicyHeaders = 'index';
const POLICY_HEADERS_NAME = 'policy_headers';

const POLICY_HEADERS_RULE = `must be 'index' (p<index>_ columns, the default) or 'name' (the storage policy's name)`;
export const policyHeadersSchema = Joi.string()
  .valid(...POLICY_HEADERS)
  .default(DEFAULT_POLICY_HEADERS)
  .label(POLICY_HEADERS_NAME)
  .messages({
    'any.only': `The {{#label}} parameter ${POLICY_HEADERS_RULE}.`,
    'string.empty': `The {{#label}} parameter ${POLICY_HEADERS_RULE}.`,
  });

export const POLICY_HEADERS_PARAMETER = {
  name: POLICY_HEADERS_NAME,
  description:
    "CSV only: head each policy's columns with `p<index>_` (`index`, the default in 1.x) or with the policy's name, as the cluster's device report names it (`name`: `gold_bytes_used_avg`). A policy without a known name, or named like an index column (`p1`), keeps `p<index>_`. The default becomes `name` in 2.0. Another value is a 400, whatever the format.",
  values: POLICY_HEADERS,
  default: DEFAULT_POLICY_HEADERS,
} as const;

/** An index column's prefix; a policy named like one would pass for another policy's column. */
const INDEX_PREFIX = /^p[0-9]+$/i;

/**
 * The prefix of a policy's CSV columns. Names are unique in a cluster without regard to case and
 * hold only letters, digits and '-' (the device report's rule), so they never meet each other, an
 * index prefix (refused above) or an account-wide column: every header of an export stays distinct.
 */
export function policyColumnPrefix(index: number, name: string | undefined, headers: PolicyHeaders): string {
  return headers === 'name' && name !== undefined && !INDEX_PREFIX.test(name) ? name : `p${index}`;
}
