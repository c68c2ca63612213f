import { TABLES } from '@cairn/contract';
import type { Quotas, SwiftQuotaInfo } from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { QUOTA_COLUMNS, quotasOfRow, type QuotaRow } from './quota-columns';

/**
 * The quota reconciler's records (migration 20261127120000_quotas): per user, the version of its
 * quotas wanted and the one applied; per cluster, what its Swift's /info said.
 */

/** NOTIFY channel of every change of a user's wanted quotas; payload: the cluster id. */
export const QUOTA_CHANGES_CHANNEL = 'cairn_quota_changes';

const APPLICATIONS = 'quota_applications';
const SWIFT_INFO = 'cluster_swift_info';

/** What the API shows of a user's quotas in Swift. */
export interface QuotaState {
  status: 'applied' | 'pending' | 'error';
  /** One sentence, for `error`. */
  error: string | null;
  appliedAt: Date | null;
}

export const QUOTA_STATUSES = ['applied', 'pending', 'error'] as const satisfies ReadonlyArray<QuotaState['status']>;

/** A row's status, in SQL: what users show and what their list filters on, from one expression. */
const statusSql = (a = '', value = (s: QuotaState['status']) => `'${s}'`) =>
  `CASE WHEN ${a}error IS NOT NULL THEN ${value('error')} WHEN ${a}wanted_version > ${a}applied_version THEN ${value('pending')} ELSE ${value('applied')} END`;
const STATUS_SQL = statusSql();

/**
 * Each user's quota state as a table (`user_id`, `status`, `applied_at`) under `alias`, for the
 * users list to join when it filters on it; Postgres folds the subquery into the join.
 */
export const quotaStateTable = (db: Db, alias: string) =>
  db.raw(`(SELECT user_id, ${STATUS_SQL} AS status, applied_at FROM ${APPLICATIONS}) AS ??`, [alias]);

/**
 * A user's quota state as a column of the statement that reads the user (`users`: its alias): a
 * scalar subquery by the primary key, cheaper to plan than a join; NULL: no row, the user never
 * had a quota (nothing to apply). Read back with quotaStateOfRow.
 */
export const quotaStateColumn = (users: string) => {
  // The statuses as bound values: a list's statement carries no literal (its shape is compiled once).
  const statuses: string[] = [];
  const status = statusSql('q.', (s) => (statuses.push(s), '?'));
  return {
    sql: `(SELECT json_build_array(${status}, q.applied_at, q.error) FROM ${APPLICATIONS} AS q WHERE q.user_id = ${users}.id) AS quota_state`,
    bindings: statuses,
  };
};

export interface QuotaStateColumn {
  /** [status, applied_at, error]; node-postgres parses json, other drivers may hand back its text. */
  quota_state: [QuotaState['status'], string | null, string | null] | string | null;
}

export const quotaStateOfRow = (r: QuotaStateColumn): QuotaState | null => {
  if (r.quota_state === null) return null;
  const [status, appliedAt, error] = (
    typeof r.quota_state === 'string' ? JSON.parse(r.quota_state) : r.quota_state
  ) as [QuotaState['status'], string | null, string | null];
  return { status, error, appliedAt: appliedAt === null ? null : new Date(appliedAt) };
};

/**
 * Marks a user's quotas as changed, in the transaction that changed them: the reconciler applies
 * the new version (an earlier error no longer stands, retries start over). Announced by trigger.
 */
export async function wantQuotas(db: Db, userId: string, clusterId: number): Promise<void> {
  await withDbErrors(() =>
    db.raw(
      `INSERT INTO ${APPLICATIONS} (user_id, cluster_id) VALUES (?, ?)
       ON CONFLICT (user_id) DO UPDATE SET wanted_version = ${APPLICATIONS}.wanted_version + 1, error = NULL, attempts = 0, retry_at = NULL`,
      [userId, clusterId],
    ),
  );
}

/** A user's quotas and the version the reconciler works on. */
export interface QuotaWork {
  userId: string;
  username: string;
  version: string;
  attempts: number;
  quotas: Quotas;
}

interface WorkRow extends QuotaRow {
  user_id: string | number;
  username: string;
  wanted_version: string | number;
  attempts: number;
}

