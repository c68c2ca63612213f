import { Gauge, type Registry } from 'prom-client';
import { HEALTH_SERIES_PER_CLUSTER as N, type HealthFigures } from '../services/health-figures';

/**
 * Cluster health series, computed at scrape from each cluster's latest stored round (the same on
 * every API replica). Labels are bounded: clusters the API knows; nodes and devices of their
 * latest round only, at most HEALTH_SERIES_PER_CLUSTER per cluster and metric, worst first.
 */
export function registerHealthMetrics(registry: Registry, health: () => Promise<HealthFigures>): void {
  const gauge = <L extends string>(
    name: string,
    help: string,
    labelNames: L[],
    fill: (g: Gauge<L>, figures: HealthFigures) => void,
  ) =>
    new Gauge<L>({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        const figures = await health();
        this.reset();
        fill(this, figures);
      },
    });
  const perNode = (name: string, help: string, pick: (f: HealthFigures) => HealthFigures['asyncPending']) =>
    gauge(name, help, ['cluster', 'node'], (g, f) => {
      for (const r of pick(f)) g.set({ cluster: r.cluster, node: r.node }, r.value);
    });

  gauge(
    'cairn_health_nodes',
    "Storage nodes in a cluster's latest health round, by state: answered (at least one recon endpoint answered) or silent.",
    ['cluster', 'state'],
    (g, f) => {
      for (const r of f.nodes) g.set({ cluster: r.cluster, state: r.state }, r.count);
    },
  );
  perNode(
    'cairn_health_node_answered',
    `1 when the node answered recon in its cluster's latest health round, 0 when silent; silent nodes first, at most ${N} nodes per cluster.`,
    (f) => f.nodeAnswered,
  );
  perNode(
    'cairn_health_node_async_pending',
    `The node's async pendings (/recon/async) in the latest round; the ${N} highest per cluster.`,
    (f) => f.asyncPending,
  );
  perNode(
    'cairn_health_node_quarantined',
    `Objects, containers and accounts the node's auditors quarantined (/recon/quarantined) in the latest round; the ${N} highest per cluster.`,
    (f) => f.quarantined,
  );
  perNode(
    'cairn_health_node_clock_skew_seconds',
    `How far the node's clock (/recon/time) lay outside the span in which the collector asked it, in the latest round: negative behind, positive ahead, 0 within; the ${N} largest per cluster.`,
    (f) => f.clockSkewSeconds,
  );
  gauge(
    'cairn_health_device_fill_ratio',
    `Used share (0 to 1) of a mounted device (/recon/diskusage) in the latest round; the ${N} fullest per cluster.`,
    ['cluster', 'node', 'device'],
    (g, f) => {
      for (const r of f.deviceFill) g.set({ cluster: r.cluster, node: r.node, device: r.device }, r.value);
    },
  );
  gauge(
    'cairn_health_replication_age_seconds',
    "Seconds since the oldest last completed replication pass among the cluster's nodes serving the type (/recon/replication/<type>), at scrape; +Inf when one of them never completed one.",
    ['cluster', 'server_type'],
    (g, f) => {
      for (const r of f.replicationAgeSeconds) g.set({ cluster: r.cluster, server_type: r.serverType }, r.value);
    },
  );
  gauge(
    'cairn_health_threshold',
    'The health thresholds in force for a cluster with a round (docs/health.md: the default or the value an operator set), by name, in their own units.',
    ['cluster', 'name'],
    (g, f) => {
      for (const r of f.thresholds) g.set({ cluster: r.cluster, name: r.name }, r.value);
    },
  );
  gauge(
    'cairn_health_round_interval_seconds',
    "Seconds between the collection times of a cluster's last two health rounds: how often its collector runs (no series before the second round).",
    ['cluster'],
    (g, f) => {
      for (const r of f.roundIntervalSeconds) g.set({ cluster: r.cluster }, r.value);
    },
  );
}
