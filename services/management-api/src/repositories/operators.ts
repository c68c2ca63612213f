import { errors, type Operator, type OperatorRole, escapeHtml } from '@cairn/domain';
import type { Knex } from 'knex';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { listPage } from './list-planner';
import type { ListQuery, Page } from './list-types';

export interface OperatorRow {
  id: number;
  name: string;
  role: OperatorRole;
  cluster_ids: number[] | null;
  created_at: Date;
  updated_at: Date;
}

export const operatorFromRow = (r: OperatorRow): Operator => ({
  id: Number(r.id),
  name: r.name,
  role: r.role,
  clusterIds: (r.cluster_ids ?? []).map(Number).sort((a, b) => a - b),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

export const selectOperators = (db: Db) =>
  db('operators as o').select(
    'o.id',
    'o.name',
    'o.role',
    'o.created_at',
    'o.updated_at',
    db.raw('ARRAY(SELECT oc.cluster_id FROM operator_clusters oc WHERE oc.operator_id = o.id) AS cluster_ids'),
  );

export async function listOperators(db: Db, query: ListQuery): Promise<Page<Operator>> {
  return withDbErrors(async () => {
    const columns = [
      'o.id',
      'o.name',
      'o.role',
      'o.created_at',
      'o.updated_at',
      db.raw('ARRAY(SELECT oc.cluster_id FROM operator_clusters oc WHERE oc.operator_id = o.id) AS cluster_ids'),
    ];
    const page = await listPage<OperatorRow>({ db, table: 'operators', alias: 'o', columns }, query);
    return { total: page.total, rows: page.rows.map(operatorFromRow) };
  });
}

/** `lock`: inside a transaction, hold the row until it ends, so a change's "before" is exact. */
export async function getOperator(db: Db, id: number, lock = false): Promise<Operator | null> {
  const row = await withDbErrors(() => {
    const q = selectOperators(db).where('o.id', id).first();
    return lock ? q.forNoKeyUpdate('o') : q;
  });
  return row ? operatorFromRow(row as OperatorRow) : null;
}

export async function createOperator(
  db: Db,
  input: { name: string; role: OperatorRole; clusterIds: number[] },
): Promise<Operator> {
  return withDbErrors(
    async () => {
      const [row] = await db('operators').insert({ name: input.name, role: input.role }).returning(['id']);
      const id = Number((row as { id: number }).id);
      await setOperatorClusters(db, id, input.clusterIds);
      return (await getOperator(db, id))!;
    },
    {
      operators_name_unique: () =>
        errors.alreadyExists(`An operator named '${escapeHtml(input.name)}' already exists.`),
    },
  );
}

async function setOperatorClusters(db: Db, operatorId: number, clusterIds: number[]): Promise<void> {
  await db('operator_clusters').where({ operator_id: operatorId }).delete();
  const unique = [...new Set(clusterIds)];
  if (unique.length > 0)
    await db('operator_clusters').insert(unique.map((cluster_id) => ({ operator_id: operatorId, cluster_id })));
}

export async function updateOperator(
  db: Db,
  id: number,
  changes: { role?: OperatorRole; clusterIds?: number[] },
): Promise<Operator | null> {
  return withDbErrors(async () => {
    const updated = await db('operators')
      .where({ id })
      .update({ ...(changes.role ? { role: changes.role } : {}), updated_at: db.fn.now() })
      .returning('id');
    if (updated.length === 0) return null;
    if (changes.clusterIds) await setOperatorClusters(db, id, changes.clusterIds);
    return getOperator(db, id);
  });
}

export async function deleteOperator(db: Db, id: number): Promise<boolean> {
  // returning() rather than the affected-row count: PGlite's driver does not report the count.
  return withDbErrors(async () => (await db('operators').where({ id }).delete().returning('id')).length > 0);
}

/** Admins limited to no cluster: those who may manage clusters, operators and the audit trail. */
const globalAdmins = (db: Db) =>
  db('operators as o')
    .where('o.role', 'admin')
    .whereNotExists(db('operator_clusters as oc').whereRaw('oc.operator_id = o.id'));

async function countOf(query: Knex.QueryBuilder): Promise<number> {
  const [row] = await withDbErrors(() => query.count({ count: '*' }));
  return Number((row as { count: string | number }).count);
}

export const countAdmins = (db: Db): Promise<number> => countOf(globalAdmins(db));

/** Global admins that hold at least one API key: those who can still sign in and manage everything. */
export const countUsableAdmins = (db: Db): Promise<number> =>
  countOf(globalAdmins(db).whereExists(db('api_keys as k').whereRaw('k.operator_id = o.id')));

export interface OperatorCredential {
  operator: Operator;
  /** SHA-256 of each API key, in key id order. */
  keyHashes: Buffer[];
  /** The id of each key, in the same order as `keyHashes`. */
  keyIds: string[];
}

/** Everything needed to authenticate one request, in one round trip. */
export async function findOperatorCredentials(db: Db, name: string): Promise<OperatorCredential | null> {
  const row = await withDbErrors(() =>
    selectOperators(db)
      .select(
        db.raw('ARRAY(SELECT k.key_hash FROM api_keys k WHERE k.operator_id = o.id ORDER BY k.id) AS key_hashes'),
        db.raw('ARRAY(SELECT k.id::text FROM api_keys k WHERE k.operator_id = o.id ORDER BY k.id) AS key_ids'),
      )
      .where('o.name', name)
      .first(),
  );
  if (!row) return null;
  const hashes = ((row as { key_hashes: unknown[] }).key_hashes ?? []).map((h) => toBuffer(h));
  const ids = ((row as { key_ids: unknown[] }).key_ids ?? []).map(String);
  return { operator: operatorFromRow(row as OperatorRow), keyHashes: hashes, keyIds: ids };
}

/** node-postgres returns bytea as Buffer, inside arrays as "\\x…" text; PGlite as Uint8Array. */
function toBuffer(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value);
  const s = String(value);
  return Buffer.from(s.startsWith('\\x') ? s.slice(2) : s, 'hex');
}

export interface ApiKeyInfo {
  id: string;
  operatorId: number;
  createdAt: Date;
}

export async function addApiKey(db: Db, operatorId: number, keyHash: Buffer): Promise<ApiKeyInfo> {
  const [row] = await withDbErrors(() =>
    db('api_keys')
      .insert({ operator_id: operatorId, key_hash: keyHash })
      .returning(['id', 'operator_id', 'created_at']),
  );
  const r = row as { id: string | number; operator_id: number; created_at: Date };
  return { id: String(r.id), operatorId: Number(r.operator_id), createdAt: new Date(r.created_at) };
}

/** One page of an operator's keys (ids and dates, never hashes), by id unless the query orders them. */
export async function listApiKeys(db: Db, operatorId: number, query: ListQuery): Promise<Page<ApiKeyInfo>> {
  return withDbErrors(async () => {
    const scope = (qb: Knex.QueryBuilder) => {
      qb.where('k.operator_id', operatorId);
    };
    const page = await listPage<{ id: string | number; operator_id: number; created_at: Date }>(
      { db, table: 'api_keys', alias: 'k', columns: ['k.id', 'k.operator_id', 'k.created_at'], scope },
      query,
    );
    return {
      total: page.total,
      rows: page.rows.map((r) => ({
        id: String(r.id),
        operatorId: Number(r.operator_id),
        createdAt: new Date(r.created_at),
      })),
    };
  });
}

/** Returns the deleted key's record (never its hash), or null when the operator has no such key. */
export async function deleteApiKey(db: Db, operatorId: number, keyId: string): Promise<ApiKeyInfo | null> {
  const [row] = await withDbErrors(() =>
    db('api_keys')
      .where({ operator_id: operatorId, id: keyId })
      .delete()
      .returning(['id', 'operator_id', 'created_at']),
  );
  if (!row) return null;
  const r = row as { id: string | number; operator_id: number; created_at: Date };
  return { id: String(r.id), operatorId: Number(r.operator_id), createdAt: new Date(r.created_at) };
}
