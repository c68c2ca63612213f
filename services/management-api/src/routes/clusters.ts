import { Router, type RequestHandler } from 'express';
import { errors, validate, clusterCreateSchema, clusterPatchSchema, type ClusterCreateInput, type ClusterPatchInput, escapeHtml, type Cluster } from '@cairn/domain';
import type { Db } from '../db/database';
import { canSeeCluster, operatorOf, requireGlobalAdmin, visibleClusters } from '../http/auth';
import { parseBody } from '../http/body';
import { dropUnchangedReadOnly, sameId, sameUri, sameUuid, type SameAs } from '../http/read-only';
import { INT4_MAX, NUMBER_LOOKUPS, STRING_LOOKUPS, type ResourceDef } from '../http/resource';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { API_ROOT, clusterUri, parseIntId } from '../http/uris';
import { createCluster, deleteCluster, getCluster, listClusters, updateCluster } from '../repositories/clusters';
import { recordAudit } from '../repositories/audit';
import { actorOf, clusterTarget } from './audit';
import { sendList } from './list';
import { clusterJson } from './representations';

export const clustersResource: ResourceDef = {
  name: 'clusters',
  alias: 'k',
  listMethods: ['GET', 'POST'],
  detailMethods: ['GET', 'PATCH', 'DELETE'],
  fields: {
    id: { type: 'integer', help: 'Integer data. Ex: 2673', readonly: true, unique: true, column: 'id', filtering: NUMBER_LOOKUPS, max: INT4_MAX, ordering: true },
    name: { type: 'string', help: 'Unique cluster name.', unique: true, column: 'name', filtering: STRING_LOOKUPS, ordering: true },
    uuid: { type: 'string', help: 'Unique cluster UUID; generated when not given.', unique: true, column: 'uuid', filtering: ['exact', 'in'], ordering: true },
    auth_url: { type: 'string', help: "Public address of the cluster's auth gateway, as users configure it." },
    storage_url: { type: 'string', help: "Base URL of the cluster's Swift proxy, e.g. https://swift.example.com/v1." },
    region: { type: 'string', help: 'Region shown in Keystone catalogs.', default: 'RegionOne', column: 'region', filtering: STRING_LOOKUPS, ordering: true },
    resource_uri: { type: 'string', help: 'URI of this cluster.', readonly: true },
  },
};

const LIST = `${API_ROOT}/clusters/`;

/** What a client may send back unchanged from a GET (see dropUnchangedReadOnly). */
const clusterReadOnly = (c: Cluster): Record<string, SameAs> => ({
  id: sameId(c.id),
  uuid: sameUuid(c.uuid),
  resource_uri: sameUri(clusterUri(c.id)),
});

/** The cluster a path names, if the caller may see it; anything else is simply not found. */
export async function findVisibleCluster(db: Db, raw: string | undefined, canSee: (id: number) => boolean): Promise<Cluster> {
  const id = parseIntId(raw);
  const cluster = id === null || !canSee(id) ? null : await getCluster(db, id);
  if (!cluster) throw errors.notFound(`No cluster with id '${escapeHtml(String(raw))}'.`);
  return cluster;
}

export function clustersRouter(db: Db, auth: RequestHandler): Router {
  const router = Router();
  const visibleCluster = (raw: string | undefined, canSee: (id: number) => boolean) => findVisibleCluster(db, raw, canSee);

  resourceRoute(router, '/clusters/', auth, {
    GET: (req, res) => sendList(req, res, clustersResource, LIST, (q) => listClusters(db, q, visibleClusters(operatorOf(res))), clusterJson),
    POST: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      const input = validate<ClusterCreateInput>(clusterCreateSchema, await parseBody(req));
      const cluster = await db.transaction(async (trx) => {
        const created = await createCluster(trx, input);
        await recordAudit(trx, actorOf(req, res), { action: 'create', target: clusterTarget(created), before: null, after: clusterJson(created) });
        return created;
      });
      res.set('Location', clusterUri(cluster.id));
      send(req, res, 201, clusterJson(cluster));
    },
  });

  resourceRoute(router, '/clusters/:id/', auth, {
    GET: async (req, res) => {
      const op = operatorOf(res);
      send(req, res, 200, clusterJson(await visibleCluster(req.params.id, (id) => canSeeCluster(op, id))));
    },
    PATCH: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      const cluster = await visibleCluster(req.params.id, () => true);
      const patch = validate<ClusterPatchInput>(clusterPatchSchema, dropUnchangedReadOnly(await parseBody(req), clusterReadOnly(cluster)));
      const updated = await db.transaction(async (trx) => {
        const before = await getCluster(trx, cluster.id, true);
        const after = before && (await updateCluster(trx, before.id, patch));
        if (!before || !after) throw errors.notFound(`No cluster with id '${escapeHtml(String(req.params.id))}'.`);
        await recordAudit(trx, actorOf(req, res), { action: 'update', target: clusterTarget(after), before: clusterJson(before), after: clusterJson(after) });
        return after;
      });
      send(req, res, 202, clusterJson(updated));
    },
    DELETE: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      const cluster = await visibleCluster(req.params.id, () => true);
      await db.transaction(async (trx) => {
        const deleted = await deleteCluster(trx, cluster.id);
        if (!deleted) throw errors.notFound(`No cluster with id '${escapeHtml(String(req.params.id))}'.`);
        await recordAudit(trx, actorOf(req, res), { action: 'delete', target: clusterTarget(deleted), before: clusterJson(deleted), after: null });
      });
      res.status(204).end();
    },
  });

  return router;
}
