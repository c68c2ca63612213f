import {
  enforceableQuotaFields,
  quotaDialect,
  quotaJsonValue,
  quotasJson,
  type Cluster,
  type HealthStatus,
  type Operator,
  type StorageUser,
} from '@cairn/domain';
import type { ApplicationCredentialResource, ClusterHealthStatus } from '@cairn/contract';
import { asResource, JsonText } from './marks';
import {
  API_ROOT,
  apiKeyUri,
  applicationCredentialUri,
  clusterUri,
  operatorUri,
  s3CredentialUri,
  userUri,
} from './uris';
import type { ApplicationCredential } from '../repositories/application-credentials';
import type { CapacitySample } from '../repositories/devices';
import type { ApiKeyInfo } from '../repositories/operators';
import type { S3Credential } from '../repositories/s3-credentials';
import type { QuotaState, StoredSwiftInfo } from '../repositories/quotas';
import type { LatestUsage } from '../repositories/quota-usage';

/** The public JSON of each resource; nothing else ever leaves the API (no hashes, no generation). */

/** What the quota reconciler last read from the cluster's Swift /info; null before it has. */
const quotaSupportJson = (info: StoredSwiftInfo | null) =>
  info && {
    fields: enforceableQuotaFields(quotaDialect(info)),
    read_at: info.readAt.toISOString(),
    swift_version: info.version,
  };

/** What the API shows of a cluster beyond its record: reported and derived state. */
export interface ClusterShown {
  swiftInfo: StoredSwiftInfo | null;
  /** The sum of its users' byte quotas (a decimal string); null when no user has one. */
  quotaBytesTotal: string | null;
  /** The sum of its users' per-policy byte quotas, by policy name (decimal strings); null when no user has one. */
  quotaBytesPolicyTotal: Record<string, string> | null;
  /** The worst severity of its open health findings; `unknown` before its first health round. */
  health: HealthStatus;
}

/**
 * `shown`: given where the API shows a cluster (`quota_support`, `quota_bytes_total`); left out of
 * audit snapshots, which record what an operator set.
 */
export const clusterJson = (c: Cluster, shown?: ClusterShown) =>
  asResource({
    auth_url: c.authUrl,
    ...quotasJson(c.defaultQuotas, 'default_'),
    id: c.id,
    name: c.name,
    ...(shown
      ? {
          health: shown.health satisfies ClusterHealthStatus,
          quota_bytes_total: shown.quotaBytesTotal === null ? null : quotaJsonValue(shown.quotaBytesTotal),
          quota_bytes_policy_total:
            shown.quotaBytesPolicyTotal === null
              ? null
              : Object.fromEntries(
                  Object.entries(shown.quotaBytesPolicyTotal).map(([policy, total]) => [policy, quotaJsonValue(total)]),
                ),
          quota_support: quotaSupportJson(shown.swiftInfo),
        }
      : {}),
    region: c.region,
    resource_uri: clusterUri(c.id),
    storage_url: c.storageUrl,
    uuid: c.uuid,
  });

type UserShown = Pick<
  StorageUser,
  'id' | 'clusterId' | 'username' | 'passwordScheme' | 'isSuperuser' | 'enabled' | 'quotas'
> & {
  quotaState?: QuotaState | null;
  usage?: LatestUsage | null;
};

/** Where the user's quotas stand in Swift: null for a user that never had one. */
const quotaStateJson = (s: QuotaState | null) => ({
  quota_applied_at: s?.appliedAt ? s.appliedAt.toISOString() : null,
  quota_error: s?.error ?? null,
  quota_status: s?.status ?? null,
});

/** The account's latest storage sample: null before the storage collector has sampled it. */
const usageJson = (s: LatestUsage | null) => ({
  bytes_used: s ? quotaJsonValue(s.bytesUsed) : null,
  object_count: s ? quotaJsonValue(s.objectCount) : null,
  usage_sampled_at: s ? s.hour.toISOString() : null,
});

/**
 * `password` only where the seed API shows it: the POST response and a PATCH that set it. The
 * quota state and the usage appear where the API shows a user (`quotaState` and `usage` given, null
 * or not); audit snapshots record what an operator set, without them.
 */
export const userJson = (u: UserShown, password?: string) => {
  const usage = u.usage !== undefined ? usageJson(u.usage) : undefined;
  return asResource({
    ...(usage ? { bytes_used: usage.bytes_used } : {}),
    cluster: clusterUri(u.clusterId),
    enabled: u.enabled,
    id: u.id,
    is_superuser: u.isSuperuser,
    ...(usage ? { object_count: usage.object_count } : {}),
    ...(password !== undefined ? { password } : {}),
    password_scheme: u.passwordScheme,
    ...quotasJson(u.quotas),
    ...(u.quotaState !== undefined ? quotaStateJson(u.quotaState) : {}),
    resource_uri: userUri(u.id),
    ...(usage ? { usage_sampled_at: usage.usage_sampled_at } : {}),
    user: u.username,
  });
};

/**
 * A bigint's decimal text (as Postgres writes it: no sign but '-', no leading zero) as toJson writes
 * quotaJsonValue of it: below 16 digits the number has the same digits.
 */
const bigText = (v: string): string => (v.length < 16 ? v : JSON.stringify(quotaJsonValue(v)));
const quotaValueText = (v: string | null): string => (v === null ? 'null' : bigText(v));