const WORK_COLUMNS = [
  'a.user_id',
  'u.username',
  'a.wanted_version',
  'a.attempts',
  ...QUOTA_COLUMNS.map((c) => `u.${c}`),
];
const toWork = (r: WorkRow): QuotaWork => ({
  userId: String(r.user_id),
  username: r.username,
  version: String(r.wanted_version),
  attempts: Number(r.attempts),
  quotas: quotasOfRow(r),
});

/** Users of the cluster whose wanted quotas are not applied and not waiting for a retry, after `afterId`. */
export async function pendingQuotas(db: Db, clusterId: number, afterId: string, limit: number): Promise<QuotaWork[]> {
  const rows = (await withDbErrors(() =>
    db(`${APPLICATIONS} as a`)
      .join(`${TABLES.storageUsers} as u`, 'u.id', 'a.user_id')
      .select(WORK_COLUMNS)
      .where('a.cluster_id', clusterId)
      .andWhere('a.user_id', '>', afterId)
      .andWhereRaw('a.wanted_version > a.applied_version')
      .andWhere((q) => q.whereNull('a.retry_at').orWhere('a.retry_at', '<=', db.fn.now()))
      .orderBy('a.user_id')
      .limit(limit),
  )) as WorkRow[];
  return rows.map(toWork);
}

/** A page of the cluster's users whose quotas are applied (the drift check), after `afterId`. */
export async function appliedQuotas(db: Db, clusterId: number, afterId: string, limit: number): Promise<QuotaWork[]> {
  const rows = (await withDbErrors(() =>
    db(`${APPLICATIONS} as a`)
      .join(`${TABLES.storageUsers} as u`, 'u.id', 'a.user_id')
      .select(WORK_COLUMNS)
      .where('a.cluster_id', clusterId)
      .andWhere('a.user_id', '>', afterId)
      .andWhereRaw('a.wanted_version = a.applied_version')
      .orderBy('a.user_id')
      .limit(limit),
  )) as WorkRow[];
  return rows.map(toWork);
}

export type QuotaOutcome =
  | { userId: string; version: string; ok: true }
  | { userId: string; version: string; ok: false; error: string; retryInMs: number };

/**
 * Records what Swift said, in one statement for many users. A success counts only for the version
 * applied: a change made meanwhile stays pending.
 */
export async function recordQuotaOutcomes(db: Db, outcomes: readonly QuotaOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  const values = outcomes.map((o) => [o.userId, o.version, o.ok, o.ok ? null : o.error, o.ok ? 0 : o.retryInMs]);
  await withDbErrors(() =>
    db.raw(
      `UPDATE ${APPLICATIONS} AS a SET
         applied_version = CASE WHEN v.ok THEN v.version ELSE a.applied_version END,
         applied_at = CASE WHEN v.ok THEN now() ELSE a.applied_at END,
         error = CASE WHEN v.ok THEN NULL ELSE v.error END,
         attempts = CASE WHEN v.ok THEN 0 ELSE a.attempts + 1 END,
         retry_at = CASE WHEN v.ok THEN NULL ELSE now() + v.retry_ms * interval '1 millisecond' END
       FROM (SELECT * FROM json_to_recordset(?::json) AS x(user_id bigint, version bigint, ok boolean, error text, retry_ms bigint)) AS v
       WHERE a.user_id = v.user_id AND a.wanted_version = v.version`,
      [
        JSON.stringify(
          values.map(([user_id, version, ok, error, retry_ms]) => ({ user_id, version, ok, error, retry_ms })),
        ),
      ],
    ),
  );
}

/**
 * Marks every pending user of the cluster with one error (Swift unreachable, no credentials…), unchanged rows
 * untouched.
 */
export async function markPendingFailed(db: Db, clusterId: number, error: string): Promise<number> {
  return withDbErrors(async () => {
    const n = await db(APPLICATIONS)
      .where('cluster_id', clusterId)
      .andWhereRaw('wanted_version > applied_version')
      .andWhere((q) => q.whereNull('error').orWhereNot('error', error))
      .update({ error });
    return Number(n);
  });
}

/**
 * Clears an error that was about the cluster (it is reachable again), so those users are pending and retried at once.
 */
export async function clearClusterErrors(db: Db, clusterId: number, error: string): Promise<void> {
  await withDbErrors(() =>
    db(APPLICATIONS).where({ cluster_id: clusterId, error }).update({ error: null, retry_at: null }),
  );
}

