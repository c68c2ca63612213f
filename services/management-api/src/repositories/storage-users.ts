import { STORAGE_USER_COLUMNS, TABLES, type StorageUserRow } from '@cairn/contract';
import { errors, type StorageUser, escapeHtml, type Quotas } from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { fixedStatement, runStatement, type FixedStatement } from '../db/prepared';
import { NAME_RANGE_MAX_ROWS } from '../db/migrations/20261130050000_user_name_range_bound';
import { listPage, type ListSource, type PartitionCounters } from './list-planner';
import type { ListQuery, Page } from './list-types';
import { QUOTA_COLUMNS, quotasOfRow, quotasToRow, type QuotaRow } from './quota-columns';
import { quotaStateColumn, quotaStateOfRow, quotaStateTable, type QuotaState, type QuotaStateColumn } from './quotas';
import { latestUsageColumn, latestUsageOfRow, type LatestUsage, type LatestUsageColumn } from './quota-usage';

/** The row the gateway reads too (@cairn/contract), and what only the API shows. */
interface UserRow extends StorageUserRow, QuotaRow {
  password_scheme: string;
  created_at: Date;
  updated_at: Date;
}

const TABLE = TABLES.storageUsers;
const RETURNING = [
  'cluster_id',
  ...STORAGE_USER_COLUMNS,
  'password_scheme',
  ...QUOTA_COLUMNS,
  'created_at',
  'updated_at',
];
const COLUMNS = RETURNING.map((c) => `u.${c}`);

