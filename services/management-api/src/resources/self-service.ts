import { quotaJsonValue } from '@cairn/domain';
import { asResource } from './marks';
import { API_ROOT } from './uris';
import type { MyStorage } from '../services/my-storage';
import type { SelfApplicationCredential, SelfS3Credential } from '../services/self-keys';
import type { LiveStorageUserSession } from '../services/storage-user-sessions';

/** The JSON of the self-service routes (routes/self.ts); the shapes are in openapi/self-service.ts. */

export const SELF_SESSION_URI = `${API_ROOT}/self/session/`;
export const SELF_STORAGE_URI = `${API_ROOT}/self/storage/`;

export const storageSessionJson = (
  session: LiveStorageUserSession,
  csrfToken: string,
  idleTimeout: number,
): Record<string, unknown> =>
  asResource({
    account: `AUTH_${session.username}`,
    cluster: session.clusterName,
    csrf_token: csrfToken,
    expires_at: session.expiresAt.toISOString(),
    idle_timeout: idleTimeout,
    resource_uri: SELF_SESSION_URI,
    user: session.username,
  });

const amount = (v: string | null) => (v === null ? null : quotaJsonValue(v));

export const myStorageJson = (s: MyStorage): Record<string, unknown> =>
  asResource({
    account: s.account,
    bytes_used: s.usage ? amount(s.usage.bytesUsed) : null,
    cluster: s.clusterName,
    days: s.days.map((d) => ({
      bytes_in: quotaJsonValue(d.bytesIn.toString()),
      bytes_out: quotaJsonValue(d.bytesOut.toString()),
      bytes_used: d.bytesUsed,
      day: d.day.toISOString().slice(0, 10),
      object_count: d.objectCount,
      requests: quotaJsonValue(d.requests.toString()),
    })),
    object_count: s.usage ? amount(s.usage.objectCount) : null,
    policies: s.policies.map((p) => ({
      bytes_used: amount(p.bytesUsed),
      index: p.index,
      name: p.name,
      object_count: amount(p.objectCount),
      quota_bytes: amount(p.quotaBytes),
      quota_count: amount(p.quotaCount),
    })),
    quota_bytes: amount(s.quotas.bytes),
    quota_count: amount(s.quotas.count),
    resource_uri: SELF_STORAGE_URI,
    usage_sampled_at: s.usage ? s.usage.hour.toISOString() : null,
    user: s.username,
  });

export const SELF_S3_CREDENTIALS_URI = `${API_ROOT}/self/s3_credentials/`;
export const SELF_APPLICATION_CREDENTIALS_URI = `${API_ROOT}/self/application_credentials/`;

export const selfS3CredentialJson = (c: SelfS3Credential): Record<string, unknown> =>
  asResource({
    access_key: c.accessKey,
    expires_at: c.expiresAt,
    resource_uri: `${SELF_S3_CREDENTIALS_URI}${encodeURIComponent(c.accessKey)}/`,
    ...(c.secret !== undefined ? { secret: c.secret } : {}),
  });

export const selfApplicationCredentialJson = (c: SelfApplicationCredential): Record<string, unknown> =>
  asResource({
    access_rules: c.accessRules.map((r) => ({ id: r.id, method: r.method, path: r.path, service: r.service })),
    description: c.description,
    expires_at: c.expiresAt,
    id: c.id,
    name: c.name,
    resource_uri: `${SELF_APPLICATION_CREDENTIALS_URI}${encodeURIComponent(c.id)}/`,
    roles: c.roles,
    unrestricted: c.unrestricted,
    ...(c.secret !== undefined ? { secret: c.secret } : {}),
  });

/** A list of the user's own keys: all of them (the gateway caps them at 100 each), no paging. */
export const selfListJson = (uri: string, objects: Array<Record<string, unknown>>): Record<string, unknown> =>
  asResource({ objects, resource_uri: uri });
