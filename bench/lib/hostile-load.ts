/**
 * The hostile run's load loop: `concurrency` requests in flight over the raw keep-alive pools
 * (one request per connection at a time, no pipelining), every answer checked with the jest
 * suite's checkResponse, tallied by status class and by endpoint group with its time. A second
 * loop asks both services' /healthz every few seconds during the run: a service that stops
 * answering is a crash even when its process stays up.
 */
import { describe as describeRequest, type HostileRequest } from '../../test-e2e/hostile/arbitraries';
import { checkResponse, type CheckOptions } from '../../test-e2e/hostile/checks';
import type { RawResponse } from '../../test-e2e/hostile/raw-http';

/** Where requests go (one pool per service, or several replicas). */
export interface HostileTargets {
  send(req: HostileRequest): Promise<RawResponse>;
}

export const CLASSES = ['2xx', '3xx', '4xx', '5xx', 'failed'] as const;

export class GroupTally {
  requests = 0;
  readonly byClass: Record<string, number> = { '1xx': 0, '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, failed: 0 };
  totalMs = 0;
  maxMs = 0;

  add(status: number | null, ms: number): void {
    this.requests += 1;
    this.byClass[status === null ? 'failed' : `${Math.floor(status / 100)}xx`]! += 1;
    this.totalMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }
}

export interface HostileFailure {
  request: string;
  status: number | null;
  problems: string[];
}

export interface LoadResult {
  all: GroupTally;
  /** By service ("api", "gateway"). */
  byService: Map<string, GroupTally>;
  /** By service and endpoint template ("gateway /auth/v3/auth/tokens"). */
  byGroup: Map<string, GroupTally>;
  byStatus: Map<number, number>;
  failures: HostileFailure[];
  failureCount: number;
  seconds: number;
}

/** "POST /auth/v3/tokens" -> "gateway /auth/v3/tokens" (methods may hold spaces, templates do not). */
export const groupOf = (req: HostileRequest): string =>
  `${req.service} ${req.label.slice(req.label.lastIndexOf(' ') + 1)}`;

const tallyIn = (map: Map<string, GroupTally>, key: string): GroupTally => {
  let t = map.get(key);
  if (!t) map.set(key, (t = new GroupTally()));
  return t;
};

export async function runHostileLoad(
  next: () => HostileRequest | undefined,
  targets: HostileTargets,
  options: CheckOptions & { concurrency: number; keepFailures: number; onProgress?: (done: number) => void },
): Promise<LoadResult> {
  const result: LoadResult = {
    all: new GroupTally(),
    byService: new Map(),
    byGroup: new Map(),
    byStatus: new Map(),
    failures: [],
    failureCount: 0,
    seconds: 0,
  };
  const started = performance.now();
  const worker = async () => {
    for (let req = next(); req; req = next()) {
      let status: number | null = null;
      let problems: string[];
      const sent = performance.now();
      try {
        const res = await targets.send(req);
        status = res.status;
        problems = checkResponse(req, res, options);
      } catch (e) {
        problems = [`no answer: ${e instanceof Error ? e.message : String(e)}`];
      }
      const ms = performance.now() - sent;
      result.all.add(status, ms);
      tallyIn(result.byService, req.service).add(status, ms);
      tallyIn(result.byGroup, groupOf(req)).add(status, ms);
      if (status !== null) result.byStatus.set(status, (result.byStatus.get(status) ?? 0) + 1);
      if (problems.length) {
        result.failureCount += 1;
        if (result.failures.length < options.keepFailures)
          result.failures.push({ request: describeRequest(req), status, problems });
      }
      if (options.onProgress && result.all.requests % 1000 === 0) options.onProgress(result.all.requests);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  result.seconds = (performance.now() - started) / 1000;
  return result;
}

export interface HealthWatch {
  /** Probes so far, and the failed ones as readable lines. */
  probes: () => number;
  failures: string[];
  stop: () => Promise<void>;
}

/**
 * Asks every URL's /healthz each `intervalMs`; a probe fails on anything but 200 within
 * `timeoutMs` (generous: the services are under full load, a slow answer is not a crash).
 */
export function watchHealth(urls: string[], intervalMs = 2000, timeoutMs = 15_000): HealthWatch {
  const failures: string[] = [];
  let probes = 0;
  let stopped = false;
  let wake: (() => void) | undefined;
  const probe = async (url: string) => {
    probes += 1;
    try {
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer();
      if (res.status !== 200) failures.push(`${url}/healthz answered ${res.status}`);
    } catch (e) {
      failures.push(`${url}/healthz: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await Promise.all(urls.map(probe));
      await new Promise<void>((r) => {
        wake = r;
        setTimeout(r, intervalMs).unref();
      });
    }
  })();
  return {
    probes: () => probes,
    failures,
    stop: async () => {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
