import type { NodeHealth, NodeHealthRecon } from '@cairn/swift-cluster';
import type { HealthNode, ServerType } from './rings';

/** The body of POST /api/v1/clusters/<id>/health/rounds/ (the collector–API contract). */
export interface HealthRoundBody {
  collected_at: string;
  ring_md5: Record<string, string>;
  nodes: Array<{
    node: string;
    server_types: ServerType[];
    answered: boolean;
    error: string | null;
    elapsed_ms: number;
    recon: NodeHealthRecon;
  }>;
}

/** `polled[i]` is the answer of `nodes[i]` (pollNodesHealth keeps the order). */
export function buildRound(
  collectedAt: Date,
  ringMd5: Record<string, string>,
  nodes: readonly HealthNode[],
  polled: readonly NodeHealth[],
): HealthRoundBody {
  return {
    collected_at: collectedAt.toISOString(),
    ring_md5: ringMd5,
    nodes: nodes.map((n, i) => {
      const p = polled[i]!;
      return {
        node: n.key,
        server_types: n.serverTypes,
        answered: p.answered,
        error: p.error,
        elapsed_ms: p.elapsedMs,
        recon: p.recon,
      };
    }),
  };
}