const toUser = (r: UserRow): StorageUser => ({
  id: String(r.id),
  clusterId: Number(r.cluster_id),
  username: r.username,
  passwordHash: r.password_hash,
  passwordScheme: r.password_scheme,
  isSuperuser: r.is_superuser,
  enabled: r.enabled,
  generation: String(r.generation),
  quotas: quotasOfRow(r),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

/** What a list shows of a user: no hash, no generation, no timestamps are read for it. */
export type StorageUserSummary = Pick<
  StorageUser,
  'id' | 'clusterId' | 'username' | 'passwordScheme' | 'isSuperuser' | 'enabled' | 'quotas'
>;
const SUMMARY_COLUMNS = [
  'u.id',
  'u.cluster_id',
  'u.username',
  'u.password_scheme',
  'u.is_superuser',
  'u.enabled',
  ...QUOTA_COLUMNS.map((c) => `u.${c}`),
];

type SummaryRow = Pick<
  UserRow,
  'id' | 'cluster_id' | 'username' | 'password_scheme' | 'is_superuser' | 'enabled' | keyof QuotaRow
>;
const toSummary = (r: SummaryRow): StorageUserSummary => ({
  id: String(r.id),
  clusterId: Number(r.cluster_id),
  username: r.username,
  passwordScheme: r.password_scheme,
  isSuperuser: r.is_superuser,
  enabled: r.enabled,
  quotas: quotasOfRow(r),
});

/**
 * A user as the API shows it: with where its quotas stand in Swift (null: it never had one) and
 * what its account held at the latest storage sample, to read the quotas against (null: none).
 * Both are columns of the statement that reads the user (a list: after its page is cut), so a
 * list or a detail is one round trip.
 */
export type StorageUserView = StorageUserSummary & { quotaState: QuotaState | null; usage: LatestUsage | null };

const VIEW_ALIAS = 'u';
/** What is read with each user shown (see ListSource.attached). */
const VIEW_ATTACHED = { columns: [quotaStateColumn(VIEW_ALIAS), latestUsageColumn(VIEW_ALIAS)] };

type AttachedRow = QuotaStateColumn & LatestUsageColumn;
const attachedOf = (r: AttachedRow) => ({ quotaState: quotaStateOfRow(r), usage: latestUsageOfRow(r) });
const toView = (r: SummaryRow & AttachedRow): StorageUserView => ({
  id: String(r.id),
  clusterId: Number(r.cluster_id),
  username: r.username,
  passwordScheme: r.password_scheme,
  isSuperuser: r.is_superuser,
  enabled: r.enabled,
  quotas: quotasOfRow(r),
  quotaState: quotaStateOfRow(r),
  usage: latestUsageOfRow(r),
});

/**
 * Users are partitioned by cluster: `cluster`, `cluster__in` and the cluster filters resolved to
 * ids (`cluster__name`, `cluster__uuid`, `cluster__id`) narrow it, and the counters the triggers
 * keep per cluster (migrations 20261122010000 and 20261122040000, buckets of 2^12 ids, split by the
 * two flags since 20261123220000) give exact totals and deep pages ordered by id, cluster, enabled
 * or is_superuser without walking the skipped rows; the counters per range of names (20261124020000)
 * do the same for deep pages ordered by name and for totals of `user__startswith`.
 */
const USER_COUNTERS: PartitionCounters = {
  totals: { table: 'cluster_user_counts', key: 'cluster_id', count: 'user_count' },
  idBuckets: {
    table: 'storage_user_id_buckets',
    key: 'cluster_id',
    bucket: 'bucket',
    count: 'n',
    bits: 12,
    dimensions: { enabled: 'enabled', is_superuser: 'is_superuser' },
    spans: { table: 'storage_user_id_spans', span: 'span', bits: 6 },
  },
  rangeBuckets: {
    table: 'storage_user_name_buckets',
    key: 'cluster_id',
    column: 'username',
    lower: 'lower_name',
    count: 'n',
    maxRows: NAME_RANGE_MAX_ROWS,
    totals: {
      table: 'storage_user_name_ranges',
      lower: 'lower_name',
      count: 'n',
      spans: { table: 'storage_user_name_spans', lower: 'lower_name', upper: 'upper_name', count: 'n' },
    },
  },
};

/** The alias of the users' quota state (quota_status, quota_applied_at) in list filters. */
export const QUOTA_STATE_ALIAS = 'qa';

/** How the planner reads users; `visibleClusters`: the cluster ids an operator may see (undefined: all). */
export const usersListSource = (db: Db, visibleClusters?: number[]): ListSource => ({
  db,
  table: TABLE,
  alias: VIEW_ALIAS,
  columns: SUMMARY_COLUMNS,
  attached: VIEW_ATTACHED,
  partition: {
    column: 'cluster_id',
    only: visibleClusters,
    counters: USER_COUNTERS,
    indexedWithId: { type: 'integer' },
  },
  related: { c: { table: TABLES.clusters, key: 'cluster_id' } },
  joined: { [QUOTA_STATE_ALIAS]: { from: quotaStateTable(db, QUOTA_STATE_ALIAS), on: ['id', 'user_id'] } },
});

export async function listStorageUsers(
  db: Db,
  query: ListQuery,
  visibleClusters?: number[],
): Promise<Page<StorageUserView>> {
  return withDbErrors(async () => {
    const page = await listPage<SummaryRow & AttachedRow>(usersListSource(db, visibleClusters), query);
    return { total: page.total, rows: page.rows.map(toView) };
  });
}

/** A user's row as a list shows it, by id, without its quota state and usage. */
export async function getStorageUserSummary(db: Db, id: string): Promise<StorageUserSummary | null> {
  const row = await withDbErrors(() => db(`${TABLE} as u`).select(SUMMARY_COLUMNS).where('u.id', id).first());
  return row ? toSummary(row as SummaryRow) : null;
}

/** The users' rows with what is read with a user shown, in one statement. */
const viewQuery = (db: Db, columns: string[]) =>
  db(`${TABLE} as ${VIEW_ALIAS}`).select([...columns, ...VIEW_ATTACHED.columns.map((c) => db.raw(c.sql, c.bindings))]);

/**
 * The detail's statement, compiled by knex once per database handle: its SQL never changes, only
 * the id. Building and compiling it at every GET (twelve columns, two of them subqueries with their
 * own bindings) was a good part of the detail's API time; it is prepared on the server under its
 * name (see db/prepared.ts), and sent with db.raw, so it still passes through knex's query events.
 */
const ID_SLOT = '\u0000cairn-slot:user-id';
const detailStatements = new WeakMap<Db, FixedStatement>();
function detailStatement(db: Db) {
  let statement = detailStatements.get(db);
  if (!statement) {
    const { sql, bindings } = viewQuery(db, SUMMARY_COLUMNS).where(`${VIEW_ALIAS}.id`, ID_SLOT).limit(1).toSQL();
    statement = fixedStatement(sql, bindings);
    detailStatements.set(db, statement);
  }
  return statement;
}

/** What a user's detail GET shows, by id. */
export async function getStorageUserView(db: Db, id: string): Promise<StorageUserView | null> {
  const { sql, bindings, name } = detailStatement(db);
  const result = await withDbErrors(() =>
    runStatement<{ rows: Array<SummaryRow & AttachedRow> }>(
      db,
      sql,
      bindings.map((b) => (b === ID_SLOT ? id : b)),
      name,
    ),
  );
  const row = result.rows[0];
  return row ? toView(row) : null;
}

/** These users as the API shows them (just written: their rows as given), in one statement. */
export async function viewsOf(db: Db, users: readonly StorageUserSummary[]): Promise<StorageUserView[]> {
  if (users.length === 0) return [];
  const rows = (await withDbErrors(() =>
    viewQuery(db, [`${VIEW_ALIAS}.id`]).whereRaw('?? = ANY(?::bigint[])', [`${VIEW_ALIAS}.id`, users.map((u) => u.id)]),
  )) as Array<AttachedRow & { id: string | number }>;
  const byId = new Map(rows.map((r) => [String(r.id), attachedOf(r)]));
  return users.map((u) => ({ ...u, ...(byId.get(u.id) ?? { quotaState: null, usage: null }) }));
}

/** `lock`: inside a transaction, hold the row until it ends, so a change's "before" is exact. */
export async function getStorageUser(db: Db, id: string, lock = false): Promise<StorageUser | null> {
  const row = await withDbErrors(() => {
    const q = db(`${TABLE} as u`).select(COLUMNS).where('u.id', id).first();
    return lock ? q.forNoKeyUpdate() : q;
  });
  return row ? toUser(row as UserRow) : null;
}

/** A cluster's user by its name (the migrate job's declared collector user). */
export async function findStorageUserByName(
  db: Db,
  clusterId: number,
  username: string,
  lock = false,
): Promise<StorageUser | null> {
  const row = await withDbErrors(() => {
    const q = db(`${TABLE} as u`).select(COLUMNS).where({ 'u.cluster_id': clusterId, 'u.username': username }).first();
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
  quotas: Quotas;
  /** An imported tempauth user's name in tempauth (V1 `<username>:<tempauthUser>`); absent: none. */
  tempauthUser?: string | null;
}

export async function createStorageUser(db: Db, user: NewStorageUser, clusterName: string): Promise<StorageUser> {
  const [row] = await withDbErrors(
    () =>
      db(TABLE)
        .insert({
          cluster_id: user.clusterId,
          username: user.username,
          password_hash: user.passwordHash,
          is_superuser: user.isSuperuser,
          enabled: user.enabled,
          tempauth_user: user.tempauthUser ?? null,
          ...quotasToRow(user.quotas),
        })
        .returning(RETURNING),
    {
      storage_users_cluster_username_unique: () =>
        errors.alreadyExists(
          `A user named '${escapeHtml(user.username)}' already exists in cluster '${escapeHtml(clusterName)}'.`,
        ),
      storage_users_cluster_id_foreign: () => errors.invalidInput('The cluster no longer exists.'),
    },
  );
  return toUser(row as UserRow);
}

/**
 * Creates those of `users` whose names are free in their cluster, in one statement per chunk, and
 * returns them; a name already taken (also earlier in the same list) is skipped, not an error,
 * which is what re-running an import needs.
 */
export async function createStorageUsersSkippingExisting(db: Db, users: NewStorageUser[]): Promise<StorageUser[]> {
  const created: StorageUser[] = [];
  // 10 parameters a row: well under Postgres' 65,535 per statement.
  for (let i = 0; i < users.length; i += 1000) {
    const rows = await withDbErrors(
      () =>
        db(TABLE)
          .insert(
            users.slice(i, i + 1000).map((u) => ({
              cluster_id: u.clusterId,
              username: u.username,
              password_hash: u.passwordHash,
              is_superuser: u.isSuperuser,
              enabled: u.enabled,
              tempauth_user: u.tempauthUser ?? null,
              ...quotasToRow(u.quotas),
            })),
          )
          .onConflict(['cluster_id', 'username'])
          .ignore()
          .returning(RETURNING),
      { storage_users_cluster_id_foreign: () => errors.invalidInput('The cluster no longer exists.') },
    );
    created.push(...(rows as UserRow[]).map(toUser));
  }
  return created;
}

export interface StorageUserChanges {
  passwordHash?: string;
  isSuperuser?: boolean;
  enabled?: boolean;
  /** Only the quotas to change. */
  quotas?: Partial<Quotas>;
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
    if (changes.quotas) Object.assign(sets, quotasToRow(changes.quotas));
    if (Object.keys(sets).length === 0) return getStorageUser(db, id);
    const bump = db.raw(
      `generation + CASE WHEN ?::boolean OR is_superuser IS DISTINCT FROM COALESCE(?::boolean, is_superuser)
         OR enabled IS DISTINCT FROM COALESCE(?::boolean, enabled) THEN 1 ELSE 0 END`,
      [changes.passwordHash !== undefined, changes.isSuperuser ?? null, changes.enabled ?? null],
    );
    const [row] = await db(TABLE)
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
    const [row] = await db(TABLE).where({ id }).delete().returning(RETURNING);
    if (!row) return null;
    return toUser(row as UserRow);
  });
}
