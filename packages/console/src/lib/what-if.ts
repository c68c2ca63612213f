import { projectThreshold, type Projection, type Sample } from './projection';

/**
 * The capacity page's "What if": the console's own estimate of adding devices to a ring set (or
 * one of its zones) or draining one, and of how long the move takes at the cluster's measured
 * replication rate, before anyone asks Swift. Swift's ring builder places partitions in proportion to
 * device weight within the limits of dispersion; here weight = the device's raw size, and every
 * device's bytes are taken to follow its partitions. So this is an estimate: a ring plan computed
 * by Swift's own builder (`cairn rings plan`) gives the exact figures.
 */

/** A region and zone of the ring, as swift-ring-builder writes it: r1z2. */
export interface Zone {
  region: number;
  zone: number;
}

export const zoneLabel = (z: Zone | null): string => (z ? `r${z.region}z${z.zone}` : 'zone unknown');

export interface WhatIfDevice {
  /** node/device, unique in a cluster. */
  key: string;
  node: string;
  device: string;
  /** Raw bytes (used + free): the weight the projection gives the device. */
  weight: number;
  used: number;
  /** Its region and zone in the cluster's stored ring; null when no stored ring lists it. */
  zone: Zone | null;
}

export type Change =
  { kind: 'add'; count: number; sizeBytes: number; nodes: number; zone: Zone | null } | { kind: 'drain'; key: string };

/**
 * How fast data moves: measured from the cluster's last completed object replication passes
 * (recon), or, without a measurement, the operator's assumption in bytes per second.
 */
export type ReplicationRate =
  ({ kind: 'measured' } & MeasuredRate) | { kind: 'assumed'; bytesPerSecondPerNode: number };

export interface WhatIfOptions {
  /** 2^partPower partitions in the ring. */
  partPower: number;
  replicas: number;
  /** Share of the ring's partition replicas one step moves, in percent. */
  stepPct: number;
  rate: ReplicationRate;
}

export const DEFAULT_STEP_PCT = 5;

export interface ProjectedDevice {
  key: string;
  node: string;
  device: string;
  zone: Zone | null;
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
  /** At the options' rate (replicationSeconds); Infinity when it cannot be told. */
  seconds: number;
  /** Which rate `seconds` is at. */
  rate: ReplicationRate['kind'];
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
 *
 * Adding to one zone changes none of this: with overload 0 (swift-ring-builder's default) Swift's
 * builder targets each device's share of weight whatever its zone, so the zone's existing devices
 * empty by the same factor as every other device. What a zone changes is dispersion (zoneFill).
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
        zone: change.zone,
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
  const steps = perStep > 0 ? Math.ceil(partsToMove / perStep - 1e-9) : 0;
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
    steps,
    nodesInParallel,
    seconds:
      replicationSeconds(o.rate, { partReplicas: partsToMove, bytes: bytesToMove, nodes: nodesInParallel, steps }) ??
      Infinity,
    rate: o.rate.kind,
  };
}

const existing = (d: WhatIfDevice, weightAfter: number, usedAfter: number): ProjectedDevice => ({
  key: d.key,
  node: d.node,
  device: d.device,
  zone: d.zone,
  isNew: false,
  weight: d.weight,
  weightAfter,
  used: d.used,
  usedAfter,
  pct: d.weight > 0 ? (d.used / d.weight) * 100 : null,
  pctAfter: weightAfter > 0 ? (usedAfter / weightAfter) * 100 : null,
});

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

export interface ZoneFill {
  zone: Zone | null;
  devices: number;
  newDevices: number;
  weight: number;
  weightAfter: number;
  used: number;
  usedAfter: number;
  pct: number | null;
  pctAfter: number | null;
  /**
   * Replicas of each partition the zone's weight asks for, replicas × zone weight ÷ total weight
   * (Swift's builder's "weighted replicas" of a tier): above 1, some partitions have two replicas
   * in the zone, below 1 some have none.
   */
  replicasWanted: number;
  replicasWantedAfter: number;
}

