import Joi from 'joi';

/**
 * Account quotas as Swift's `account_quotas` middleware enforces them, and what each Swift release
 * of it understands (read from Swift's history of swift/common/middleware/account_quotas.py):
 *
 * - up to 2.31: the byte quota only, as user metadata `X-Account-Meta-Quota-Bytes`;
 * - 2.32: byte quotas per storage policy, `X-Account-Quota-Bytes-Policy-<name>` (sysmeta);
 * - 2.34: `X-Account-Quota-Bytes`, `X-Account-Quota-Count` and `X-Account-Quota-Count-Policy-<name>`
 *   (sysmeta); the old header is still honoured, and when both are set the new one wins.
 *
 * Only a reseller request may set them (keystoneauth's ResellerAdmin role); a POST with an empty
 * value removes one. `/info` shows an empty `account_quotas` section in every release, so what a
 * cluster supports is read from `/info`'s `swift.version`.
 */

/** The largest quota: Postgres bigint (and Swift parses any size). */
export const QUOTA_MAX = 9223372036854775807n;
const QUOTA_MAX_TEXT = QUOTA_MAX.toString();

/** A user's (or a cluster's default) quotas. Numbers are decimal strings (bigints); null is no quota. */
export interface Quotas {
  bytes: string | null;
  count: string | null;
  /** Policy name -> bytes; null when there is none. */
  bytesPolicy: Record<string, string> | null;
  countPolicy: Record<string, string> | null;
}

export const NO_QUOTAS: Quotas = Object.freeze({ bytes: null, count: null, bytesPolicy: null, countPolicy: null });

/** The API's names of the four quota fields (a cluster's defaults carry the prefix `default_`). */
export type QuotaField = 'quota_bytes' | 'quota_count' | 'quota_bytes_policy' | 'quota_count_policy';
export const QUOTA_FIELDS: Record<QuotaField, keyof Quotas> = {
  quota_bytes: 'bytes',
  quota_count: 'count',
  quota_bytes_policy: 'bytesPolicy',
  quota_count_policy: 'countPolicy',
};

const QUOTA_RULE = `must be null (no quota) or a whole number from 0 to ${QUOTA_MAX_TEXT}`;

/** Canonical decimal text of a quota value, or null when `value` is not one. */
function quotaText(value: unknown): string | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? String(value) : null;
  if (typeof value !== 'string' || !/^\d{1,19}$/.test(value.trim())) return null;
  const n = BigInt(value.trim());
  return n <= QUOTA_MAX ? n.toString() : null;
}

/**
 * One quota: null, or an integer as a JSON number (up to 2^53) or a decimal string (up to 2^63 - 1); becomes a string.
 */
export const quotaValueSchema = Joi.any()
  .custom((value: unknown, helpers) => {
    if (value === null) return null;
    const text = quotaText(value);
    return text === null ? helpers.error('quota.value') : text;
  })
  .messages({ 'quota.value': `The {{#label}} field ${QUOTA_RULE}.` });

/** Per-policy quotas: null (none), or an object from policy name to quota; a policy given null has none. */
export const policyQuotasSchema = Joi.any()
  .custom((value: unknown, helpers) => {
    if (value === null) return null;
    if (typeof value !== 'object' || Array.isArray(value)) return helpers.error('quota.policies');
    const out: Record<string, string> = {};
    for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
      if (name.length === 0 || name.length > 255) return helpers.error('quota.policies');
      if (v === null) continue;
      const text = quotaText(v);
      if (text === null) return helpers.error('quota.policyValue', { policy: name });
      out[name] = text;
    }
    return Object.keys(out).length === 0 ? null : out;
  })
  .messages({
    'quota.policies':
      'The {{#label}} field must be null or an object from storage policy name to quota, such as "gold": 1099511627776 in braces.',
    'quota.policyValue': `The {{#label}} field's quota for policy '{{#policy}}' ${QUOTA_RULE}.`,
  });

/** The quota fields of a body, as joi keys (users: `quota_bytes`…; clusters: `default_quota_bytes`…). */
export const quotaKeys = (prefix = ''): Record<string, Joi.Schema> => ({
  [`${prefix}quota_bytes`]: quotaValueSchema,
  [`${prefix}quota_count`]: quotaValueSchema,
  [`${prefix}quota_bytes_policy`]: policyQuotasSchema,
  [`${prefix}quota_count_policy`]: policyQuotasSchema,
});

