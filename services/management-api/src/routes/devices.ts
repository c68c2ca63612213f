import { Router, type RequestHandler } from 'express';
import { computeCapacity, errors, validateDeviceReport } from '@cairn/domain';
import type { Db } from '../db/database';
import { operatorOf } from '../http/auth';
import { requireWriterOn } from '../services/policy';
import { parseBody } from '../http/body';
import { queryPairs } from '../http/filters';
import { EXACT_ONLY, INT8_MAX, NUMBER_LOOKUPS, STRING_LOOKUPS, type ResourceDef } from '../http/resource';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { API_ROOT } from '../http/uris';
import { deviceReportSummary, getCapacity, listDevices, listPolicies, replaceDeviceReport, type StoredDevice, type StoredPolicy } from '../repositories/devices';
import { recordAudit } from '../repositories/audit';
import { getCluster } from '../repositories/clusters';
import { actorOf, clusterTarget } from './audit';
import { findVisibleCluster } from '../services/clusters';
import { sendList } from './list';

export const devicesResource: ResourceDef = {
  name: 'devices',
  alias: 'd',
  listMethods: ['GET', 'PUT'],
  detailMethods: [],
  fields: {
    node: { type: 'string', help: 'Storage node, e.g. "10.0.0.5:6200".', column: 'node', filtering: STRING_LOOKUPS, ordering: true },
    device: { type: 'string', help: 'Device name on the node, e.g. "sdb1".', column: 'device', filtering: STRING_LOOKUPS, ordering: true },
    policies: { type: 'list', help: 'Names of the storage policies whose object rings list the device (filter: ?policy=<name>).' },
    size_bytes: { type: 'integer', help: 'Device size, when known.', nullable: true, column: 'size_bytes', filtering: NUMBER_LOOKUPS, max: INT8_MAX, ordering: true },
    used_bytes: { type: 'integer', help: 'Bytes in use; null when the device reports no usage.', nullable: true, column: 'used_bytes', filtering: NUMBER_LOOKUPS, max: INT8_MAX, ordering: true },
    avail_bytes: { type: 'integer', help: 'Bytes available to unprivileged users; null when the device reports no usage.', nullable: true, column: 'avail_bytes', filtering: NUMBER_LOOKUPS, max: INT8_MAX, ordering: true },
    mounted: { type: 'boolean', help: 'Whether the device was mounted when reported.', column: 'mounted', filtering: EXACT_ONLY, ordering: true },
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
      const op = operatorOf(res);
      const cluster = await findVisibleCluster(db, op, req.params.id);
      const policies: StoredPolicy[] = await listPolicies(db, cluster.id);
      const names = new Map(policies.map((p) => [p.index, p.name]));
      const policyName = queryPairs(req.originalUrl).filter(([k]) => k === 'policy').pop()?.[1];
      const policyIndex = policyName === undefined ? undefined : (policies.find((p) => p.name === policyName)?.index ?? -1);
      await sendList(req, res, devicesResource, `${API_ROOT}/clusters/${cluster.id}/devices/`, (q) => listDevices(db, cluster.id, q, policyIndex), (d) =>
        deviceJson(d, names),
      );
    },
    PUT: async (req, res) => {
      const op = operatorOf(res);
      const cluster = await findVisibleCluster(db, op, req.params.id);
      requireWriterOn(op, cluster.id);
      const report = validateDeviceReport(await parseBody(req));
      // Each device's policies as indexes, once: the statistics and the stored rows both use them.
      const indexOf = new Map(report.policies.map((p) => [p.name, p.index]));
      const policyIndexes = report.devices.map((d) => d.policies.map((n) => indexOf.get(n)!));
      const capacity = computeCapacity(
        report.policies,
        report.devices.map((d, i) => ({ policyIndexes: policyIndexes[i]!, usedBytes: d.usedBytes, freeBytes: d.availBytes })),
      );
      await db.transaction(async (trx) => {
        // Holding the cluster's row serialises reports for one cluster, so "before" is exact and two
        // reports never interleave their deletes and inserts.
        if (!(await getCluster(trx, cluster.id, true))) throw errors.notFound(`No cluster with id '${cluster.id}'.`);
        const before = await deviceReportSummary(trx, cluster.id);
        await replaceDeviceReport(trx, cluster.id, report, policyIndexes, capacity);
        // Counts only: a report may list a million devices.
        const after = { device_count: report.devices.length, policy_count: report.policies.length };
        const target = { ...clusterTarget(cluster), uri: `${API_ROOT}/clusters/${cluster.id}/devices/` };
        await recordAudit(trx, actorOf(req, res), { action: 'replace_devices', target, before: { ...before }, after });
      });
      res.status(204).end();
    },
  });

  resourceRoute(router, '/clusters/:id/capacity/list/', auth, {
    GET: async (req, res) => {
      const op = operatorOf(res);
      const cluster = await findVisibleCluster(db, op, req.params.id);
      send(req, res, 200, { capacity: await getCapacity(db, cluster.id) });
    },
  });

  return router;
}
