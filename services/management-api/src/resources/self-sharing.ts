import type { ParsedAcl } from '@cairn/domain';
import { asResource } from './marks';
import { API_ROOT } from './uris';
import type { SharedContainer, TempUrl, TempUrlKeys } from '../services/self-sharing';

/** The JSON of the Sharing routes (routes/self.ts); the shapes are in openapi/self-service.ts. */

export const SELF_CONTAINERS_URI = `${API_ROOT}/self/containers/`;
export const SELF_TEMP_URL_KEYS_URI = `${API_ROOT}/self/temp_url_keys/`;
export const SELF_TEMP_URLS_URI = `${API_ROOT}/self/temp_urls/`;

const aclJson = (acl: ParsedAcl) => ({ other: acl.other, users: acl.users });

export const sharedContainerJson = (c: SharedContainer): Record<string, unknown> =>
  asResource({
    bytes_used: c.bytesUsed,
    name: c.name,
    object_count: c.objectCount,
    public_listings: c.read.listings,
    public_read: c.read.publicRead,
    read: aclJson(c.read),
    resource_uri: `${SELF_CONTAINERS_URI}${encodeURIComponent(c.name)}/`,
    write: aclJson(c.write),
  });

export const sharedContainersJson = (
  containers: SharedContainer[],
  truncated: boolean,
  nextMarker: string | null,
): Record<string, unknown> =>
  asResource({
    next_marker: nextMarker,
    objects: containers.map(sharedContainerJson),
    resource_uri: SELF_CONTAINERS_URI,
    truncated,
  });

export const tempUrlKeysJson = (k: TempUrlKeys, maxLifetime: number): Record<string, unknown> =>
  asResource({
    key_set: k.key,
    max_lifetime_seconds: maxLifetime,
    previous_key_set: k.previousKey,
    resource_uri: SELF_TEMP_URL_KEYS_URI,
    tempurl: k.tempurl !== null,
    tempurl_methods: k.tempurl?.methods ?? [],
  });

export const tempUrlJson = (t: TempUrl): Record<string, unknown> =>
  asResource({
    expires_at: t.expiresAt.toISOString(),
    method: t.method,
    resource_uri: SELF_TEMP_URLS_URI,
    url: t.url,
  });
