import {
  asyncPendingOf,
  clockOffsetMs,
  quarantinedOf,
  replicationLastOf,
  SERVER_TYPES,
  withDefaults,
  type HealthThresholds,
  type RoundNode,
  type ServerType,
} from '@cairn/domain';
import type { Db } from '../db/database';
import {
  fullestDevices,
  healthNodeFigures,
  roundIntervals,
  thresholdOverridesByCluster,
  type HealthNodeFigures,
} from '../repositories/health';

/**
 * Per-node and per-device series kept per cluster and metric, worst first. A cluster of a thousand
 * nodes with a dozen devices each would otherwise export twelve thousand fill series per API
 * replica; the worst 50 are what an alert or a top-N panel reads, and the cluster-wide figures
 * (node counts, oldest replication pass) cover every node.
 */
export const HEALTH_SERIES_PER_CLUSTER = 50;

export interface NodeValue {
  cluster: string;
  node: string;
  value: number;
}

/** What the health metrics show, from each cluster's latest stored round. */
export interface HealthFigures {
  /** Nodes of the latest round per cluster that answered (state `answered`) or not (`silent`). */
  nodes: Array<{ cluster: string; state: 'answered' | 'silent'; count: number }>;
  /** 1 answered, 0 silent; silent nodes first. */
  nodeAnswered: NodeValue[];
  asyncPending: NodeValue[];
  quarantined: NodeValue[];
  /** Seconds outside the span the collector asked in: negative behind, positive ahead. */
  clockSkewSeconds: NodeValue[];
  /** used / size of each mounted device. */
  deviceFill: Array<NodeValue & { device: string }>;
  /** Age of the oldest last completed pass per server type; +Inf when a node has none. */
  replicationAgeSeconds: Array<{ cluster: string; serverType: ServerType; value: number }>;
  /** The thresholds in force per cluster with a round (defaults or the operator's). */
  thresholds: Array<{ cluster: string; name: keyof HealthThresholds; value: number }>;
  /** Seconds between each cluster's last two rounds. */
  roundIntervalSeconds: Array<{ cluster: string; value: number }>;
}

export const NO_HEALTH_FIGURES: HealthFigures = {
  nodes: [],
  nodeAnswered: [],
  asyncPending: [],
  quarantined: [],
  clockSkewSeconds: [],
  deviceFill: [],
  replicationAgeSeconds: [],
  thresholds: [],
  roundIntervalSeconds: [],
};

const worst = <T extends { cluster: string }>(rows: T[], badness: (r: T) => number): T[] => {
  const byCluster = new Map<string, T[]>();
  for (const r of rows) {
    const list = byCluster.get(r.cluster);
    if (list) list.push(r);
    else byCluster.set(r.cluster, [r]);
  }
  return [...byCluster.values()].flatMap((list) =>
    list.sort((a, b) => badness(b) - badness(a)).slice(0, HEALTH_SERIES_PER_CLUSTER),
  );
};

const roundNodeOf = (n: HealthNodeFigures): RoundNode => ({
  node: n.node,
  serverTypes: n.serverTypes.filter((t): t is ServerType => (SERVER_TYPES as readonly string[]).includes(t)),
  answered: n.answered,
  error: null,
  elapsedMs: n.elapsedMs,
  recon: n.recon,
});

/** Pure: the figures of the stored nodes at `now`, read with the rules' own recon readers; devices come ranked. */
export function healthFigures(
  stored: HealthNodeFigures[],
  overrides: Map<string, Partial<HealthThresholds>>,
  intervals: Array<{ cluster: string; seconds: number }>,
  fullest: Array<{ cluster: string; node: string; device: string; ratio: number }>,
  now: Date,
): HealthFigures {
  const counts = new Map<string, { answered: number; silent: number }>();
  const answered: NodeValue[] = [];
  const asyncPending: NodeValue[] = [];
  const quarantined: NodeValue[] = [];
  const skew: NodeValue[] = [];
  const oldest = new Map<string, { cluster: string; serverType: ServerType; value: number }>();
  for (const n of stored) {
    const node = roundNodeOf(n);
    const c = counts.get(n.cluster) ?? { answered: 0, silent: 0 };
    c[n.answered ? 'answered' : 'silent'] += 1;
    counts.set(n.cluster, c);
    const at = { cluster: n.cluster, node: n.node };
    answered.push({ ...at, value: n.answered ? 1 : 0 });
    if (!n.answered) continue;
    const pending = asyncPendingOf(node);
    if (pending !== null) asyncPending.push({ ...at, value: pending });
    const q = quarantinedOf(node);
    if (q !== null) quarantined.push({ ...at, value: q });
    const offset = clockOffsetMs(node, n.collectedAt, n.receivedAt);
    if (offset !== null) skew.push({ ...at, value: offset / 1000 });
    for (const type of node.serverTypes) {
      const last = replicationLastOf(node, type);
      if (last === undefined) continue;
      const age = last === null ? Infinity : Math.max(0, now.getTime() / 1000 - last);
      const key = `${n.cluster}\n${type}`;
      if ((oldest.get(key)?.value ?? -1) < age) oldest.set(key, { cluster: n.cluster, serverType: type, value: age });
    }
  }
  return {
    nodes: [...counts].flatMap(([cluster, c]) => [
      { cluster, state: 'answered' as const, count: c.answered },
      { cluster, state: 'silent' as const, count: c.silent },
    ]),
    nodeAnswered: worst(answered, (r) => -r.value),
    asyncPending: worst(asyncPending, (r) => r.value),
    quarantined: worst(quarantined, (r) => r.value),
    clockSkewSeconds: worst(skew, (r) => Math.abs(r.value)),
    deviceFill: fullest.map((d) => ({ cluster: d.cluster, node: d.node, device: d.device, value: d.ratio })),
    replicationAgeSeconds: [...oldest.values()],
    thresholds: [...counts.keys()].flatMap((cluster) =>
      Object.entries(withDefaults(overrides.get(cluster) ?? {})).map(([name, value]) => ({
        cluster,
        name: name as keyof HealthThresholds,
        value,
      })),
    ),
    roundIntervalSeconds: intervals.map((r) => ({ cluster: r.cluster, value: r.seconds })),
  };
}

export async function readHealthFigures(db: Db, now: Date): Promise<HealthFigures> {
  const [stored, overrides, intervals, fullest] = await Promise.all([
    healthNodeFigures(db),
    thresholdOverridesByCluster(db),
    roundIntervals(db),
    fullestDevices(db, HEALTH_SERIES_PER_CLUSTER),
  ]);
  return healthFigures(stored, overrides, intervals, fullest, now);
}
