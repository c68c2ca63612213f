import { CLUSTER_COLUMNS, TABLES, type ClusterRow } from '@cairn/contract';
import type { Knex } from 'knex';
import type { Cluster } from '@cairn/domain';

/** The cluster a gateway serves, as its row reads now. */
export type ClusterInfo = Pick<Cluster, 'id' | 'name' | 'uuid' | 'authUrl' | 'storageUrl' | 'region'>;

const COLUMNS = [...CLUSTER_COLUMNS];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const toInfo = (row: ClusterRow): ClusterInfo => ({
  id: Number(row.id),
  name: row.name,
  uuid: row.uuid,
  authUrl: row.auth_url.replace(/\/+$/, ''),
  storageUrl: row.storage_url.replace(/\/+$/, ''),
  region: row.region,
});

/** Finds the cluster by id, uuid or name (in that order of interpretation); null when there is none. */
export async function findCluster(db: Knex, ref: string): Promise<ClusterInfo | null> {
  const q = db(TABLES.clusters).select(COLUMNS);
  if (/^\d{1,9}$/.test(ref)) q.where('id', Number(ref)).orWhere('name', ref);
  else if (UUID.test(ref)) q.where('uuid', ref.toLowerCase()).orWhere('name', ref);
  else q.where('name', ref);
  const rows = (await q) as ClusterRow[];
  // An id or uuid match wins over a cluster that happens to be named like one.
  const row = rows.find((r) => String(r.id) === ref || r.uuid === ref.toLowerCase()) ?? rows[0];
  return row ? toInfo(row) : null;
}

/** Like findCluster, but a missing cluster is an error naming the setting. */
export async function resolveCluster(db: Knex, ref: string): Promise<ClusterInfo> {
  const found = await findCluster(db, ref);
  if (!found) throw new Error(`CAIRN_GATEWAY_CLUSTER: no cluster with id, uuid or name '${ref}'.`);
  return found;
}

/**
 * The row of the cluster a running gateway serves: the same id and uuid (ids are never reused, the
 * uuid is immutable, so a row matching both is that cluster); null once it has been deleted.
 */
export async function readServedCluster(db: Knex, id: number, uuid: string): Promise<ClusterInfo | null> {
  const row = (await db(TABLES.clusters).select(COLUMNS).where({ id, uuid }).first()) as ClusterRow | undefined;
  return row ? toInfo(row) : null;
}

/** Every cluster's name, by id (the all-in-one launcher names them when it cannot choose). */
export async function clusterNames(db: Knex): Promise<string[]> {
  const rows = (await db(TABLES.clusters).select('name').orderBy('id')) as Array<{ name: string }>;
  return rows.map((r) => r.name);
}
