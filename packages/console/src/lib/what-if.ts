import { projectThreshold, type Projection, type Sample } from './projection';

/**
 * The capacity page's "What if": the console's own estimate of adding devices to a ring set or
 * draining one, before anyone asks Swift. Swift's ring builder places partitions in proportion to
 * device weight within the limits of dispersion; here weight = the device's raw size, and every
 * device's bytes are taken to follow its partitions. So this is an estimate: a ring plan computed
 * by Swift's own builder (`cairn rings plan`) gives the exact figures.
 */

export interface WhatIfDevice {
  /** node/device, unique in a cluster. */
  key: string;
  node: string;
  device: string;
  /** Raw bytes (used + free): the weight the projection gives the device. */
  weight: number;
  used: number;
}

export type Change = { kind: 'add'; count: number; sizeBytes: number; nodes: number } | { kind: 'drain'; key: string };

export interface WhatIfOptions {
  /** 2^partPower partitions in the ring. */
  partPower: number;
  replicas: number;
  /** Share of the ring's partition replicas one step moves, in percent. */
  stepPct: number;
  /** Bytes a node replicates per second: an operator's assumption, the API does not know it. */
  bytesPerSecondPerNode: number;
}

export const DEFAULT_STEP_PCT = 5;

export interface ProjectedDevice {
  key: string;
  node: string;
  device: string;
  isNew: boolean;
  weight: number;
  weightAfter: number;
  used: number;
  usedAfter: number;
  /** Percent used today; null for a device to be added. */
  pct: number | null;
  /** Percent used after; null for the drained device (it holds nothing, of no weight). */
  pctAfter: number | null;
}

export interface WhatIf {
  devices: ProjectedDevice[];
  rawBefore: number;
  rawAfter: number;
  usedTotal: number;
  /** The share of weight that changes hands, 0…1. */
  shareMoved: number;
  parts: number;
  /** Partition replicas: parts × replicas. */
  partReplicas: number;
  partsToMove: number;
  bytesToMove: number;
  steps: number;
  /** Nodes moving data at once: the receiving nodes of an addition, the one sending node of a drain. */
  nodesInParallel: number;
  seconds: number;
}

/**
 * Projects a change of a ring set's devices. With W the total weight before and W' after, and each
 * device's share s = w / W:
 *
 *   share of weight that changes hands = Σ max(0, s'ᵢ − sᵢ)  (what the gaining devices gain)
 *   partitions to move ≈ share × parts × replicas          (parts = 2^part power)
 *   steps = ⌈partitions to move ÷ (step % × parts × replicas)⌉
 *
 * Adding weight A: every existing device keeps W / W' of its partitions and of its bytes, so its
 * fill falls by that factor; the used bytes moved, used × A / W', go to the new devices in
 * proportion to their weight. Draining a device: its bytes go to the others in proportion to their
 * weight, and exactly its bytes move. Bytes are conserved either way.
 */
export function projectChange(devices: readonly WhatIfDevice[], change: Change, o: WhatIfOptions): WhatIf {
  const rawBefore = sum(devices.map((d) => d.weight));
  const usedTotal = sum(devices.map((d) => d.used));
  const parts = 2 ** o.partPower;
  const partReplicas = parts * o.replicas;
  let projected: ProjectedDevice[];
  let bytesToMove: number;
  let nodesInParallel: number;
  if (change.kind === 'add') {
    const added = change.count * change.sizeBytes;
    const rawAfter = rawBefore + added;
    const keep = rawAfter > 0 ? rawBefore / rawAfter : 1;
    bytesToMove = usedTotal * (1 - keep);
    projected = devices.map((d) => existing(d, d.weight, d.used * keep));
    for (let i = 1; i <= change.count; i += 1) {
      const usedAfter = added > 0 ? (bytesToMove * change.sizeBytes) / added : 0;
      projected.push({
        key: `new-${i}`,
        node: 'new',
        device: `new device ${i}`,
        isNew: true,
        weight: 0,
        weightAfter: change.sizeBytes,
        used: 0,
        usedAfter,
        pct: null,
        pctAfter: change.sizeBytes > 0 ? (usedAfter / change.sizeBytes) * 100 : null,
      });
    }
    nodesInParallel = Math.max(1, change.nodes);
  } else {
    const drained = devices.find((d) => d.key === change.key);
    if (!drained) throw new Error(`No device ${change.key} in this ring set.`);
    const rest = rawBefore - drained.weight;
    if (rest <= 0) throw new Error(`Draining ${change.key} leaves no other device of weight to take its data.`);
    bytesToMove = drained.used;
    projected = devices.map((d) =>
      d.key === drained.key
        ? existing(d, 0, 0)
        : existing(d, d.weight, d.used + (rest > 0 ? (drained.used * d.weight) / rest : 0)),
    );
    nodesInParallel = 1;
  }
  const rawAfter = sum(projected.map((d) => d.weightAfter));
  const shareMoved =
    rawBefore > 0 && rawAfter > 0
      ? sum(projected.map((d) => Math.max(0, d.weightAfter / rawAfter - d.weight / rawBefore)))
      : 0;
  const partsToMove = Math.round(shareMoved * partReplicas);
  // A step moves at most stepPct % of the partition replicas: 25 % at 5 % a step is 5 steps.
  const perStep = (o.stepPct / 100) * partReplicas;
  const rate = o.bytesPerSecondPerNode * nodesInParallel;
  return {
    devices: projected,
    rawBefore,
    rawAfter,
    usedTotal,
    shareMoved,
    parts,
    partReplicas,
    partsToMove,
    bytesToMove,
    steps: perStep > 0 ? Math.ceil(partsToMove / perStep - 1e-9) : 0,
    nodesInParallel,
    seconds: rate > 0 ? bytesToMove / rate : Infinity,
  };
}

const existing = (d: WhatIfDevice, weightAfter: number, usedAfter: number): ProjectedDevice => ({
  key: d.key,
  node: d.node,
  device: d.device,
  isNew: false,
  weight: d.weight,
  weightAfter,
  used: d.used,
  usedAfter,
  pct: d.weight > 0 ? (d.used / d.weight) * 100 : null,
  pctAfter: weightAfter > 0 ? (usedAfter / weightAfter) * 100 : null,
});

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/**
 * When the ring set reaches `threshold` % before and after the change: the capacity page's own
 * least-squares line through its history, the same growth in bytes, against the raw capacity as
 * it is today and as it would be.
 */
export function thresholdBeforeAfter(
  samples: readonly Sample[],
  rawDelta: number,
  threshold: number,
): { before: Projection; after: Projection } {
  return {
    before: projectThreshold(samples, threshold),
    after: projectThreshold(
      samples.map((s) => ({ ...s, rawBytes: s.rawBytes + rawDelta })),
      threshold,
    ),
  };
}

/** A projection as a short cell: "2027-01-09", "not growing", "already 83.0 %", "too little history". */
export function describeWhen(p: Projection): string {
  switch (p.kind) {
    case 'at':
      return `around ${new Date(p.t).toISOString().slice(0, 10)}`;
    case 'never':
      return 'not growing';
    case 'already':
      return `already ${p.pct.toFixed(1)} %`;
    case 'insufficient':
      return 'too little history';
  }
}

/** Seconds as the panel reads them: "45 min", "7 h 30 min", "3.2 days". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds)) return '—';
  const min = Math.round(seconds / 60);
  if (min < 1) return 'under a minute';
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  return `${(seconds / 86_400).toFixed(1)} days`;
}
