import type { RingPlan, RingPlanDevice } from '../api';
import { replicationSeconds, type ReplicationRate } from './what-if';

/**
 * A computed ring plan (Swift's ring builder, on the ring host) as the What-if panel shows it.
 * Every figure here is Swift's or recon's, read from the plan; nothing is estimated, except where
 * a name says so (`replicationSeconds`).
 */

export interface PlanFillRow {
  key: string;
  id: number;
  zone: number;
  /** In the ring before the change (false: the plan adds it). */
  existing: boolean;
  weight: number;
  weightAfter: number;
  parts: number;
  partsAfter: number;
  /** Used / size from recon when the plan was made; null without usage. */
  pct: number | null;
  /** The plan's projected_used_pct. */
  pctAfter: number | null;
  usedAfter: number | null;
}

export const deviceKey = (d: Pick<RingPlanDevice, 'ip' | 'port' | 'device'>): string => `${d.ip}:${d.port}/${d.device}`;

/** Today's fill of a device in the plan: its used bytes over its size, both from recon. */
function pctToday(d: RingPlanDevice): number | null {
  if (d.used_bytes === null || !d.size_bytes) return null;
  return (100 * d.used_bytes) / d.size_bytes;
}

/**
 * The devices of a plan, those the change touches first (weight or partitions change), then the
 * fullest after; `limit` rows.
 */
export function planFillRows(plan: RingPlan, limit: number): PlanFillRow[] {
  const changed = (d: RingPlanDevice) => d.weight !== d.weight_after || d.parts !== d.parts_after;
  return [...plan.plan.devices]
    .sort(
      (a, b) =>
        Number(changed(b)) - Number(changed(a)) ||
        (b.projected_used_pct ?? -1) - (a.projected_used_pct ?? -1) ||
        a.id - b.id,
    )
    .slice(0, limit)
    .map((d) => ({
      key: deviceKey(d),
      id: d.id,
      zone: d.zone,
      existing: d.parts > 0 || d.weight > 0,
      weight: d.weight,
      weightAfter: d.weight_after,
      parts: d.parts,
      partsAfter: d.parts_after,
      pct: pctToday(d),
      pctAfter: d.projected_used_pct,
      usedAfter: d.projected_used_bytes,
    }));
}

/** Nodes (ip:port) that receive partitions: they write the moved bytes, in parallel. */
export function receivingNodes(plan: RingPlan): number {
  const nodes = new Set(plan.plan.devices.filter((d) => d.parts_after > d.parts).map((d) => `${d.ip}:${d.port}`));
  return nodes.size;
}

/**
 * An estimate: the plan's partition replicas (measured rate) or bytes (assumed rate) to move by
 * its receiving nodes, over its estimated steps (what-if.ts' replicationSeconds); null when no node
 * receives anything, or the rate is assumed and the plan has no usage.
 */
export function replicationSecondsEstimate(plan: RingPlan, rate: ReplicationRate): number | null {
  return replicationSeconds(rate, {
    partReplicas: plan.replicas_moved,
    bytes: plan.bytes_to_move,
    nodes: receivingNodes(plan),
    steps: plan.steps_estimated,
  });
}

/** How an operator tells plans apart in a list: its name (or id), ring, seed and when. */
export function planLabel(p: RingPlan): string {
  const when = (p.computed_at ?? p.created_at).replace('T', ' ').replace(/:\d\d(\.\d+)?Z$/, ' UTC');
  return `${p.name ?? `plan ${p.id}`} — ${p.ring}, seed ${p.seed}, ${when}`;
}