/**
 * A projection summed per zone, zones in region and zone order (devices of no known zone last). A
 * zone whose weight asks for more than one replica of each partition while there are at least as
 * many zones as replicas has worse dispersion than the ring could have: Swift would then, within
 * its overload, keep replicas in other zones, so the zone's figures are the least certain.
 */
export function zoneFill(w: WhatIf, replicas: number): ZoneFill[] {
  const groups = new Map<string, ProjectedDevice[]>();
  for (const d of w.devices) {
    const k = zoneLabel(d.zone);
    groups.set(k, [...(groups.get(k) ?? []), d]);
  }
  return [...groups.values()]
    .map((ds) => {
      const weight = sum(ds.map((d) => d.weight));
      const weightAfter = sum(ds.map((d) => d.weightAfter));
      const used = sum(ds.map((d) => d.used));
      const usedAfter = sum(ds.map((d) => d.usedAfter));
      return {
        zone: ds[0]!.zone,
        devices: ds.length,
        newDevices: ds.filter((d) => d.isNew).length,
        weight,
        weightAfter,
        used,
        usedAfter,
        pct: weight > 0 ? (used / weight) * 100 : null,
        pctAfter: weightAfter > 0 ? (usedAfter / weightAfter) * 100 : null,
        replicasWanted: w.rawBefore > 0 ? (replicas * weight) / w.rawBefore : 0,
        replicasWantedAfter: w.rawAfter > 0 ? (replicas * weightAfter) / w.rawAfter : 0,
      };
    })
    .sort(
      (a, b) =>
        Number(a.zone === null) - Number(b.zone === null) ||
        (a.zone?.region ?? 0) - (b.zone?.region ?? 0) ||
        (a.zone?.zone ?? 0) - (b.zone?.zone ?? 0),
    );
}

/**
 * The zones whose weight after the change asks for two replicas of some partitions, when the ring
 * has zones enough not to.
 */
export function crowdedZones(zones: readonly ZoneFill[], replicas: number): ZoneFill[] {
  const known = zones.filter((z) => z.zone !== null && z.weightAfter > 0);
  return known.length >= replicas ? known.filter((z) => z.replicasWantedAfter > 1 + 1e-9) : [];
}

/**
 * The region and zone of each device (`ip:port/device`, the devices API's node/device) in the
 * cluster's current object rings (object, object-1, …): a device is in the same zone in each of
 * them, so the first ring that lists it says.
 */
export function zonesOfRings(
  rings: ReadonlyArray<{
    ring: string;
    current: boolean;
    devices: ReadonlyArray<{ region: number; zone: number; ip: string; port: number; device: string }> | null;
  }>,
): Map<string, Zone> {
  const zones = new Map<string, Zone>();
  const objectRings = rings
    .filter((r) => r.current && /^object(-\d+)?$/.test(r.ring))
    .sort((a, b) => a.ring.localeCompare(b.ring, undefined, { numeric: true }));
  for (const r of objectRings)
    for (const d of r.devices ?? []) {
      const key = `${d.ip}:${d.port}/${d.device}`;
      if (!zones.has(key)) zones.set(key, { region: d.region, zone: d.zone });
    }
  return zones;
}

/** A node's last completed replication pass, as the health API reports it (replication_passes). */
export interface ReplicationPass {
  node: string;
  /** When it ended, ms since the epoch. */
  endedAt: number;
  seconds: number | null;
  partitions: number | null;
}

export interface MeasuredRate {
  /** Partition replicas a node's replicator goes through per second, pooled over the passes. */
  partitionsPerSecondPerNode: number;
  /** Passes (one per node) the rate is measured over. */
  passes: number;
  /** When the earliest and the latest of them ended, ms since the epoch. */
  from: number;
  to: number;
  /** The longest of them, in seconds: the least time a step takes (apply waits for a pass after each). */
  longestPassSeconds: number;
}

/** Each node's last completed pass of a server type's replicator, from the health API's nodes. */
export function passesOf(
  nodes: ReadonlyArray<{
    node: string;
    replication_passes?: Record<string, { ended_at: string; seconds: number | null; partitions: number | null } | null>;
  }>,
  type = 'object',
): ReplicationPass[] {
  return nodes.flatMap((n) => {
    const p = n.replication_passes?.[type];
    return p ? [{ node: n.node, endedAt: Date.parse(p.ended_at), seconds: p.seconds, partitions: p.partitions }] : [];
  });
}

