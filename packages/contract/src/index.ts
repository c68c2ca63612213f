/**
 * What the management API and the auth gateway share through Postgres. The management API owns
 * the schema (its migrations create these tables and the triggers that announce changes); the
 * gateway only reads the rows and listens to the announcements. Both import the names from here,
 * so that a rename is one change that both sides see, and the type checker finds every reader.
 */

/** The tables the gateway reads (read-only: give it a role with SELECT on these only). */
export const TABLES = {
  clusters: 'clusters',
  storageUsers: 'storage_users',
  /** Read, and written by the gateway's OS-EC2 endpoints (INSERT, DELETE). */
  s3Credentials: 's3_credentials',
  /** Written (INSERT only) by the gateway for the OS-EC2 writes it makes. */
  audit: 'audit_log',
  /** Read by a gateway on a standby: what changed, in commit order (see ChangeLogRow). */
  changeLog: 'change_log',
  /** Read by a gateway on a standby: how far behind the primary its copy is (see HeartbeatRow). */
  heartbeat: 'replication_heartbeat',
  /** Read, and written by the gateway's application credential endpoints (INSERT, DELETE). */
  applicationCredentials: 'application_credentials',
} as const;

/**
 * Every `action` of the audit trail, declared once: the management API records these, and the
 * console filters by them (its default view leaves out the collectors' `record_utilization`, which
 * would otherwise fill the first pages).
 */
export const AUDIT_ACTIONS = [
  'create',
  'update',
  'delete',
  'add_key',
  'delete_key',
  'replace_devices',
  'record_utilization',
  'sign_in',
  'sign_in_failed',
  'sign_out',
  'step_up',
  'backup',
  'repair_quota_drift',
  'push_ring',
  'rollback_ring',
] as const;

/**
 * The `operator_name` of an audit record the gateway writes for an OS-EC2 change, before the
 * storage user's name (`operator_id` is null). The management API's retention tells these bulk
 * entries from operators' and host commands' by it (its index `audit_log_storage_user_idx`
 * holds the same predicate), so both sides must agree on it.
 */
export const STORAGE_USER_ACTOR_PREFIX = 'storage user ';

/**
 * The one write the gateway makes to `storage_users` (migration 20261127130000_password_scheme):
 * `SELECT cairn_replace_foreign_password_hash(id, old_hash, new_hash)` swaps an imported hash for
 * Cairn's scrypt hash of the same password, only while the stored hash is still `old_hash`. A
 * SECURITY DEFINER function with EXECUTE granted to the gateway's role, so the role needs no
 * UPDATE on the table.
 */
export const REPLACE_FOREIGN_HASH_FUNCTION = 'cairn_replace_foreign_password_hash';

/** A `clusters` row, as far as the gateway reads it. */
export interface ClusterRow {
  id: number;
  name: string;
  /** Immutable; with the never-reused id it tells a deleted and re-created cluster apart. */
  uuid: string;
  auth_url: string;
  storage_url: string;
  region: string;
}

export const CLUSTER_COLUMNS = [
  'id',
  'name',
  'uuid',
  'auth_url',
  'storage_url',
  'region',
] as const satisfies ReadonlyArray<keyof ClusterRow>;

/** A `storage_users` row, as far as the gateway reads it (pg gives bigints as strings). */
export interface StorageUserRow {
  /** Never reused, unlike a name: a re-created user is a different user to every old token. */
  id: string | number;
  cluster_id: number;
  username: string;
  /**
   * A memory-hard hash in its PHC-style text form (packages/domain/src/password-hash.ts), or an
   * imported one until its user's first login (foreign-password-hash.ts).
   */
  password_hash: string;
  enabled: boolean;
  is_superuser: boolean;
  /** Bumped by every change that must end the user's tokens (password, disabling). */
  generation: string | number;
  /**
   * For a user imported from tempauth (`user_<account>_<user>`, the Cairn user `<account>`): the
   * tempauth user name, with which V1 logins as `<account>:<user>` keep working; else null.
   */
  tempauth_user: string | null;
}

/** The columns a login or a validation needs; `cluster_id` is the filter, not read back. */
export const STORAGE_USER_COLUMNS = [
  'id',
  'username',
  'password_hash',
  'enabled',
  'is_superuser',
  'generation',
  'tempauth_user',
] as const satisfies ReadonlyArray<keyof StorageUserRow>;

