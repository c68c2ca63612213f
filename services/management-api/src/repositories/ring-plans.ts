import type { Knex } from 'knex';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { listPage } from './list-planner';
import type { ListQuery, Page } from './list-types';

/** SQL of the ring plans of clusters (migration 20261129020000_ring_plans). */

const TABLE = 'ring_plans';

export interface RingPlan {
  id: string;
  clusterId: number;
  name: string | null;
  ring: string;
  seed: number;
  swiftVersion: string;
  computedAt: Date | null;
  partsTotal: number;
  partsMoved: number;
  partsMovedPct: number;
  replicasMoved: number;
  bytesToMove: number | null;
  deviceCount: number;
  stepsComputed: number;
  stepsEstimated: number;
  plan: Record<string, unknown>;
  createdBy: string;
  createdById: number | null;
  createdAt: Date;
}

export type NewRingPlan = Omit<RingPlan, 'id' | 'createdAt'>;

const COLUMNS = [
  'p.id',
  'p.cluster_id',
  'p.name',
  'p.ring',
  'p.seed',
  'p.swift_version',
  'p.computed_at',
  'p.parts_total',
  'p.parts_moved',
  'p.parts_moved_pct',
  'p.replicas_moved',
  'p.bytes_to_move',
  'p.device_count',
  'p.steps_computed',
  'p.steps_estimated',
  'p.plan',
  'p.created_by',
  'p.created_by_id',
  'p.created_at',
];

const numberOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const toPlan = (r: Record<string, unknown>): RingPlan => ({
  id: String(r.id),
  clusterId: Number(r.cluster_id),
  name: r.name === null ? null : String(r.name),
  ring: String(r.ring),
  seed: Number(r.seed),
  swiftVersion: String(r.swift_version),
  computedAt: r.computed_at === null ? null : new Date(r.computed_at as string),
  partsTotal: Number(r.parts_total),
  partsMoved: Number(r.parts_moved),
  partsMovedPct: Number(r.parts_moved_pct),
  replicasMoved: Number(r.replicas_moved),
  bytesToMove: numberOrNull(r.bytes_to_move),
  deviceCount: Number(r.device_count),
  stepsComputed: Number(r.steps_computed),
  stepsEstimated: Number(r.steps_estimated),
  // pg gives jsonb parsed; PGlite may give it as text.
  plan: (typeof r.plan === 'string' ? JSON.parse(r.plan) : r.plan) as Record<string, unknown>,
  createdBy: String(r.created_by),
  createdById: numberOrNull(r.created_by_id),
  createdAt: new Date(r.created_at as string),
});

/** One page of a cluster's plans, newest first unless the query orders them. */
export async function listRingPlans(db: Db, clusterId: number, query: ListQuery): Promise<Page<RingPlan>> {
  return withDbErrors(async () => {
    const page = await listPage<Record<string, unknown>>(
      {
        db,
        table: TABLE,
        alias: 'p',
        columns: COLUMNS,
        scope: (qb: Knex.QueryBuilder) => void qb.where('p.cluster_id', clusterId),
        defaultOrdering: [{ alias: 'p', column: 'created_at', desc: true }],
      },
      query,
    );
    return { total: page.total, rows: page.rows.map(toPlan) };
  });
}

export async function getRingPlan(db: Db, clusterId: number, id: string): Promise<RingPlan | null> {
  const row = await withDbErrors(() =>
    db(`${TABLE} as p`).select(COLUMNS).where({ 'p.cluster_id': clusterId, 'p.id': id }).first(),
  );
  return row ? toPlan(row as Record<string, unknown>) : null;
}

export async function insertRingPlan(trx: Db, p: NewRingPlan): Promise<RingPlan> {
  return withDbErrors(async () => {
    const [row] = (await trx(TABLE)
      .insert({
        cluster_id: p.clusterId,
        name: p.name,
        ring: p.ring,
        seed: p.seed,
        swift_version: p.swiftVersion,
        computed_at: p.computedAt,
        parts_total: p.partsTotal,
        parts_moved: p.partsMoved,
        parts_moved_pct: p.partsMovedPct,
        replicas_moved: p.replicasMoved,
        bytes_to_move: p.bytesToMove,
        device_count: p.deviceCount,
        steps_computed: p.stepsComputed,
        steps_estimated: p.stepsEstimated,
        plan: JSON.stringify(p.plan),
        created_by: p.createdBy,
        created_by_id: p.createdById,
      })
      .returning(COLUMNS.map((c) => c.slice(2)))) as Record<string, unknown>[];
    return toPlan(row!);
  });
}
