import fc from 'fast-check';
import { describe as describeRequest, type HostileRequest, type Service } from './arbitraries';
import { checkResponse, StatusTally, type CheckOptions } from './checks';
import { RawPool, type RawResponse } from './raw-http';

/**
 * Sends hostile requests with some concurrency, checks each answer and keeps the first failures
 * (a failure is a broken property, or no answer at all).
 */
export interface Failure {
  request: string;
  status: number | null;
  problems: string[];
}

export interface RunResult {
  tally: StatusTally;
  byService: Record<Service, StatusTally>;
  failures: Failure[];
  failureCount: number;
  seconds: number;
}

export class Targets {
  readonly pools: Record<Service, RawPool>;
  constructor(apiUrl: string, gatewayUrl: string, connections: number, timeoutMs?: number) {
    this.pools = {
      api: new RawPool(apiUrl, connections, timeoutMs),
      gateway: new RawPool(gatewayUrl, connections, timeoutMs),
    };
  }
  send(req: HostileRequest): Promise<RawResponse> {
    return this.pools[req.service].send(req);
  }
  close(): void {
    this.pools.api.close();
    this.pools.gateway.close();
  }
}

export async function runRequests(
  next: () => HostileRequest | undefined,
  targets: Targets,
  options: CheckOptions & { concurrency: number; keepFailures?: number; onProgress?: (done: number) => void },
): Promise<RunResult> {
  const started = performance.now();
  const result: RunResult = {
    tally: new StatusTally(),
    byService: { api: new StatusTally(), gateway: new StatusTally() },
    failures: [],
    failureCount: 0,
    seconds: 0,
  };
  const keep = options.keepFailures ?? 20;
  let done = 0;
  const worker = async () => {
    for (let req = next(); req; req = next()) {
      let status: number | null = null;
      let problems: string[];
      try {
        const res = await targets.send(req);
        status = res.status;
        problems = checkResponse(req, res, options);
      } catch (e) {
        problems = [`no answer: ${e instanceof Error ? e.message : String(e)}`];
      }
      result.tally.add(status);
      result.byService[req.service].add(status);
      if (problems.length) {
        result.failureCount += 1;
        if (result.failures.length < keep) result.failures.push({ request: describeRequest(req), status, problems });
      }
      done += 1;
      if (options.onProgress && done % 1000 === 0) options.onProgress(done);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

/** A readable failure list for an assertion message. */
export function formatFailures(result: RunResult, seed: number): string {
  return [
    `${result.failureCount} of ${result.tally.total} requests broke a property (seed ${seed}; rerun with HOSTILE_SEED=${seed}):`,
    ...result.failures.map((f) => `- ${f.status ?? 'no answer'}: ${f.problems.join('; ')}\n    ${f.request}`),
  ].join('\n');
}

/**
 * A stream of `total` samples of `arb`, drawn in batches of fast-check's `sample` with seeds
 * `seed`, `seed + 1`, … so a run of any length is reproducible from one number and never held in
 * memory at once.
 */
export function sampleStream<T>(arb: fc.Arbitrary<T>, seed: number, total: number, batch = 500): () => T | undefined {
  let produced = 0;
  let buffer: T[] = [];
  let batchIndex = 0;
  return () => {
    if (produced >= total) return undefined;
    if (buffer.length === 0) {
      buffer = fc.sample(arb, { seed: seed + batchIndex, numRuns: Math.min(batch, total - produced) }).reverse();
      batchIndex += 1;
    }
    produced += 1;
    return buffer.pop();
  };
}

/** The run's seed: HOSTILE_SEED when set (to replay a failure), else a fresh one. */
export const runSeed = (): number =>
  process.env.HOSTILE_SEED ? Number(process.env.HOSTILE_SEED) : Math.floor(Math.random() * 2 ** 31);
