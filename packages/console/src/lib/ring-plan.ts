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

/**
 * The plan's devices before and after the change, summed: used bytes (recon's, and after the
 * plan's projected_used_bytes) over raw size (recon's size of each device of weight). Exact, but
 * for a device whose size the plan lacks (an added device recon did not report, or a plan made
 * before sizes were kept): it is sized from its weight at the bytes per unit of weight of the
 * devices that have a size (Swift's weights are proportional to size by convention; the panel's
 * estimate makes the same assumption), and counted in `sizedFromWeight`.
 */
export interface PlanCapacity {
  usedBefore: number;
  rawBefore: number;
  usedAfter: number;
  rawAfter: number;
  sizedFromWeight: number;
  /**
   * False when a device to hold data has no projection (recon did not report it): usedAfter is
   * then usedBefore, since moving conserves bytes.
   */
  usedAfterProjected: boolean;
  /** The bytes per unit of weight those devices were sized at; null when none was needed. */
  bytesPerWeight: number | null;
}

/** The plan's capacity before and after, or the sentence saying why it cannot be told. */
export function planCapacity(plan: RingPlan): PlanCapacity | string {
  const devices = plan.plan.devices;
  const holding = devices.filter((d) => d.weight > 0 || d.parts > 0);
  if (holding.some((d) => d.used_bytes === null))
    return "The plan was made without the devices' usage (--usage-from-recon), so it says nothing of how full they are.";
  const sized = devices.filter((d) => d.size_bytes && d.weight > 0);
  const weightOfSized = sized.reduce((a, d) => a + d.weight, 0);
  const bytesPerWeight = weightOfSized > 0 ? sized.reduce((a, d) => a + (d.size_bytes ?? 0), 0) / weightOfSized : null;
  let sizedFromWeight = 0;
  const sizeOf = (d: RingPlanDevice, weight: number): number | null => {
    if (d.size_bytes) return d.size_bytes;
    if (bytesPerWeight === null) return null;
    sizedFromWeight += 1;
    return weight * bytesPerWeight;
  };
  let rawBefore = 0;
  let rawAfter = 0;
  for (const d of devices) {
    const size = d.weight > 0 || d.weight_after > 0 ? sizeOf(d, Math.max(d.weight, d.weight_after)) : 0;
    if (size === null)
      return 'No device of the plan has a size (a plan made before sizes were kept), so its capacity is unknown: compute it again.';
    if (d.weight > 0) rawBefore += size;
    if (d.weight_after > 0) rawAfter += size;
  }
  const usedBefore = holding.reduce((a, d) => a + (d.used_bytes ?? 0), 0);
  // A device recon did not report has no projection; the bytes it would take are the others' loss, so the sum stays.
  const projected = devices.every((d) => d.projected_used_bytes !== null || d.weight_after === 0);
  const usedAfter = projected ? devices.reduce((a, d) => a + (d.projected_used_bytes ?? 0), 0) : usedBefore;
  return {
    usedBefore,
    rawBefore,
    usedAfter,
    rawAfter,
    sizedFromWeight,
    usedAfterProjected: projected,
    bytesPerWeight: sizedFromWeight > 0 ? bytesPerWeight : null,
  };
}

/**
 * The ring set of the capacity page whose devices the plan's existing devices are (the most of
 * them), or null when none of them reports to the page.
 */
export function ringSetOfPlan(
  plan: RingPlan,
  devices: ReadonlyArray<{ node: string; device: string; ringSet: string }>,
): string | null {
  const setOf = new Map(devices.map((d) => [`${d.node}/${d.device}`, d.ringSet]));
  const counts = new Map<string, number>();
  for (const d of plan.plan.devices) {
    const s = d.weight > 0 ? setOf.get(deviceKey(d)) : undefined;
    if (s !== undefined) counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  return [...counts].reduce<[string, number] | null>((a, c) => (a === null || c[1] > a[1] ? c : a), null)?.[0] ?? null;
}