/** toJson's text of a policy map: keys sorted, Python's separators. */
const policyText = (m: Record<string, string> | null): string =>
  m === null
    ? 'null'
    : `{${Object.keys(m)
        .sort()
        .map((k) => `${JSON.stringify(k)}: ${JSON.stringify(quotaJsonValue(m[k]!))}`)
        .join(', ')}}`;

/**
 * A time's JSON text. The users of a page share a few sample hours, so the last one is kept:
 * toISOString was most of the usage fields' cost on a page.
 */
let lastTime = NaN;
let lastTimeText = '';
const timeText = (d: Date): string => {
  const t = d.getTime();
  if (t !== lastTime) {
    lastTimeText = `"${d.toISOString()}"`;
    lastTime = t;
  }
  return lastTimeText;
};

/**
 * Exactly `toJson(userJson(u))`, written directly (a list writes thousands of them). Keys in sorted
 * order. Ids are decimal digits and the schemes and statuses plain words: written without escaping.
 */
export const userJsonText = (u: UserShown): JsonText => {
  const state = u.quotaState;
  const usage = u.usage;
  const q = u.quotas;
  const id = u.id;
  let out = usage === undefined ? '{' : `{"bytes_used": ${usage === null ? 'null' : bigText(usage.bytesUsed)}, `;
  out += `"cluster": "${API_ROOT}/clusters/${u.clusterId}/", "enabled": ${u.enabled ? 'true' : 'false'}, "id": "${id}", `;
  out += `"is_superuser": ${u.isSuperuser ? 'true' : 'false'}, `;
  if (usage !== undefined) out += `"object_count": ${usage === null ? 'null' : bigText(usage.objectCount)}, `;
  out += `"password_scheme": "${u.passwordScheme}", `;
  if (state !== undefined) out += `"quota_applied_at": ${state?.appliedAt ? timeText(state.appliedAt) : 'null'}, `;
  out += `"quota_bytes": ${quotaValueText(q.bytes)}, "quota_bytes_policy": ${policyText(q.bytesPolicy)}, `;
  out += `"quota_count": ${quotaValueText(q.count)}, "quota_count_policy": ${policyText(q.countPolicy)}, `;
  if (state !== undefined) {
    out += `"quota_error": ${state?.error == null ? 'null' : JSON.stringify(state.error)}, `;
    out += `"quota_status": ${state === null ? 'null' : `"${state.status}"`}, `;
  }
  out += `"resource_uri": "${API_ROOT}/users/${id}/", `;
  if (usage !== undefined) out += `"usage_sampled_at": ${usage === null ? 'null' : timeText(usage.hour)}, `;
  return new JsonText(`${out}"user": ${JSON.stringify(u.username)}}`);
};

export const operatorJson = (o: Operator) =>
  asResource({
    clusters: o.clusterIds.map(clusterUri),
    id: o.id,
    name: o.name,
    resource_uri: operatorUri(o.id),
    role: o.role,
  });

/** The key itself appears once, in the response that created it. */
export const apiKeyJson = (k: ApiKeyInfo, key?: string) =>
  asResource({
    created_at: k.createdAt.toISOString(),
    id: k.id,
    ...(key !== undefined ? { key } : {}),
    operator: operatorUri(k.operatorId),
    resource_uri: apiKeyUri(k.operatorId, k.id),
  });

/** The secret appears once, in the response that created the credential; nowhere else, ever. */
export const s3CredentialJson = (c: S3Credential, secret?: string) =>
  asResource({
    access_key: c.accessKey,
    application_credential:
      c.applicationCredentialId === null ? null : applicationCredentialUri(c.applicationCredentialId),
    cluster: clusterUri(c.clusterId),
    created_at: c.createdAt.toISOString(),
    expires_at: c.expiresAt === null ? null : c.expiresAt.toISOString(),
    id: c.id,
    resource_uri: s3CredentialUri(c.id),
    ...(secret !== undefined ? { secret } : {}),
    user: userUri(c.userId),
  });

/** No secret and no hash: the secret was shown once, by the gateway, to the user who made it. */
export const applicationCredentialJson = (c: ApplicationCredential) =>
  asResource({
    access_rules: c.accessRules ?? [],
    cluster: clusterUri(c.clusterId),
    created_at: c.createdAt.toISOString(),
    description: c.description,
    expires_at: c.expiresAt === null ? null : c.expiresAt.toISOString(),
    id: c.id,
    name: c.name,
    resource_uri: applicationCredentialUri(c.id),
    roles: c.roles,
    unrestricted: c.unrestricted,
    user: userUri(c.userId),
  } satisfies ApplicationCredentialResource);

/** capacity/history/: per ring set, its samples in time order, with capacity/list/'s field names. */
export function capacityHistoryJson(h: {
  start: Date;
  end: Date;
  resolution: 'hour' | 'day';
  samples: CapacitySample[];
}) {
  const bySet = new Map<string, object[]>();
  for (const s of h.samples) {
    const list = bySet.get(s.ringSet) ?? [];
    list.push({
      time: s.hour.toISOString(),
      total_free_tb: s.totalFreeTb,
      total_raw_tb: s.totalRawTb,
      total_used_pct: s.totalUsedPct,
      total_used_tb: s.totalUsedTb,
    });
    bySet.set(s.ringSet, list);
  }
  return {
    history: [...bySet].map(([ring_set, samples]) => ({ ring_set, samples })),
    meta: { end: h.end.toISOString(), resolution: h.resolution, start: h.start.toISOString() },
  };
}
