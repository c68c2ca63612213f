import { randomUUID } from 'node:crypto';
import { CLUSTER_COLUMNS, TABLES, type ClusterRow as SharedClusterRow } from '@cairn/contract';
import {
  errors,
  quotasOfInput,
  type Cluster,
  type ClusterCreateInput,
  type ClusterPatchInput,
  escapeHtml,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors, type ConstraintMessages } from '../db/errors';
import { listPage } from './list-planner';
import type { ListQuery, Page } from './list-types';
import { QUOTA_COLUMNS, quotasOfRow, quotasToRow } from './quota-columns';

/** The row the gateway reads too (@cairn/contract), and what only the API shows. */
interface ClusterRow extends SharedClusterRow {
  default_quota_bytes: string | null;
  default_quota_count: string | null;
  default_quota_bytes_policy: unknown;
  default_quota_count_policy: unknown;
  created_at: Date;
  updated_at: Date;
}

const TABLE = TABLES.clusters;
const RETURNING = [...CLUSTER_COLUMNS, ...QUOTA_COLUMNS.map((c) => `default_${c}`), 'created_at', 'updated_at'];
const COLUMNS = RETURNING.map((c) => `k.${c}`);

const toCluster = (r: ClusterRow): Cluster => ({
  id: Number(r.id),
  name: r.name,
  uuid: r.uuid,
  authUrl: r.auth_url,
  storageUrl: r.storage_url,
  region: r.region,
  defaultQuotas: quotasOfRow(r as never, 'default_'),
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

const uniqueMessages = (name?: string, uuid?: string): ConstraintMessages => ({
  clusters_name_unique: () => errors.alreadyExists(`A cluster named '${escapeHtml(String(name))}' already exists.`),
  clusters_uuid_unique: () => errors.alreadyExists(`A cluster with uuid '${uuid}' already exists.`),
});

/** `visible`: the cluster ids an operator may see; undefined means all. */
export async function listClusters(db: Db, query: ListQuery, visible?: number[]): Promise<Page<Cluster>> {
  return withDbErrors(async () => {
    const page = await listPage<ClusterRow>(
      { db, table: TABLE, alias: 'k', columns: COLUMNS, partition: { column: 'id', only: visible } },
      query,
    );
    return { total: page.total, rows: page.rows.map(toCluster) };
  });
}

/** `lock`: inside a transaction, hold the row until it ends, so a change's "before" is exact. */
export async function getCluster(db: Db, id: number, lock = false): Promise<Cluster | null> {
  const row = await withDbErrors(() => {
    const q = db(`${TABLE} as k`).select(COLUMNS).where('k.id', id).first();
    return lock ? q.forNoKeyUpdate() : q;
  });
  return row ? toCluster(row as ClusterRow) : null;
}

export async function findClusterByName(db: Db, name: string): Promise<Cluster | null> {
  const row = await withDbErrors(() => db(`${TABLE} as k`).select(COLUMNS).where('k.name', name).first());
  return row ? toCluster(row as ClusterRow) : null;
}

/** The cluster with this uuid (immutable, never reused): the one a gateway token names as its audience. */
export async function findClusterByUuid(db: Db, uuid: string): Promise<Cluster | null> {
  const row = await withDbErrors(() => db(`${TABLE} as k`).select(COLUMNS).where('k.uuid', uuid).first());
  return row ? toCluster(row as ClusterRow) : null;
}

/** Every cluster (there are few): the quota reconciler's round. */
export async function listAllClusters(db: Db): Promise<Cluster[]> {
  const rows = await withDbErrors(() => db(`${TABLE} as k`).select(COLUMNS).orderBy('k.id'));
  return (rows as ClusterRow[]).map(toCluster);
}

export async function countClusters(db: Db): Promise<number> {
  const [row] = await withDbErrors(() => db(TABLE).count({ count: '*' }));
  return Number((row as { count: string | number }).count);
}

export async function createCluster(db: Db, input: ClusterCreateInput): Promise<Cluster> {
  const uuid = input.uuid ?? randomUUID();
  const [row] = await withDbErrors(
    () =>
      db(TABLE)
        .insert({
          name: input.name,
          uuid,
          auth_url: input.auth_url,
          storage_url: input.storage_url,
          region: input.region,
          ...quotasToRow(quotasOfInput(input, 'default_'), 'default_'),
        })
        .returning(RETURNING),
    uniqueMessages(input.name, uuid),
  );
  return toCluster(row as ClusterRow);
}

export async function updateCluster(db: Db, id: number, patch: ClusterPatchInput): Promise<Cluster | null> {
  const changes: Record<string, unknown> = {};
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.auth_url !== undefined) changes.auth_url = patch.auth_url;
  if (patch.storage_url !== undefined) changes.storage_url = patch.storage_url;
  if (patch.region !== undefined) changes.region = patch.region;
  Object.assign(changes, quotasToRow(quotasOfInput(patch, 'default_'), 'default_'));
  if (Object.keys(changes).length === 0) return getCluster(db, id);
  const [row] = await withDbErrors(
    () =>
      db(TABLE)
        .where({ id })
        .update({ ...changes, updated_at: db.fn.now() })
        .returning(RETURNING),
    uniqueMessages(patch.name),
  );
  return row ? toCluster(row as ClusterRow) : null;
}

/**
 * Refuses while storage users exist: their Swift accounts would be orphaned from any login.
 * Returns the deleted cluster, or null when there was none.
 */
/** Refuses a cluster delete that would leave operators limited to it with no cluster, hence every cluster. */
function limitedOperators(names: string[]) {
  const who =
    names.length === 0
      ? 'Operators are'
      : names.length === 1
        ? `Operator '${names[0]}' is`
        : `Operators ${names.map((n) => `'${n}'`).join(', ')} are`;
  return errors.inUse(
    `${who} limited to this cluster; change their clusters (PATCH /api/v1/operators/<id>/) before deleting the cluster.`,
  );
}

export async function deleteCluster(db: Db, id: number): Promise<Cluster | null> {
  return withDbErrors(
    async () => {
      const [users] = await db(TABLES.storageUsers).where({ cluster_id: id }).count({ count: '*' });
      const count = Number((users as { count: string | number }).count);
      if (count > 0) {
        throw errors.inUse(`The cluster still has ${count} storage user(s); delete them before deleting the cluster.`);
      }
      // An operator limited to clusters and left with none would reach every cluster: the
      // operators limited to this one must be changed first (the foreign key refuses it too).
      const limited = (await db('operator_clusters as oc')
        .join('operators as o', 'o.id', 'oc.operator_id')
        .where('oc.cluster_id', id)
        .orderBy('o.name')
        .select('o.name')) as Array<{ name: string }>;
      if (limited.length > 0) throw limitedOperators(limited.map((o) => o.name));
      const [row] = await db(TABLE).where({ id }).delete().returning(RETURNING);
      return row ? toCluster(row as ClusterRow) : null;
    },
    {
      storage_users_cluster_id_foreign: () =>
        errors.inUse('The cluster still has storage users; delete them before deleting the cluster.'),
      operator_clusters_cluster_id_foreign: () => limitedOperators([]),
    },
  );
}