export interface StoredSwiftInfo extends SwiftQuotaInfo {
  readAt: Date;
}

interface SwiftInfoRow {
  cluster_id: number;
  swift_version: string | null;
  account_quotas: boolean;
  policies: unknown;
  read_at: Date | string;
}

const toSwiftInfo = (row: SwiftInfoRow): StoredSwiftInfo => ({
  version: row.swift_version,
  accountQuotas: row.account_quotas,
  policies: (typeof row.policies === 'string' ? JSON.parse(row.policies) : row.policies) as string[],
  readAt: new Date(row.read_at),
});

export async function getSwiftInfo(db: Db, clusterId: number): Promise<StoredSwiftInfo | null> {
  const row = (await withDbErrors(() => db(SWIFT_INFO).where('cluster_id', clusterId).first())) as
    SwiftInfoRow | undefined;
  return row ? toSwiftInfo(row) : null;
}

/** What /info said of each of these clusters (absent: not read yet). */
export async function swiftInfosOf(db: Db, clusterIds: readonly number[]): Promise<Map<number, StoredSwiftInfo>> {
  if (clusterIds.length === 0) return new Map();
  const rows = (await withDbErrors(() =>
    db(SWIFT_INFO).whereIn('cluster_id', clusterIds as number[]),
  )) as SwiftInfoRow[];
  return new Map(rows.map((r) => [Number(r.cluster_id), toSwiftInfo(r)]));
}

export async function putSwiftInfo(db: Db, clusterId: number, info: SwiftQuotaInfo): Promise<void> {
  await withDbErrors(() =>
    db.raw(
      `INSERT INTO ${SWIFT_INFO} (cluster_id, swift_version, account_quotas, policies, read_at) VALUES (?, ?, ?, ?::jsonb, now())
       ON CONFLICT (cluster_id) DO UPDATE SET swift_version = EXCLUDED.swift_version, account_quotas = EXCLUDED.account_quotas,
         policies = EXCLUDED.policies, read_at = EXCLUDED.read_at`,
      [clusterId, info.version, info.accountQuotas, JSON.stringify(info.policies)],
    ),
  );
}

/** The policy names the cluster reports: its device reports' policies and its Swift's /info. */
export async function knownPolicyNames(db: Db, clusterId: number): Promise<string[]> {
  const [reported, info] = await Promise.all([
    withDbErrors(() =>
      db('storage_policies').where('cluster_id', clusterId).orderBy('policy_index').select('name'),
    ) as Promise<Array<{ name: string }>>,
    getSwiftInfo(db, clusterId),
  ]);
  const names = reported.map((r) => r.name);
  for (const n of info?.policies ?? []) if (!names.some((m) => m.toLowerCase() === n.toLowerCase())) names.push(n);
  return names;
}

/** The account a user owns in Swift (see the utilization migration's known accounts). */
const ACCOUNT_PREFIX = 'AUTH_';

/**
 * The desired quotas of the cluster's users owning these accounts (`AUTH_<user>`), as they stand
 * now; an account with no user (deleted, or never Cairn's) is absent. The names go as one array
 * joined to the users' (cluster, name) index: a list of thousands of values (IN, or = ANY) makes
 * Postgres weigh each one when planning, and at a few thousand it prefers to scan the table.
 */
export async function quotasOfAccounts(
  db: Db,
  clusterId: number,
  accounts: readonly string[],
): Promise<Map<string, Quotas>> {
  const names = accounts.filter((a) => a.startsWith(ACCOUNT_PREFIX)).map((a) => a.slice(ACCOUNT_PREFIX.length));
  if (names.length === 0) return new Map();
  const columns = QUOTA_COLUMNS.map((c) => `u.${c}`).join(', ');
  const result = (await withDbErrors(() =>
    db.raw(
      `SELECT u.username, ${columns} FROM unnest(?::text[]) AS n(name) JOIN ${TABLES.storageUsers} u ON u.cluster_id = ? AND u.username = n.name`,
      [names, clusterId],
    ),
  )) as { rows: Array<QuotaRow & { username: string }> };
  return new Map(result.rows.map((r) => [`${ACCOUNT_PREFIX}${r.username}`, quotasOfRow(r)]));
}
