import { isEndpointError, pollNodesHealth } from '@cairn/swift-cluster';
import { api, apiError } from '../api-client';
import type { CollectorRoundOptions } from '../collector-loop';
import { findCluster } from '../utilization/client';
import { readHealthRings } from './rings';
import { buildRound } from './round';

export type HealthCollectOptions = CollectorRoundOptions;

export interface HealthCollectResult {
  clusterId: number;
  nodes: number;
  answered: number;
  /** Endpoints that failed on nodes that answered others. */
  endpointErrors: number;
  /** From the API's answer, when it gives them. */
  roundId?: number;
  openFindings?: number;
  /** The signal stopped the round: nothing was sent; `answered` nodes had answered by then. */
  stopped?: boolean;
}

/**
 * One health round: the storage servers from the swift dir's rings, every health endpoint of each
 * (at most `healthConcurrency` nodes at once, `healthNodeTimeoutMs` each), one POST of the round.
 * A silent node is part of the round (the API makes it a finding); when not a single node answered,
 * the round is still sent and then this fails, since the collector's own network is the likelier cause.
 */
export async function collectHealthOnce(options: HealthCollectOptions): Promise<HealthCollectResult> {
  const { config, signal } = options;
  if (!config.apiKey)
    throw new Error('CAIRN_API_KEY is not set: the collector needs "<operator>:<key>" to report a health round.');
  const progress = options.progress ?? (() => undefined);
  progress(`reading rings in ${options.swiftDir}`);
  const rings = await readHealthRings(options.swiftDir);
  rings.warnings.forEach(options.warn);
  // Before the round, so that a wrong cluster or an unreachable API does not cost a round of reading.
  const clusterId = (await findCluster(config, options.cluster)).id;
  const collectedAt = new Date();
  progress('reading storage nodes', 0, rings.nodes.length);
  const polled = await pollNodesHealth(
    rings.nodes,
    { concurrency: config.healthConcurrency, nodeTimeoutMs: config.healthNodeTimeoutMs, signal },
    (done, total) => progress('reading storage nodes', done, total),
  );
  const answered = polled.filter((p) => p.answered);
  const counts = {
    clusterId,
    nodes: rings.nodes.length,
    answered: answered.length,
    endpointErrors: answered.reduce((n, p) => n + Object.values(p.recon).filter(isEndpointError).length, 0),
  };
  // A round cut short would show the nodes not yet read as silent.
  if (signal?.aborted) return { ...counts, stopped: true };

  progress('sending the health round');
  const body = buildRound(collectedAt, rings.ringMd5, rings.nodes, polled);
  // One attempt: a round is not idempotent, and the next round comes anyway.
  const r = await api(config, 'POST', `/api/v1/clusters/${clusterId}/health/rounds/`, body, 0);
  if (r.status !== 201 && r.status !== 200) throw apiError('sending the health round', r);
  const json = (r.json ?? {}) as { id?: unknown; open_findings?: unknown };
  const result: HealthCollectResult = { ...counts };
  if (typeof json.id === 'number') result.roundId = json.id;
  if (typeof json.open_findings === 'number') result.openFindings = json.open_findings;
  if (answered.length === 0 && rings.nodes.length > 0) {
    throw new Error(
      `none of the ${rings.nodes.length} storage node(s) answered (e.g. ${rings.nodes[0]!.key}: ${polled[0]!.error}); the round was sent, check this host's network`,
    );
  }
  return result;
}
