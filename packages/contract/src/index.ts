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
} as const;

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

export const CLUSTER_COLUMNS = ['id', 'name', 'uuid', 'auth_url', 'storage_url', 'region'] as const satisfies ReadonlyArray<keyof ClusterRow>;

/** A `storage_users` row, as far as the gateway reads it (pg gives bigints as strings). */
export interface StorageUserRow {
  /** Never reused, unlike a name: a re-created user is a different user to every old token. */
  id: string | number;
  cluster_id: number;
  username: string;
  /** A memory-hard hash in its PHC-style text form (packages/domain/src/password-hash.ts). */
  password_hash: string;
  enabled: boolean;
  is_superuser: boolean;
  /** Bumped by every change that must end the user's tokens (password, disabling). */
  generation: string | number;
}

/** The columns a login or a validation needs; `cluster_id` is the filter, not read back. */
export const STORAGE_USER_COLUMNS = ['id', 'username', 'password_hash', 'enabled', 'is_superuser', 'generation'] as const satisfies ReadonlyArray<
  keyof StorageUserRow
>;

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
