import { Router, type RequestHandler } from 'express';
import { RING_PLAN_BODY_LIMIT } from '@cairn/domain';
import type { Db } from '../db/database';
import { actingOf } from '../http/acting';
import { parseBody } from '../http/body';
import { EXACT_ONLY, NUMBER_LOOKUPS, STRING_LOOKUPS, type Lookup, type ResourceDef } from '../http/resource';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { INT8_MAX } from '../resources/uris';
import * as ringPlans from '../services/ring-plans';
import { ringPlanUri, ringPlansUri, type RingPlan } from '../services/ring-plans';
import { sendList } from './list';

const TIME_LOOKUPS: readonly Lookup[] = ['exact', 'gt', 'gte', 'lt', 'lte'];

export const ringPlansResource: ResourceDef = {
  name: 'ring_plans',
  alias: 'p',
  listMethods: ['GET', 'POST'],
  detailMethods: ['GET'],
  fields: {
    id: {
      type: 'string',
      help: 'Id of this plan (a bigint, always a string).',
      readonly: true,
      unique: true,
      column: 'id',
      filtering: NUMBER_LOOKUPS,
      max: INT8_MAX,
      ordering: true,
    },
    name: {
      type: 'string',
      help: 'The name the ring host gave it: the plan file without .json (cairn rings plan --save), or --name.',
      nullable: true,
      column: 'name',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    plan: {
      type: 'dict',
      help: "The plan JSON as `cairn rings plan -o json` prints it (docs/rings.md): Swift's figures for the whole change, each device's weight, partitions and projected fill, the steps computed so far.",
    },
    ring: {
      type: 'string',
      help: "The plan's ring: 'account', 'container', 'object' or 'object-<n>'.",
      readonly: true,
      column: 'ring',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    seed: { type: 'integer', help: 'The rebalance seed the plan was computed with.', readonly: true },
    swift_version: {
      type: 'string',
      help: 'The version of Swift whose ring builder computed the plan.',
      readonly: true,
      column: 'swift_version',
      filtering: EXACT_ONLY,
    },
    computed_at: {
      type: 'datetime',
      help: 'When the ring host computed the plan; null for a plan file that does not say.',
      readonly: true,
      nullable: true,
    },
    parts_total: { type: 'integer', help: "The ring's partitions.", readonly: true },
    parts_moved: {
      type: 'integer',
      help: 'Partitions with at least one replica reassigned by the whole change, as Swift counts them.',
      readonly: true,
    },
    parts_moved_pct: { type: 'float', help: 'parts_moved in percent of parts_total.', readonly: true },
    replicas_moved: { type: 'integer', help: 'Partition replicas that change device.', readonly: true },
    bytes_to_move: {
      type: 'integer',
      help: "Bytes the whole change moves, from the devices' recon usage; null when the plan had no usage.",
      readonly: true,
      nullable: true,
    },
    device_count: { type: 'integer', help: 'Devices in the plan (after the change).', readonly: true },
    steps_computed: {
      type: 'integer',
      help: 'Gradual steps the plan holds, each computed by Swift (the plan computes step 1).',
      readonly: true,
    },
    steps_estimated: {
      type: 'integer',
      help: 'How many steps the whole change takes if each moves as much as step 1: an estimate.',
      readonly: true,
    },
    created_by: { type: 'string', help: 'The operator who stored it.', readonly: true },
    created_at: {
      type: 'datetime',
      help: 'When it was stored.',
      readonly: true,
      column: 'created_at',
      filtering: TIME_LOOKUPS,
      ordering: true,
    },
    resource_uri: { type: 'string', help: 'URI of this plan.', readonly: true },
  },
};

export const ringPlanJson = (p: RingPlan) => ({
  bytes_to_move: p.bytesToMove,
  computed_at: p.computedAt === null ? null : p.computedAt.toISOString(),
  created_at: p.createdAt.toISOString(),
  created_by: p.createdBy,
  device_count: p.deviceCount,
  id: p.id,
  name: p.name,
  parts_moved: p.partsMoved,
  parts_moved_pct: p.partsMovedPct,
  parts_total: p.partsTotal,
  plan: p.plan,
  replicas_moved: p.replicasMoved,
  resource_uri: ringPlanUri(p.clusterId, p.id),
  ring: p.ring,
  seed: p.seed,
  steps_computed: p.stepsComputed,
  steps_estimated: p.stepsEstimated,
  swift_version: p.swiftVersion,
});

export function ringPlansRouter(db: Db, auth: RequestHandler): Router {
  const router = Router();

  resourceRoute(router, '/clusters/:id/ring_plans/', auth, {
    GET: async (req, res) => {
      const cluster = await ringPlans.visibleCluster(db, actingOf(req, res), req.params.id);
      await sendList(
        req,
        res,
        ringPlansResource,
        ringPlansUri(cluster.id),
        (q) => ringPlans.list(db, cluster, q),
        ringPlanJson,
      );
    },
    POST: async (req, res) => {
      const plan = await ringPlans.create(db, actingOf(req, res), req.params.id, () =>
        parseBody(req, ringPlansResource, RING_PLAN_BODY_LIMIT),
      );
      res.setHeader('Location', ringPlanUri(plan.clusterId, plan.id));
      send(req, res, 201, ringPlanJson(plan));
    },
  });

  resourceRoute(router, '/clusters/:id/ring_plans/:plan/', auth, {
    GET: async (req, res) =>
      send(req, res, 200, ringPlanJson(await ringPlans.show(db, actingOf(req, res), req.params.id, req.params.plan))),
  });

  return router;
}
