import { Router, type RequestHandler } from 'express';
import {
  validate,
  clusterCreateSchema,
  clusterPatchSchema,
  type ClusterCreateInput,
  type ClusterPatchInput,
  type Cluster,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { parseBody } from '../http/body';
import { anyValue, dropUnchangedReadOnly, sameId, sameUri, sameUuid, type SameAs } from '../http/read-only';
import { NUMBER_LOOKUPS, STRING_LOOKUPS, type ResourceDef } from '../http/resource';
import { INT4_MAX, API_ROOT, clusterUri } from '../resources/uris';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import * as clusters from '../services/clusters';
import { actingOf } from '../http/acting';
import { sendList } from './list';
import { quotaFields } from './quota-fields';
import { clusterJson } from '../resources/representations';

export const clustersResource: ResourceDef = {
  name: 'clusters',
  alias: 'k',
  listMethods: ['GET', 'POST'],
  detailMethods: ['GET', 'PATCH', 'DELETE'],
  fields: {
    id: {
      type: 'integer',
      help: 'Integer data. Ex: 2673',
      readonly: true,
      unique: true,
      column: 'id',
      filtering: NUMBER_LOOKUPS,
      max: INT4_MAX,
      ordering: true,
    },
    name: {
      type: 'string',
      help: 'Unique cluster name.',
      unique: true,
      column: 'name',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    uuid: {
      type: 'string',
      help: 'Unique cluster UUID; generated when not given.',
      unique: true,
      column: 'uuid',
      format: 'uuid',
      filtering: ['exact', 'in'],
      ordering: true,
    },
    auth_url: { type: 'string', help: "Public address of the cluster's auth gateway, as users configure it." },
    storage_url: { type: 'string', help: "Base URL of the cluster's Swift proxy, e.g. https://swift.example.com/v1." },
    region: {
      type: 'string',
      help: 'Region shown in Keystone catalogs.',
      default: 'RegionOne',
      column: 'region',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    ...quotaFields('default_', "a new user's"),
    quota_bytes_total: {
      type: 'integer',
      bigNumber: true,
      help: "The sum of the quota_bytes of the cluster's users (users without one add nothing; per-policy quotas are not counted); null when no user has one. A JSON number, a string above 2^53. Reported state, ignored when sent back.",
      readonly: true,
      nullable: true,
    },
    quota_bytes_policy_total: {
      type: 'dict',
      bigNumber: true,
      help: 'The sum of the quota_bytes_policy of the cluster\'s users, by policy name as the quotas spell it ({"gold": 5497558138880}); null when no user has one. Numbers, strings above 2^53. Reported state, ignored when sent back.',
      readonly: true,
      nullable: true,
    },
    quota_support: {
      type: 'dict',
      help: "What the quota reconciler last read from the cluster's Swift /info: swift_version, fields (the quota fields it can enforce) and read_at; null before it has. Reported state, ignored when sent back.",
      readonly: true,
      nullable: true,
    },
    health: {
      type: 'string',
      help: "The worst severity of the cluster's open health findings (ok, warning or critical; see …/health/), or unknown before its first health round. Reported state, ignored when sent back.",
      readonly: true,
      choices: ['ok', 'warning', 'critical', 'unknown'],
    },
    resource_uri: { type: 'string', help: 'URI of this cluster.', readonly: true },
  },
};

const LIST = `${API_ROOT}/clusters/`;

/** What a client may send back unchanged from a GET (see dropUnchangedReadOnly). */
const clusterReadOnly = (c: Cluster): Record<string, SameAs> => ({
  id: sameId(c.id),
  uuid: sameUuid(c.uuid),
  resource_uri: sameUri(clusterUri(c.id)),
  quota_bytes_total: anyValue,
  quota_bytes_policy_total: anyValue,
  quota_support: anyValue,
  health: anyValue,
});

export function clustersRouter(db: Db, auth: RequestHandler): Router {
  const router = Router();

  resourceRoute(router, '/clusters/', auth, {
    GET: (req, res) =>
      sendList(
        req,
        res,
        clustersResource,
        LIST,
        (q) => clusters.list(db, actingOf(req, res), q),
        (c) => clusterJson(c, c),
      ),
    POST: async (req, res) => {
      const cluster = await clusters.create(db, actingOf(req, res), async () =>
        validate<ClusterCreateInput>(clusterCreateSchema, await parseBody(req, clustersResource)),
      );
      res.set('Location', clusterUri(cluster.id));
      send(req, res, 201, clusterJson(cluster, cluster));
    },
  });

  resourceRoute(router, '/clusters/:id/', auth, {
    GET: async (req, res) => {
      const cluster = await clusters.show(db, actingOf(req, res), req.params.id);
      send(req, res, 200, clusterJson(cluster, cluster));
    },
    PATCH: async (req, res) => {
      const patchOf = async (current: Cluster) =>
        validate<ClusterPatchInput>(
          clusterPatchSchema,
          dropUnchangedReadOnly(await parseBody(req, clustersResource), clusterReadOnly(current)),
        );
      const cluster = await clusters.update(db, actingOf(req, res), req.params.id, patchOf);
      send(req, res, 202, clusterJson(cluster, cluster));
    },
    DELETE: async (req, res) => {
      await clusters.remove(db, actingOf(req, res), req.params.id);
      res.status(204).end();
    },
  });

  return router;
}
