import { Router, type RequestHandler } from 'express';
import { validateDeviceReport } from '@cairn/domain';
import type { Db } from '../db/database';
import { parseBody } from '../http/body';
import { queryPairs } from '../http/filters';
import { EXACT_ONLY, NUMBER_LOOKUPS, STRING_LOOKUPS, type ResourceDef } from '../http/resource';
import { INT8_MAX, API_ROOT } from '../resources/uris';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import type { StoredDevice } from '../services/devices';
import * as devices from '../services/devices';
import { actingOf } from '../http/acting';
import { sendList } from './list';
import { capacityHistoryJson } from '../resources/representations';

export const devicesResource: ResourceDef = {
  name: 'devices',
  alias: 'd',
  listMethods: ['GET', 'PUT'],
  detailMethods: [],
  fields: {
    node: {
      type: 'string',
      help: 'Storage node, e.g. "10.0.0.5:6200".',
      column: 'node',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    device: {
      type: 'string',
      help: 'Device name on the node, e.g. "sdb1".',
      column: 'device',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    policies: {
      type: 'list',
      help: 'Names of the storage policies whose object rings list the device (filter: ?policy=<name>).',
    },
    size_bytes: {
      type: 'integer',
      help: 'Device size, when known.',
      nullable: true,
      column: 'size_bytes',
      filtering: NUMBER_LOOKUPS,
      max: INT8_MAX,
      ordering: true,
    },
    used_bytes: {
      type: 'integer',
      help: 'Bytes in use; null when the device reports no usage.',
      nullable: true,
      column: 'used_bytes',
      filtering: NUMBER_LOOKUPS,
      max: INT8_MAX,
      ordering: true,
    },
    avail_bytes: {
      type: 'integer',
      help: 'Bytes available to unprivileged users; null when the device reports no usage.',
      nullable: true,
      column: 'avail_bytes',
      filtering: NUMBER_LOOKUPS,
      max: INT8_MAX,
      ordering: true,
    },
    mounted: {
      type: 'boolean',
      help: 'Whether the device was mounted when reported.',
      column: 'mounted',
      filtering: EXACT_ONLY,
      ordering: true,
    },
    reported_at: { type: 'datetime', help: 'When the report that holds this device arrived.' },
  },
};

/** A report of 1,000,000 devices is about 150 MB of JSON; this route alone accepts that much. */
export const DEVICE_REPORT_LIMIT = '200mb';

const deviceJson = (d: StoredDevice, names: Map<number, string>) => ({
  avail_bytes: d.availBytes,
  device: d.device,
  mounted: d.mounted,
  node: d.node,
  policies: d.policyIndexes.map((i) => names.get(i) ?? String(i)),
  reported_at: d.reportedAt.toISOString(),
  size_bytes: d.sizeBytes,
  used_bytes: d.usedBytes,
});

export function devicesRouter(db: Db, auth: RequestHandler): Router {
  const router = Router();

  resourceRoute(router, '/clusters/:id/devices/', auth, {
    GET: async (req, res) => {
      const { cluster, policies } = await devices.clusterWithPolicies(db, actingOf(req, res), req.params.id);
      const names = new Map(policies.map((p) => [p.index, p.name]));
      const policyName = queryPairs(req.originalUrl)
        .filter(([k]) => k === 'policy')
        .pop()?.[1];
      const policyIndex =
        policyName === undefined ? undefined : (policies.find((p) => p.name === policyName)?.index ?? -1);
      await sendList(
        req,
        res,
        devicesResource,
        `${API_ROOT}/clusters/${cluster.id}/devices/`,
        (q) => devices.list(db, cluster, q, policyIndex),
        (d) => deviceJson(d, names),
      );
    },
    PUT: async (req, res) => {
      await devices.replaceReport(db, actingOf(req, res), req.params.id, async () =>
        validateDeviceReport(await parseBody(req, undefined, DEVICE_REPORT_LIMIT)),
      );
      res.status(204).end();
    },
  });

  resourceRoute(router, '/clusters/:id/capacity/list/', auth, {
    GET: async (req, res) =>
      send(req, res, 200, { capacity: await devices.capacity(db, actingOf(req, res), req.params.id) }),
  });

  resourceRoute(router, '/clusters/:id/capacity/history/', auth, {
    GET: async (req, res) => {
      const params = queryPairs(req.originalUrl);
      const last = (key: string) => params.filter(([k]) => k === key).pop()?.[1];
      const h = await devices.history(db, actingOf(req, res), req.params.id, last('start'), last('end'), new Date());
      send(req, res, 200, capacityHistoryJson(h));
    },
  });

  return router;
}
