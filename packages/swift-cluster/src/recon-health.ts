import { ReconError } from './errors';
import { mapConcurrent } from './pool';
import { allowRequestsInFlight, fetchRecon, reconBaseUrl, type ReconNode } from './recon';
import {
  HEALTH_ENDPOINTS,
  HEALTH_READERS,
  ReconShapeError,
  type HealthEndpoint,
  type ReconHealthAnswers,
} from './recon-health-shapes';

/** What a round keeps of one endpoint that failed: a sentence (the node is named by the round). */
export interface ReconEndpointError {
  error: string;
}

export type NodeHealthRecon = { [E in HealthEndpoint]: ReconHealthAnswers[E] | ReconEndpointError };

/** One node's answers in a health round. */
export interface NodeHealth {
  node: ReconNode;
  /** false when every endpoint failed; `error` then says why. */
  answered: boolean;
  error: string | null;
  elapsedMs: number;
  recon: NodeHealthRecon;
}

export interface HealthPollOptions {
  /** Nodes read at once. */
  concurrency: number;
  /** Time one node gets for all its endpoints, read one after the other; what has not answered by then fails. */
  nodeTimeoutMs: number;
  /** Stops the round: nodes not yet read, and requests in flight, fail with "stopped". */
  signal?: AbortSignal;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

/** The API refuses a recon value larger than this (its JSON); a larger answer is an error of its own. */
export const MAX_RECON_VALUE_BYTES = 64 * 1024;

export const isEndpointError = (v: unknown): v is ReconEndpointError =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as ReconEndpointError).error === 'string';

const outOfTime = (budgetMs: number) => `no complete answer within the node's ${budgetMs} ms`;

async function readEndpoint<E extends HealthEndpoint>(
  baseUrl: string,
  endpoint: E,
  options: { timeoutMs: number; budgetMs: number; signal?: AbortSignal; fetch?: typeof fetch },
): Promise<ReconHealthAnswers[E] | ReconEndpointError> {
  // fetchRecon hears an abort only while it waits; a round stopped before this node skips it.
  if (options.signal?.aborted) return { error: 'stopped' };
  try {
    const answer = HEALTH_READERS[endpoint](await fetchRecon(baseUrl, endpoint, options));
    const size = Buffer.byteLength(JSON.stringify(answer));
    if (size > MAX_RECON_VALUE_BYTES)
      return {
        error: `the answer of /recon/${endpoint} is ${size} bytes, more than the ${MAX_RECON_VALUE_BYTES} kept`,
      };
    return answer;
  } catch (e) {
    // The request's own timeout is what was left of the node's: name the node's budget.
    if (e instanceof ReconError && e.reason.startsWith('no complete answer within'))
      return { error: outOfTime(options.budgetMs) };
    if (e instanceof ReconError) return { error: e.reason };
    if (e instanceof ReconShapeError) return { error: e.message };
    return { error: e instanceof Error ? e.message : String(e) };
  }
}

/** Why a node counts as silent, in one sentence: the distinct reasons, the commonest first. */
function silentReason(errors: string[]): string {
  if (errors.every((e) => /^HTTP 404 from/.test(e)))
    return `every /recon/ request was answered 404: is the recon middleware in this server's pipeline?`;
  const counts = new Map<string, number>();
  for (const e of errors) {
    // The same failure on every endpoint differs only by the path: count it once.
    const reason = e.replace(/ from GET \/recon\/\S+$/, '').replace(/\/recon\/\S+/, '/recon/…');
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  }
  const reasons = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([r]) => r);
  return `none of the ${errors.length} recon requests was answered: ${reasons.slice(0, 3).join('; ')}`;
}

/**
 * Reads every health endpoint of one node, within `nodeTimeoutMs` for the node as a whole.
 * Never rejects: an endpoint that fails is `{ error }` under its key; a node where all fail is
 * `answered: false` with a sentence.
 */
export async function readNodeHealth(
  node: ReconNode,
  options: Omit<HealthPollOptions, 'concurrency'>,
): Promise<NodeHealth> {
  const started = performance.now();
  const baseUrl = reconBaseUrl(node);
  // One endpoint after the other, over one kept-alive connection: 14 connections per node at once
  // cost the collector (and the node's single recon worker) far more than the answers themselves.
  // Each request gets what is left of the node's budget, so a hung node costs one budget, not 14.
  const deadline = started + options.nodeTimeoutMs;
  const answers: Array<ReconHealthAnswers[HealthEndpoint] | ReconEndpointError> = [];
  for (const endpoint of HEALTH_ENDPOINTS) {
    const left = Math.round(deadline - performance.now());
    answers.push(
      left <= 0
        ? { error: outOfTime(options.nodeTimeoutMs) }
        : await readEndpoint(baseUrl, endpoint, {
            timeoutMs: left,
            budgetMs: options.nodeTimeoutMs,
            signal: options.signal,
            fetch: options.fetch,
          }),
    );
  }
  const recon = Object.fromEntries(HEALTH_ENDPOINTS.map((endpoint, i) => [endpoint, answers[i]])) as NodeHealthRecon;
  const errors = answers.filter(isEndpointError).map((a) => a.error);
  const answered = errors.length < HEALTH_ENDPOINTS.length;
  return {
    node,
    answered,
    error: answered ? null : silentReason(errors),
    elapsedMs: Math.round(performance.now() - started),
    recon,
  };
}

/**
 * Reads every node, at most `concurrency` nodes at a time, in the order given. Never rejects because
 * of a node. `onPolled` hears of each node done (progress for a person).
 */
export async function pollNodesHealth(
  nodes: readonly ReconNode[],
  options: HealthPollOptions,
  onPolled?: (done: number, total: number) => void,
): Promise<NodeHealth[]> {
  let done = 0;
  allowRequestsInFlight(options.signal, options.concurrency);
  return mapConcurrent(nodes, options.concurrency, async (node) => {
    try {
      return await readNodeHealth(node, options);
    } finally {
      onPolled?.(++done, nodes.length);
    }
  });
}
