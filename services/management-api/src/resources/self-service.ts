import { quotaJsonValue } from '@cairn/domain';
import { asResource } from './marks';
import { API_ROOT } from './uris';
import type { MyStorage } from '../services/my-storage';
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
