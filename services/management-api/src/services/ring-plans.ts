import {
  errors,
  escapeHtml,
  validate,
  ringPlanCreateSchema,
  type Cluster,
  type RingPlanCreateInput,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { API_ROOT, parseBigId } from '../resources/uris';
import { recordAudit, type AuditTarget } from '../repositories/audit';
import { getCluster } from '../repositories/clusters';
import type { ListQuery, Page } from '../repositories/list-types';
import { getRingPlan, insertRingPlan, listRingPlans, type RingPlan } from '../repositories/ring-plans';
import { findVisibleCluster } from './clusters';
import { auditActorOf, type Acting } from './context';
import { requireWriterOn } from './policy';

export type { RingPlan };

/**
 * Ring plans computed on a ring host by Swift's ring builder (`cairn rings plan --cluster`), kept
 * per cluster for the console's "What if" panel. The API computes nothing: it checks the plan's
 * shape and bounds and keeps it as sent; a plan is never changed once stored.
 */

export const ringPlansUri = (clusterId: number): string => `${API_ROOT}/clusters/${clusterId}/ring_plans/`;
export const ringPlanUri = (clusterId: number, id: string): string => `${ringPlansUri(clusterId)}${id}/`;

/** What the audit trail keeps of a plan: its figures, not its devices. */
const summary = (p: RingPlan) => ({
  name: p.name,
  ring: p.ring,
  seed: p.seed,
  swift_version: p.swiftVersion,
  parts_moved: p.partsMoved,
  bytes_to_move: p.bytesToMove,
  device_count: p.deviceCount,
  steps_computed: p.stepsComputed,
});

const planTarget = (cluster: Cluster, p: RingPlan): AuditTarget => ({
  type: 'ring_plans',
  id: p.id,
  name: `${cluster.name}/${p.ring}/${p.name ?? p.id}`,
  uri: ringPlanUri(cluster.id, p.id),
});

/** The cluster a path names, if the operator may see it (its plans are then listed). */
export const visibleCluster = (db: Db, acting: Acting, rawId: string | undefined): Promise<Cluster> =>
  findVisibleCluster(db, acting.operator, rawId);

export const list = (db: Db, cluster: Cluster, query: ListQuery): Promise<Page<RingPlan>> =>
  listRingPlans(db, cluster.id, query);

export async function show(
  db: Db,
  acting: Acting,
  rawClusterId: string | undefined,
  rawId: string | undefined,
): Promise<RingPlan> {
  const cluster = await findVisibleCluster(db, acting.operator, rawClusterId);
  const id = parseBigId(rawId);
  const plan = id === null ? null : await getRingPlan(db, cluster.id, id);
  if (!plan)
    throw errors.notFound(`Cluster '${escapeHtml(cluster.name)}' has no ring plan '${escapeHtml(rawId ?? '')}'.`);
  return plan;
}

/**
 * Stores a plan for a cluster the operator may write to. `bodyOf` reads the body only once the
 * writer is allowed: a reader gets 403 whatever it sends.
 */
export async function create(
  db: Db,
  acting: Acting,
  rawClusterId: string | undefined,
  bodyOf: () => Promise<unknown>,
): Promise<RingPlan> {
  const cluster = await findVisibleCluster(db, acting.operator, rawClusterId);
  requireWriterOn(acting.operator, cluster.id);
  const { name, plan } = validate<RingPlanCreateInput>(ringPlanCreateSchema, await bodyOf());
  const actor = auditActorOf(acting);
  return withDbErrors(() =>
    db.transaction(async (trx) => {
      if (!(await getCluster(trx, cluster.id))) throw errors.notFound(`No cluster with id '${cluster.id}'.`);
      const stored = await insertRingPlan(trx, {
        clusterId: cluster.id,
        name: name ?? null,
        ring: plan.ring,
        seed: plan.seed,
        swiftVersion: plan.swift_version,
        computedAt: plan.computed_at === undefined ? null : new Date(plan.computed_at),
        partsTotal: plan.parts_total,
        partsMoved: plan.parts_moved,
        partsMovedPct: plan.parts_moved_pct,
        replicasMoved: plan.replicas_moved,
        bytesToMove: plan.bytes_to_move,
        deviceCount: plan.devices.length,
        stepsComputed: plan.steps.length,
        stepsEstimated: plan.steps_estimated,
        plan,
        createdBy: actor.operatorName,
        createdById: actor.operatorId,
      });
      await recordAudit(trx, actor, {
        action: 'create',
        target: planTarget(cluster, stored),
        before: null,
        after: summary(stored),
      });
      return stored;
    }),
  );
}
