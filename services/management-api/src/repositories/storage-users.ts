import type { Knex } from 'knex';
import { errors, type StorageUser, escapeHtml } from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { runPrepared, type NamedStatement } from '../db/prepared';
import type { Filter, ListQuery } from '../http/filters';
import { bucketDirection, fetchPageByIdBuckets } from './id-buckets';
import { applyFilters, applyOrdering, fetchPage, isDeepOffset, type Page } from './list-query';
import { fetchCommonUserPage } from './user-page-statements';

interface UserRow {
  id: string | number;
  cluster_id: number;
  username: string;
  password_hash: string;
  is_superuser: boolean;
  enabled: boolean;
  generation: string | number;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = ['u.id', 'u.cluster_id', 'u.username', 'u.password_hash', 'u.is_superuser', 'u.enabled', 'u.generation', 'u.created_at', 'u.updated_at'];
const RETURNING = COLUMNS.map((c) => c.slice(2));

const toUser = (r: UserRow): StorageUser => ({
  id: String(r.id),
  clusterId: Number(r.cluster_id),
  username: r.username,
  passwordHash: r.password_hash,
  isSuperuser: r.is_superuser,
  enabled: r.enabled,
  generation: String(r.generation),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

/** What a list shows of a user: no hash, no generation, no timestamps are read for it. */
export type StorageUserSummary = Pick<StorageUser, 'id' | 'clusterId' | 'username' | 'isSuperuser' | 'enabled'>;
const SUMMARY_COLUMNS = ['u.id', 'u.cluster_id', 'u.username', 'u.is_superuser', 'u.enabled'];

/**
 * The clusters a list is limited to when its filters restrict nothing but the cluster (null:
 * they restrict something else, so only count(*) can tell).
 */
function clustersOnly(filters: readonly Filter[], visible?: number[]): Set<string> | 'all' | null {
  let ids: Set<string> | 'all' = 'all';
  const narrow = (values: Iterable<string>) => {
    const next = new Set(values);
    ids = ids === 'all' ? next : new Set([...ids].filter((id) => next.has(id)));
  };
  for (const f of filters) {
    const onCluster = (f.alias === 'u' && f.column === 'cluster_id') || (f.alias === 'c' && f.column === 'id');
    if (!onCluster || (f.lookup !== 'exact' && f.lookup !== 'in')) return null;
    narrow(f.values.map(String));
  }
  if (visible) narrow(visible.map(String));
  return ids;
}

/** Exact total from the per-cluster counters the triggers keep, as a one-row query. */
function countFromCounters(db: Db, filters: readonly Filter[], visible?: number[]): Knex.QueryBuilder | null {
  const ids = clustersOnly(filters, visible);
  if (ids === null) return null;
  const q = db('cluster_user_counts').select(db.raw('coalesce(sum(user_count), 0) AS total'));
  if (ids !== 'all') q.whereIn('cluster_id', [...ids]);
  return q;
}

type SummaryRow = Pick<UserRow, 'id' | 'cluster_id' | 'username' | 'is_superuser' | 'enabled'>;
const toSummary = (r: SummaryRow): StorageUserSummary => ({ id: String(r.id), clusterId: Number(r.cluster_id), username: r.username, isSuperuser: r.is_superuser, enabled: r.enabled });

/**
 * Page 1 of one cluster or of all (the commonest lists) through named prepared statements; a deep
 * page ordered by id over nothing but clusters from the id buckets; every other page from the
 * generic OFFSET path (with the per-cluster counter for the total when it can).
 */
async function fetchUserPage(db: Db, base: Knex.QueryBuilder, query: ListQuery, visibleClusters?: number[]): Promise<Page<SummaryRow>> {
  const clusters = clustersOnly(query.filters, visibleClusters);
  const common = await fetchCommonUserPage(db, query, clusters);
  if (common) return common;
  const direction = bucketDirection(query, 'u');
  if (direction && clusters !== null && isDeepOffset(query.offset)) {
    const order = (qb: Knex.QueryBuilder) => applyOrdering(qb, query.ordering, 'u');
    return fetchPageByIdBuckets<SummaryRow>({ db, base, alias: 'u', columns: SUMMARY_COLUMNS, clusters, order }, query, direction);
  }
  return fetchPage<SummaryRow>(
    {
      db,
      base,
      table: () => db('storage_users as u'),
      alias: 'u',
      columns: SUMMARY_COLUMNS,
      fastCount: () => countFromCounters(db, query.filters, visibleClusters),
    },
    query,
  );
}

export async function listStorageUsers(db: Db, query: ListQuery, visibleClusters?: number[]): Promise<Page<StorageUserSummary>> {
  return withDbErrors(async () => {
    const base = db('storage_users as u');
    if (query.filters.some((f) => f.alias === 'c')) base.join('clusters as c', 'c.id', 'u.cluster_id');
    applyFilters(base, query.filters);
    if (visibleClusters) base.whereIn('u.cluster_id', visibleClusters);
    const page = await fetchUserPage(db, base, query, visibleClusters);
    return {
      total: page.total,
      rows: page.rows.map(toSummary),
    };
  });
}

const SUMMARY_BY_ID: NamedStatement = {
  name: 'cairn_user_summary_by_id',
  text: 'SELECT id, cluster_id, username, is_superuser, enabled FROM storage_users WHERE id = $1',
};

/** What a user's detail GET shows, by id: a named prepared statement on Postgres (the hottest read). */
export async function getStorageUserSummary(db: Db, id: string): Promise<StorageUserSummary | null> {
  return withDbErrors(async () => {
    const prepared = await runPrepared(db, SUMMARY_BY_ID, [id]);
    const row = prepared
      ? prepared[0] && { id: prepared[0][0], cluster_id: prepared[0][1], username: prepared[0][2], is_superuser: prepared[0][3], enabled: prepared[0][4] }
      : await db('storage_users as u').select(SUMMARY_COLUMNS).where('u.id', id).first();
    return row ? toSummary(row as SummaryRow) : null;
  });
}

/** `lock`: inside a transaction, hold the row until it ends, so a change's "before" is exact. */
export async function getStorageUser(db: Db, id: string, lock = false): Promise<StorageUser | null> {
  const row = await withDbErrors(() => {
    const q = db('storage_users as u').select(COLUMNS).where('u.id', id).first();
    return lock ? q.forNoKeyUpdate() : q;
  });
  return row ? toUser(row as UserRow) : null;
}

export interface NewStorageUser {
  clusterId: number;
  username: string;
  passwordHash: string;
  isSuperuser: boolean;
  enabled: boolean;
}

export async function createStorageUser(db: Db, user: NewStorageUser, clusterName: string): Promise<StorageUser> {
  const [row] = await withDbErrors(
    () =>
      db('storage_users')
        .insert({
          cluster_id: user.clusterId,
          username: user.username,
          password_hash: user.passwordHash,
          is_superuser: user.isSuperuser,
          enabled: user.enabled,
        })
        .returning(RETURNING),
    {
      storage_users_cluster_username_unique: () =>
        errors.alreadyExists(`A user named '${escapeHtml(user.username)}' already exists in cluster '${escapeHtml(clusterName)}'.`),
      storage_users_cluster_id_foreign: () => errors.invalidInput('The cluster no longer exists.'),
    },
  );
  return toUser(row as UserRow);
}

export interface StorageUserChanges {
  passwordHash?: string;
  isSuperuser?: boolean;
  enabled?: boolean;
}

/**
 * Applies the changes and bumps `generation` when the password, `enabled` or `is_superuser` really
 * changes, so every gateway can tell a token or a cached verification is stale.
 */
export async function updateStorageUser(db: Db, id: string, changes: StorageUserChanges): Promise<StorageUser | null> {
  return withDbErrors(async () => {
    const sets: Record<string, unknown> = {};
    if (changes.passwordHash !== undefined) sets.password_hash = changes.passwordHash;
    if (changes.isSuperuser !== undefined) sets.is_superuser = changes.isSuperuser;
    if (changes.enabled !== undefined) sets.enabled = changes.enabled;
    if (Object.keys(sets).length === 0) return getStorageUser(db, id);
    const bump = db.raw(
      `generation + CASE WHEN ?::boolean OR is_superuser IS DISTINCT FROM COALESCE(?::boolean, is_superuser)
         OR enabled IS DISTINCT FROM COALESCE(?::boolean, enabled) THEN 1 ELSE 0 END`,
      [changes.passwordHash !== undefined, changes.isSuperuser ?? null, changes.enabled ?? null],
    );
    const [row] = await db('storage_users')
      .where({ id })
      .update({ ...sets, generation: bump, updated_at: db.fn.now() })
      .returning(RETURNING);
    if (!row) return null;
    // Listeners hear of it from the storage_users triggers (migration 20261122041500).
    return toUser(row as UserRow);
  });
}

/** Deletes the login only; the Swift account AUTH_<user> and its data stay in Swift. */
export async function deleteStorageUser(db: Db, id: string): Promise<StorageUser | null> {
  return withDbErrors(async () => {
    const [row] = await db('storage_users').where({ id }).delete().returning(RETURNING);
    if (!row) return null;
    return toUser(row as UserRow);
  });
}