/** An `s3_credentials` row (migration 20261124000000_s3_credentials). */
export interface S3CredentialRow {
  /** Never reused: caches keyed by it cannot mistake a new credential for a deleted one. */
  id: string | number;
  storage_user_id: string | number;
  /** `^[A-Z0-9]{20}$`, unique. */
  access_key: string;
  /** `v1:<key id>:<iv>:<ciphertext>:<tag>`, sealed with the access key as associated data. */
  secret_sealed: string;
  created_at: Date | string;
  /** When it stops signing; null: never (migration 20261127170000_s3_credential_lifetimes). */
  expires_at: Date | string | null;
  /**
   * The application credential whose token made it (OS-EC2), or null: its signatures carry that
   * credential's roles and end with it. Deleting the application credential deletes this row.
   */
  application_credential_id: string | null;
}

export const S3_CREDENTIAL_COLUMNS = [
  'id',
  'storage_user_id',
  'access_key',
  'secret_sealed',
  'created_at',
  'expires_at',
  'application_credential_id',
] as const satisfies ReadonlyArray<keyof S3CredentialRow>;

/**
 * How many S3 credentials one storage user may hold, whoever creates them (the management API or
 * the gateway's OS-EC2 endpoints): two, as AWS allows per IAM user — enough to rotate a key without
 * downtime, few enough that a leaked token cannot mint keys without bound.
 */
export const MAX_S3_CREDENTIALS_PER_USER = 2;

/**
 * NOTIFY channel of every committed insert, update or delete of `storage_users`, whoever wrote it
 * (migration 20261122041500_storage_user_change_notices).
 */
export const USER_CHANGES_CHANNEL = 'cairn_storage_users';

/**
 * Its payload: one per changed row, or, for a statement that changed more than 64 rows, one per
 * cluster with `all` (a notification holds at most 8000 bytes).
 */
export type UserChangeNotice = { cluster_id: number; user: string } | { cluster_id: number; all: true };

/**
 * NOTIFY channel of every committed insert, update or delete of a `clusters` row
 * (migration 20261123200000_cluster_change_notices).
 */
export const CLUSTER_CHANGES_CHANNEL = 'cairn_clusters';

/** Its payload: the row's id. */
export interface ClusterChangeNotice {
  id: number;
}

/**
 * NOTIFY channel of every committed insert, update or delete of an `s3_credentials` row, cascaded
 * deletes included (migration 20261124000000_s3_credentials).
 */
export const S3_CREDENTIAL_CHANGES_CHANNEL = 'cairn_s3_credentials';

/** Its payload: the access key; after a TRUNCATE, `{"all": true}` (parsed as null: forget every credential). */
export interface S3CredentialChangeNotice {
  access_key: string;
}

/**
 * A `change_log` row (migration 20261127150000_change_log): written by triggers on the primary in
 * the same transaction as every insert, update or delete of a storage user, a cluster or an S3
 * credential, so it reaches a hot standby with the change itself, where NOTIFY never arrives. The
 * same facts as the NOTIFY channels above, one row per notice.
 */
export interface ChangeLogRow {
  /** From a sequence: rising in the order the triggers ran (commit order may differ; readers mind gaps). */
  seq: string | number;
  kind: ChangeKind;
  /** `user`: the user's cluster (null: every cluster's users); `cluster`: the row's id; `s3_credential`: null. */
  cluster_id: number | null;
  /** `user`: the username; `s3_credential`: the access key; null: every row of that kind (and cluster). */
  key: string | null;
  logged_at: Date | string;
}

export type ChangeKind = 'user' | 'cluster' | 's3_credential';

export const CHANGE_LOG_COLUMNS = ['seq', 'kind', 'cluster_id', 'key'] as const satisfies ReadonlyArray<
  keyof ChangeLogRow
>;

/**
 * A `replication_heartbeat` row: one row (id 1) whose `beat_at` the management API sets to now()
 * every second on the primary. On a standby, now() minus `beat_at` bounds how old its copy is:
 * every change committed before `beat_at` has been replayed there.
 */
export interface HeartbeatRow {
  id: 1;
  beat_at: Date | string;
}

