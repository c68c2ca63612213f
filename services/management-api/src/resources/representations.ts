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
import { apiKeyUri, applicationCredentialUri, clusterUri, operatorUri, s3CredentialUri, userUri } from './uris';
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

const quotaValueText = (v: string | null): string => (v === null ? 'null' : JSON.stringify(quotaJsonValue(v)));

/** toJson's text of a policy map: keys sorted, Python's separators. */
const policyText = (m: Record<string, string> | null): string =>
  m === null
    ? 'null'
    : `{${Object.keys(m)
        .sort()
        .map((k) => `${JSON.stringify(k)}: ${JSON.stringify(quotaJsonValue(m[k]!))}`)
        .join(', ')}}`;

/** Exactly `toJson(userJson(u))`, written directly (a list writes thousands of them). Keys in sorted order. */
export const userJsonText = (u: UserShown): JsonText => {
  const state = u.quotaState === undefined ? null : quotaStateJson(u.quotaState);
  const usage = u.usage === undefined ? null : usageJson(u.usage);
  const q = u.quotas;
  return new JsonText(
    (usage ? `{"bytes_used": ${JSON.stringify(usage.bytes_used)}, ` : '{') +
      `"cluster": ${JSON.stringify(clusterUri(u.clusterId))}, "enabled": ${u.enabled ? 'true' : 'false'}, "id": ${JSON.stringify(u.id)}, ` +
      `"is_superuser": ${u.isSuperuser ? 'true' : 'false'}, ` +
      (usage ? `"object_count": ${JSON.stringify(usage.object_count)}, ` : '') +
      `"password_scheme": ${JSON.stringify(u.passwordScheme)}, ` +
      (state ? `"quota_applied_at": ${JSON.stringify(state.quota_applied_at)}, ` : '') +
      `"quota_bytes": ${quotaValueText(q.bytes)}, "quota_bytes_policy": ${policyText(q.bytesPolicy)}, ` +
      `"quota_count": ${quotaValueText(q.count)}, "quota_count_policy": ${policyText(q.countPolicy)}, ` +
      (state
        ? `"quota_error": ${JSON.stringify(state.quota_error)}, "quota_status": ${JSON.stringify(state.quota_status)}, `
        : '') +
      `"resource_uri": ${JSON.stringify(userUri(u.id))}, ` +
      (usage ? `"usage_sampled_at": ${JSON.stringify(usage.usage_sampled_at)}, ` : '') +
      `"user": ${JSON.stringify(u.username)}}`,
  );
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
