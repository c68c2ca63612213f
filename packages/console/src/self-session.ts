import { CSRF_HEADER, jsonOf, request } from './api';

/**
 * A storage user's console session: the password (or application credential secret) goes once to
 * POST self/session/, which has the cluster's gateway check it, and is then dropped; the browser
 * holds only an HttpOnly cookie no script can read, and this tab's memory the session's CSRF
 * token. Nothing goes to sessionStorage, localStorage or a URL.
 */
export interface StorageSession {
  user: string;
  cluster: string;
  account: string;
  csrf_token: string;
  expires_at: string;
  idle_timeout: number;
}

/** The storage user's session the cookie names, or null (none, or it has ended). */
export async function currentStorageSession(): Promise<StorageSession | null> {
  const s = await jsonOf<{ user: string | null } & Partial<StorageSession>>(await request('GET', 'self/session/'));
  return s.user && s.csrf_token ? (s as StorageSession) : null;
}

export async function openStorageSession(cluster: string, user: string, password: string): Promise<StorageSession> {
  return jsonOf<StorageSession>(await request('POST', 'self/session/', { body: { cluster, user, password } }));
}

/** Signs in with an application credential, by its id and secret (the secret is not kept either). */
export async function openStorageSessionWithCredential(
  cluster: string,
  credentialId: string,
  secret: string,
): Promise<StorageSession> {
  return jsonOf<StorageSession>(
    await request('POST', 'self/session/', {
      body: { cluster, application_credential_id: credentialId, application_credential_secret: secret },
    }),
  );
}

/** Ends the session on the server; an already ended one (401) is fine. */
export async function closeStorageSession(csrfToken: string): Promise<void> {
  const res = await request('DELETE', 'self/session/', { headers: { [CSRF_HEADER]: csrfToken } });
  if (res.status !== 401) await jsonOf<void>(res);
}

/** The signed-in storage user's own account (GET self/storage/). */
export interface MyStorage {
  user: string;
  cluster: string;
  account: string;
  bytes_used: number | string | null;
  object_count: number | string | null;
  quota_bytes: number | string | null;
  quota_count: number | string | null;
  usage_sampled_at: string | null;
  policies: Array<{
    index: number;
    name: string;
    bytes_used: number | string | null;
    object_count: number | string | null;
    quota_bytes: number | string | null;
    quota_count: number | string | null;
  }>;
  days: Array<{
    day: string;
    bytes_used: number | null;
    object_count: number | null;
    bytes_in: number | string;
    bytes_out: number | string;
    requests: number | string;
  }>;
}

/** One of the storage user's own S3 credentials (self/s3_credentials/); `secret` only when just made. */
export interface MyS3Credential {
  access_key: string;
  expires_at: string | null;
  resource_uri: string;
  secret?: string;
}

/** One of the storage user's own application credentials (self/application_credentials/). */
export interface MyApplicationCredential {
  id: string;
  name: string;
  description: string | null;
  expires_at: string | null;
  unrestricted: boolean;
  roles: string[];
  access_rules: Array<{ id: string; service: string; method: string; path: string }>;
  resource_uri: string;
  secret?: string;
}

/** A container's read or write ACL, as the choices the Sharing page offers (self/containers/). */
export interface MyContainerAcl {
  users: string[];
  /** Entries none of the choices means (set by other tools); kept when the ACLs are set. */
  other: string[];
}

/** One of the storage user's containers with its ACLs (self/containers/). */
export interface MyContainer {
  name: string;
  object_count: number;
  bytes_used: number;
  public_read: boolean;
  public_listings: boolean;
  read: MyContainerAcl;
  write: MyContainerAcl;
  resource_uri: string;
}

/** Whether the account's temp-URL keys are set (never the keys) and what Swift's /info offers (self/temp_url_keys/). */
export interface MyTempUrlKeys {
  key_set: boolean;
  previous_key_set: boolean;
  tempurl: boolean;
  tempurl_methods: string[];
  max_lifetime_seconds: number;
}

/** A temporary URL the API signed (self/temp_urls/). */
export interface MyTempUrl {
  url: string;
  method: string;
  expires_at: string;
}