/**
 * The cluster's replication rate from each node's last completed pass: the partitions all the
 * passes attempted over the seconds they took together, so a node with a long pass weighs as much
 * as its time. Passes without a length or a count, or of no time, say nothing; null when none does.
 */
export function measuredRate(passes: readonly ReplicationPass[]): MeasuredRate | null {
  const usable = passes.filter(
    (p): p is ReplicationPass & { seconds: number; partitions: number } =>
      p.seconds !== null && p.seconds > 0 && p.partitions !== null && p.partitions >= 0,
  );
  const partitions = sum(usable.map((p) => p.partitions));
  const seconds = sum(usable.map((p) => p.seconds));
  if (usable.length === 0 || partitions <= 0 || !(seconds > 0)) return null;
  return {
    partitionsPerSecondPerNode: partitions / seconds,
    passes: usable.length,
    from: Math.min(...usable.map((p) => p.endedAt)),
    to: Math.max(...usable.map((p) => p.endedAt)),
    longestPassSeconds: Math.max(...usable.map((p) => p.seconds)),
  };
}

/**
 * How long moving takes, an estimate either way. Measured: the partition replicas to move at the
 * measured partitions per second of each node moving data, and never less than one of the
 * cluster's longest passes per step, since each step waits for a completed pass. Assumed: the
 * bytes to move at the assumed bytes per second of each node. Null when it cannot be told (no
 * node moves anything, or no bytes are known for an assumed rate).
 */
export function replicationSeconds(
  rate: ReplicationRate,
  work: { partReplicas: number; bytes: number | null; nodes: number; steps: number },
): number | null {
  if (!(work.nodes > 0)) return null;
  if (rate.kind === 'measured')
    return Math.max(
      work.partReplicas / (rate.partitionsPerSecondPerNode * work.nodes),
      work.steps * rate.longestPassSeconds,
    );
  if (work.bytes === null || !(rate.bytesPerSecondPerNode > 0)) return null;
  return work.bytes / (rate.bytesPerSecondPerNode * work.nodes);
}

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

/** A stored ring's partition geometry: what the panel's partition counts follow. */
export interface RingGeometry {
  ring: string;
  version: number;
  partPower: number;
  /** May be fractional (2.5), as Swift allows. */
  replicas: number;
}

/**
 * The cluster's current object rings (object, object-1, …, in policy order) that list any of a ring
 * set's devices (`ip:port/device`): the rings whose partitions a change of those devices moves.
 */
export function ringsOfSet(
  rings: ReadonlyArray<{
    ring: string;
    version: number;
    current: boolean;
    part_power: number;
    replicas: number;
    devices: ReadonlyArray<{ ip: string; port: number; device: string }> | null;
  }>,
  deviceKeys: Iterable<string>,
): RingGeometry[] {
  const keys = new Set(deviceKeys);
  return rings
    .filter((r) => r.current && /^object(-\d+)?$/.test(r.ring))
    .filter((r) => (r.devices ?? []).some((d) => keys.has(`${d.ip}:${d.port}/${d.device}`)))
    .sort((a, b) => a.ring.localeCompare(b.ring, undefined, { numeric: true }))
    .map((r) => ({ ring: r.ring, version: r.version, partPower: r.part_power, replicas: r.replicas }));
}

/**
 * The ring whose geometry the projection uses: the one ring, or of several (policies sharing the
 * devices) the one with the most partition replicas, the most work to move; the share of weight
 * that changes hands, and so the steps, are the same in each. Null when no ring is stored.
 */
export function projectionRing(rings: readonly RingGeometry[]): RingGeometry | null {
  const replicasOf = (r: RingGeometry) => 2 ** r.partPower * r.replicas;
  return rings.reduce<RingGeometry | null>((a, r) => (a === null || replicasOf(r) > replicasOf(a) ? r : a), null);
}
