import type { Cluster, Operator, StorageUser } from '@cairn/domain';
import { asResource, JsonText } from './marks';
import { apiKeyUri, applicationCredentialUri, clusterUri, operatorUri, s3CredentialUri, userUri } from './uris';
import type { ApplicationCredential } from '../repositories/application-credentials';
import type { CapacitySample } from '../repositories/devices';
import type { ApiKeyInfo } from '../repositories/operators';
import type { S3Credential } from '../repositories/s3-credentials';

/** The public JSON of each resource; nothing else ever leaves the API (no hashes, no generation). */

export const clusterJson = (c: Cluster) =>
  asResource({
    auth_url: c.authUrl,
    id: c.id,
    name: c.name,
    region: c.region,
    resource_uri: clusterUri(c.id),
    storage_url: c.storageUrl,
    uuid: c.uuid,
  });

/** `password` only where the seed API shows it: the POST response and a PATCH that set it. */
type UserShown = Pick<StorageUser, 'id' | 'clusterId' | 'username' | 'passwordScheme' | 'isSuperuser' | 'enabled'>;

export const userJson = (u: UserShown, password?: string) =>
  asResource({
    cluster: clusterUri(u.clusterId),
    enabled: u.enabled,
    id: u.id,
    is_superuser: u.isSuperuser,
    ...(password !== undefined ? { password } : {}),
    password_scheme: u.passwordScheme,
    resource_uri: userUri(u.id),
    user: u.username,
  });

/** Exactly `toJson(userJson(u))`, written directly (a list writes thousands of them). */
export const userJsonText = (u: UserShown): JsonText =>
  new JsonText(
    `{"cluster": ${JSON.stringify(clusterUri(u.clusterId))}, "enabled": ${u.enabled ? 'true' : 'false'}, "id": ${JSON.stringify(u.id)}, ` +
      `"is_superuser": ${u.isSuperuser ? 'true' : 'false'}, "password_scheme": ${JSON.stringify(u.passwordScheme)}, ` +
      `"resource_uri": ${JSON.stringify(userUri(u.id))}, "user": ${JSON.stringify(u.username)}}`,
  );

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
    cluster: clusterUri(c.clusterId),
    created_at: c.createdAt.toISOString(),
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
  });

/** capacity/history/: per ring set, its samples in time order, with capacity/list/'s field names. */
export function capacityHistoryJson(h: { start: Date; end: Date; resolution: 'hour' | 'day'; samples: CapacitySample[] }) {
  const bySet = new Map<string, object[]>();
  for (const s of h.samples) {
    const list = bySet.get(s.ringSet) ?? [];
    list.push({ time: s.hour.toISOString(), total_free_tb: s.totalFreeTb, total_raw_tb: s.totalRawTb, total_used_pct: s.totalUsedPct, total_used_tb: s.totalUsedTb });
    bySet.set(s.ringSet, list);
  }
  return {
    history: [...bySet].map(([ring_set, samples]) => ({ ring_set, samples })),
    meta: { end: h.end.toISOString(), resolution: h.resolution, start: h.start.toISOString() },
  };
}