/** The quotas a validated body sets (only the fields it has), under `prefix`. */
export function quotasOfInput(body: object, prefix = ''): Partial<Quotas> {
  const input = body as Record<string, unknown>;
  const out: Partial<Quotas> = {};
  for (const [field, key] of Object.entries(QUOTA_FIELDS)) {
    const v = input[`${prefix}${field}`];
    if (v !== undefined) (out as Record<string, unknown>)[key] = v;
  }
  return out;
}

export const sameQuotas = (a: Quotas, b: Quotas): boolean =>
  a.bytes === b.bytes &&
  a.count === b.count &&
  samePolicyQuotas(a.bytesPolicy, b.bytesPolicy) &&
  samePolicyQuotas(a.countPolicy, b.countPolicy);

function samePolicyQuotas(a: Record<string, string> | null, b: Record<string, string> | null): boolean {
  const ea = Object.entries(a ?? {}).map(([k, v]) => [k.toLowerCase(), v] as const);
  const eb = new Map(Object.entries(b ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return ea.length === eb.size && ea.every(([k, v]) => eb.get(k) === v);
}

/** How a Swift release takes quotas (see the top of this file). */
export type QuotaDialect = 'meta' | 'policy-bytes' | 'sysmeta';

/** What the reconciler read from a cluster's Swift `/info`. */
export interface SwiftQuotaInfo {
  /** `swift.version`, e.g. `2.30.1`; null when /info does not say. */
  version: string | null;
  /** Whether /info has an `account_quotas` section (the middleware is in the proxy's pipeline). */
  accountQuotas: boolean;
  /** The policy names /info lists. */
  policies: string[];
}

const versionOf = (version: string | null): [number, number] | null => {
  const m = /^(\d+)\.(\d+)/.exec(version ?? '');
  return m ? [Number(m[1]), Number(m[2])] : null;
};
const atLeast = (v: [number, number] | null, major: number, minor: number) =>
  v !== null && (v[0] > major || (v[0] === major && v[1] >= minor));

/** The newest way of setting quotas this Swift understands; null when it has no account_quotas. */
export function quotaDialect(info: SwiftQuotaInfo): QuotaDialect | null {
  if (!info.accountQuotas) return null;
  const v = versionOf(info.version);
  if (atLeast(v, 2, 34)) return 'sysmeta';
  if (atLeast(v, 2, 32)) return 'policy-bytes';
  return 'meta';
}

/** The Swift release each quota needs (the byte quota: any with account_quotas). */
const NEEDS: Record<QuotaField, { release: string; what: string; dialects: QuotaDialect[] }> = {
  quota_bytes: { release: '1.8', what: 'byte quotas', dialects: ['meta', 'policy-bytes', 'sysmeta'] },
  quota_bytes_policy: {
    release: '2.32',
    what: 'byte quotas per storage policy',
    dialects: ['policy-bytes', 'sysmeta'],
  },
  quota_count: { release: '2.34', what: 'object-count quotas', dialects: ['sysmeta'] },
  quota_count_policy: { release: '2.34', what: 'object-count quotas per storage policy', dialects: ['sysmeta'] },
};

/**
 * Why this Swift cannot enforce `quotas` (the ones set, not null), in sentences naming the fields
 * (with `prefix`, as the body named them) and the release needed; null when it can.
 */
export function unenforceableQuotas(quotas: Partial<Quotas>, info: SwiftQuotaInfo, prefix = ''): string | null {
  const dialect = quotaDialect(info);
  const set = (Object.entries(QUOTA_FIELDS) as Array<[QuotaField, keyof Quotas]>).filter(
    ([, key]) => quotas[key] !== undefined && quotas[key] !== null,
  );
  if (set.length === 0) return null;
  if (dialect === null) {
    return (
      "The cluster's Swift does not run the account_quotas middleware (its /info has no account_quotas section), so it cannot enforce quotas. " +
      'Add account_quotas to the proxy pipeline after the auth middleware; Cairn reads /info again within one reconcile period.'
    );
  }
  const refused = set.filter(([field]) => !NEEDS[field].dialects.includes(dialect));
  if (refused.length === 0) return null;
  const version = info.version ?? 'of unknown version';
  return refused
    .map(
      ([field]) =>
        `The cluster's Swift ${version} cannot enforce '${prefix}${field}': ${NEEDS[field].what} need Swift ${NEEDS[field].release} or later.`,
    )
    .join(' ');
}

/** The quota fields a Swift of this dialect enforces (for the cluster's `quota_fields`). */
export const enforceableQuotaFields = (dialect: QuotaDialect | null): QuotaField[] =>
  dialect === null ? [] : (Object.keys(NEEDS) as QuotaField[]).filter((f) => NEEDS[f].dialects.includes(dialect));

/**
 * The headers of the reseller POST that makes an account's quotas `quotas`, in `dialect`. Every
 * quota this Swift knows is sent: an empty value removes one, so a cleared quota is cleared and a
 * quota set behind Cairn's back is put back. `policies`: every policy name of the cluster.
 */
export function quotaHeaders(
  quotas: Quotas,
  dialect: QuotaDialect,
  policies: readonly string[],
): Record<string, string> {
  const h: Record<string, string> = {};
  const policyValue = (map: Record<string, string> | null, name: string) =>
    Object.entries(map ?? {}).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1] ?? '';
  if (dialect === 'sysmeta') {
    h['X-Account-Quota-Bytes'] = quotas.bytes ?? '';
    // The old header would still be shown (and honoured were the new one removed): always clear it.
    h['X-Account-Meta-Quota-Bytes'] = '';
    h['X-Account-Quota-Count'] = quotas.count ?? '';
  } else {
    h['X-Account-Meta-Quota-Bytes'] = quotas.bytes ?? '';
  }
  if (dialect !== 'meta') {
    for (const name of policies) h[`X-Account-Quota-Bytes-Policy-${name}`] = policyValue(quotas.bytesPolicy, name);
  }
  if (dialect === 'sysmeta') {
    for (const name of policies) h[`X-Account-Quota-Count-Policy-${name}`] = policyValue(quotas.countPolicy, name);
  }
  return h;
}

/** The quotas an account HEAD shows, as far as `dialect` can show them (for the drift check). */
export function quotasFromHeaders(
  get: (name: string) => string | null,
  dialect: QuotaDialect,
  policies: readonly string[],
): Quotas {
  const value = (name: string) => quotaText(get(name) ?? '');
  const perPolicy = (prefix: string) => {
    const out: Record<string, string> = {};
    for (const name of policies) {
      const v = value(`${prefix}${name}`);
      if (v !== null) out[name] = v;
    }
    return Object.keys(out).length ? out : null;
  };
  return {
    bytes:
      dialect === 'sysmeta'
        ? (value('X-Account-Quota-Bytes') ?? value('X-Account-Meta-Quota-Bytes'))
        : value('X-Account-Meta-Quota-Bytes'),
    count: dialect === 'sysmeta' ? value('X-Account-Quota-Count') : null,
    bytesPolicy: dialect === 'meta' ? null : perPolicy('X-Account-Quota-Bytes-Policy-'),
    countPolicy: dialect === 'sysmeta' ? perPolicy('X-Account-Quota-Count-Policy-') : null,
  };
}

/** `quotas` as this dialect can enforce them: what a HEAD is compared with. */
export function enforceablePart(quotas: Quotas, dialect: QuotaDialect): Quotas {
  return {
    bytes: quotas.bytes,
    count: dialect === 'sysmeta' ? quotas.count : null,
    bytesPolicy: dialect === 'meta' ? null : quotas.bytesPolicy,
    countPolicy: dialect === 'sysmeta' ? quotas.countPolicy : null,
  };
}

/**
 * A quota as the API shows it: a JSON number, or a decimal string above 2^53 - 1, where a number
 * would lose digits (as list metas show a deep offset).
 */
export const quotaJsonValue = (v: string): number | string =>
  v.length < 16 || BigInt(v) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;

const policyJson = (m: Record<string, string> | null) =>
  m && Object.fromEntries(Object.entries(m).map(([k, v]) => [k, quotaJsonValue(v)]));

/** The API's JSON of quotas (with `prefix`: a cluster's defaults). */
export const quotasJson = (q: Quotas, prefix = '') => ({
  [`${prefix}quota_bytes`]: q.bytes === null ? null : quotaJsonValue(q.bytes),
  [`${prefix}quota_bytes_policy`]: policyJson(q.bytesPolicy),
  [`${prefix}quota_count`]: q.count === null ? null : quotaJsonValue(q.count),
  [`${prefix}quota_count_policy`]: policyJson(q.countPolicy),
});
