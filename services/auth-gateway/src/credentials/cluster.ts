import type { Knex } from 'knex';
import type { Cluster } from '@cairn/domain';

/** The cluster a gateway serves, read once at start from the management API's schema. */
export type ClusterInfo = Pick<Cluster, 'id' | 'name' | 'uuid' | 'authUrl' | 'storageUrl' | 'region'>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Finds the cluster by id, uuid or name (in that order of interpretation). */
export async function resolveCluster(db: Knex, ref: string): Promise<ClusterInfo> {
  const q = db('clusters').select('id', 'name', 'uuid', 'auth_url', 'storage_url', 'region');
  if (/^\d{1,9}$/.test(ref)) q.where('id', Number(ref)).orWhere('name', ref);
  else if (UUID.test(ref)) q.where('uuid', ref.toLowerCase()).orWhere('name', ref);
  else q.where('name', ref);
  const rows = (await q) as Array<{ id: number; name: string; uuid: string; auth_url: string; storage_url: string; region: string }>;
  // An id or uuid match wins over a cluster that happens to be named like one.
  const row = rows.find((r) => String(r.id) === ref || r.uuid === ref.toLowerCase()) ?? rows[0];
  if (!row) throw new Error(`CAIRN_GATEWAY_CLUSTER: no cluster with id, uuid or name '${ref}'.`);
  return {
    id: Number(row.id),
    name: row.name,
    uuid: row.uuid,
    authUrl: row.auth_url.replace(/\/+$/, ''),
    storageUrl: row.storage_url.replace(/\/+$/, ''),
    region: row.region,
  };
}