const parsed = (payload: string | undefined): Record<string, unknown> | null => {
  try {
    const value: unknown = JSON.parse(payload ?? '');
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
};

/** A user change notice, or null when the payload is not one (a listener then assumes anything changed). */
export function parseUserChangeNotice(payload: string | undefined): UserChangeNotice | null {
  const notice = parsed(payload);
  if (!notice || typeof notice.cluster_id !== 'number') return null;
  if (typeof notice.user === 'string') return { cluster_id: notice.cluster_id, user: notice.user };
  return { cluster_id: notice.cluster_id, all: true };
}

/** A cluster change notice, or null when the payload is not one (a listener then assumes its cluster changed). */
export function parseClusterChangeNotice(payload: string | undefined): ClusterChangeNotice | null {
  const notice = parsed(payload);
  return notice && typeof notice.id === 'number' ? { id: notice.id } : null;
}

/** An S3 credential change notice, or null when the payload is not one (a listener then forgets every credential). */
export function parseS3CredentialNotice(payload: string | undefined): S3CredentialChangeNotice | null {
  const notice = parsed(payload);
  return notice && typeof notice.access_key === 'string' ? { access_key: notice.access_key } : null;
}

/**
 * NOTIFY channel of every committed insert, update or delete of an `application_credentials` row,
 * cascaded deletes included (migration 20261127180000_application_credential_notices).
 */
export const APPLICATION_CREDENTIAL_CHANGES_CHANNEL = 'cairn_application_credentials';

/** Its payload: the credential's id; after a TRUNCATE, `{"all": true}` (parsed as null: forget every credential). */
export interface ApplicationCredentialChangeNotice {
  id: string;
}

/**
 * An application credential change notice, or null when the payload is not one (a listener then forgets every
 * credential).
 */
export function parseApplicationCredentialNotice(
  payload: string | undefined,
): ApplicationCredentialChangeNotice | null {
  const notice = parsed(payload);
  return notice && typeof notice.id === 'string' ? { id: notice.id } : null;
}

/**
 * An `application_credentials` row (migration 20261127160000_application_credentials): a Keystone
 * V3 application credential a storage user made for itself.
 */
export interface ApplicationCredentialRow {
  /** 32 hex digits, as Keystone's ids; never reused. */
  id: string;
  storage_user_id: string | number;
  /** Unique per user. */
  name: string;
  description: string | null;
  /** `sha256:<hex>` of the secret: the secret is 64 random bytes, so a fast hash suffices (SECURITY.md). */
  secret_hash: string;
  /** Null: never expires. */
  expires_at: Date | string | null;
  /** Role names, a subset of what the user's own token carried when it was made. */
  roles: string[];
  unrestricted: boolean;
  /** Keystone access rules; null: no rules, every path. */
  access_rules: ApplicationCredentialAccessRule[] | null;
  created_at: Date | string;
}

/** One Keystone access rule of an application credential, as stored and as shown. */
export interface ApplicationCredentialAccessRule {
  id: string;
  /** `object-store`: Cairn serves only Swift. */
  service: string;
  method: string;
  /** A path glob as keystonemiddleware matches it (`*` one segment, `**` any number). */
  path: string;
}

/**
 * An application credential as the management API shows it (`/api/v1/application_credentials/`):
 * the API's representation is declared with this type and the console reads the answer with it,
 * so a field added, renamed or retyped is one change both sides see. Never the secret or its hash.
 */
export interface ApplicationCredentialResource {
  /** 32 hex digits, Keystone's id. */
  id: string;
  /** The storage user who made it, as a resource URI. */
  user: string;
  /** The user's cluster, as a resource URI. */
  cluster: string;
  name: string;
  description: string | null;
  /** ISO 8601 UTC; null: never expires. */
  expires_at: string | null;
  /** Role names its tokens carry (swiftoperator, ResellerAdmin). */
  roles: string[];
  /** Whether its tokens may make further application or EC2 credentials. */
  unrestricted: boolean;
  /** Empty: the whole account. */
  access_rules: ApplicationCredentialAccessRule[];
  /** ISO 8601 UTC. */
  created_at: string;
  resource_uri: string;
}

export const APPLICATION_CREDENTIAL_COLUMNS = [
  'id',
  'storage_user_id',
  'name',
  'description',
  'secret_hash',
  'expires_at',
  'roles',
  'unrestricted',
  'access_rules',
  'created_at',
] as const satisfies ReadonlyArray<keyof ApplicationCredentialRow>;

export * from './health';
