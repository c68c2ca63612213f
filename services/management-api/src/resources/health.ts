import {
  SERVER_TYPES,
  asyncPendingOf,
  diskUsageOf,
  quarantinedOf,
  replicationLastOf,
  replicationPassOf,
  type RoundNode,
  type ServerType,
} from '@cairn/domain';
import type { ClusterHealthResource, HealthFindingResource, HealthNodeResource } from '@cairn/contract';
import type { ClusterHealth, StoredFinding, StoredHealthNode } from '../services/health';

/** Shapes of cluster health as the API shows them (routes/health.ts serves them). */

const iso = (d: Date | null): string | null => (d === null ? null : d.toISOString());

export const findingJson = (f: StoredFinding): HealthFindingResource => ({
  closed_at: iso(f.closedAt),
  code: f.code,
  device: f.device,
  id: Number(f.id),
  last_seen_at: f.lastSeenAt.toISOString(),
  node: f.node,
  open: f.closedAt === null,
  opened_at: f.openedAt.toISOString(),
  ring_set: f.ringSet,
  sentence: f.sentence,
  severity: f.severity,
  since: f.since.toISOString(),
});

/**
 * A node's latest word, summarised: devices with fill and mount state, last replication pass per
 * type (and its length and partitions).
 */
export function healthNodeJson(n: StoredHealthNode): HealthNodeResource {
  const asRound: RoundNode = {
    node: n.node,
    serverTypes: n.serverTypes.filter((t): t is ServerType => (SERVER_TYPES as readonly string[]).includes(t)),
    answered: n.answered,
    error: n.error,
    elapsedMs: 0,
    recon: n.recon,
  };
  const replication = Object.fromEntries(
    asRound.serverTypes.map((t) => {
      const last = replicationLastOf(asRound, t);
      return [t, typeof last === 'number' ? new Date(last * 1000).toISOString() : null];
    }),
  );
  const passes = Object.fromEntries(
    asRound.serverTypes.map((t) => {
      const pass = replicationPassOf(asRound, t);
      return [
        t,
        pass
          ? { ended_at: new Date(pass.last * 1000).toISOString(), seconds: pass.seconds, partitions: pass.partitions }
          : null,
      ];
    }),
  );
  return {
    answered: n.answered,
    async_pending: asyncPendingOf(asRound),
    collected_at: n.collectedAt.toISOString(),
    devices: (diskUsageOf(asRound) ?? []).map((d) => ({
      device: d.device,
      fill_pct: d.mounted === true && d.size && d.used !== null ? Math.round((d.used / d.size) * 1000) / 10 : null,
      mounted: d.mounted === true,
      size_bytes: d.size,
      used_bytes: d.used,
    })),
    error: n.error,
    last_seen: iso(n.lastAnsweredAt),
    node: n.node,
    quarantined: quarantinedOf(asRound),
    replication,
    replication_passes: passes,
    server_types: n.serverTypes,
  };
}

export const clusterHealthJson = (h: ClusterHealth): ClusterHealthResource => ({
  collected_at: iso(h.collectedAt),
  findings: h.findings.map(findingJson),
  nodes: h.nodes.map(healthNodeJson),
  status: h.status,
  thresholds: { ...h.thresholds },
});
