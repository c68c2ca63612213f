import { Gauge, type Registry } from 'prom-client';
import type { RequestHandler } from 'express';

/**
 * A check rejecting with this is reported with its own status (e.g. `deleted`) rather than
 * `unreachable`: the dependency answered, and what it said makes the service not ready.
 */
export class NotReady extends Error {
  constructor(readonly status: string) {
    super(status);
    this.name = 'NotReady';
  }
}

/** A check resolving with this is ready and reported with its own status (e.g. a replication lag) rather than `ok`. */
export class ReadyAs {
  constructor(readonly status: string) {}
}

/** A dependency check: resolves when the dependency answers; or a fixed status that is always ready. */
export type ReadinessCheck = (() => Promise<unknown>) | { fixed: string };

export interface ReadinessReport {
  ready: boolean;
  /** `{"status": "ok"|"unavailable", "<dependency>": "ok"|"unreachable"|<NotReady status>|<fixed status>, …}` */
  body: Record<string, string>;
}

/** How long one /readyz waits for its dependencies: a probe must answer even when a dependency hangs. */
export const READINESS_TIMEOUT_MS = 2_000;

/**
 * Runs every check at once, each bounded by `timeoutMs`: one that fails or has not answered by
 * then is `unreachable` (a half-open connection or a black-holed address would otherwise hang
 * the probe until the load balancer gives up on it).
 */
export async function checkReadiness(
  checks: Record<string, ReadinessCheck>,
  timeoutMs = READINESS_TIMEOUT_MS,
): Promise<ReadinessReport> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'unreachable'>((resolve) => {
    timer = setTimeout(() => resolve('unreachable'), timeoutMs);
  });
  const names = Object.keys(checks);
  try {
    const results = await Promise.all(
      names.map((name) => {
        const check = checks[name]!;
        if (typeof check !== 'function') return { status: check.fixed, ready: true };
        const answered = Promise.resolve()
          .then(check)
          .then(
            (value: unknown) => ({ status: value instanceof ReadyAs ? value.status : 'ok', ready: true }),
            (e: unknown) => ({ status: e instanceof NotReady ? e.status : 'unreachable', ready: false }),
          );
        return Promise.race([answered, expired.then((status) => ({ status, ready: false }))]);
      }),
    );
    const body: Record<string, string> = { status: 'ok' };
    let ready = true;
    names.forEach((name, i) => {
      const result = results[i]!;
      body[name] = result.status;
      if (!result.ready) ready = false;
    });
    body.status = ready ? 'ok' : 'unavailable';
    return { ready, body };
  } finally {
    clearTimeout(timer);
  }
}

/** `/readyz`: 200 when every dependency answers, else 503 naming the ones that do not. */
export function readinessEndpoint(
  checks: Record<string, ReadinessCheck>,
  timeoutMs = READINESS_TIMEOUT_MS,
): RequestHandler {
  return (_req, res, next) => {
    checkReadiness(checks, timeoutMs).then(({ ready, body }) => {
      res
        .status(ready ? 200 : 503)
        .set('Cache-Control', 'no-store')
        .json(body);
    }, next);
  };
}

/**
 * `cairn_dependency_up{dependency}`: 1 when the dependency answers its readiness check within the
 * timeout, else 0, checked when scraped (one `SELECT 1` or `PING` per scrape). Alerts read this
 * rather than probe /readyz, which a load balancer already does. Fixed checks have no series.
 */
export function registerReadinessMetrics(
  registry: Registry,
  checks: Record<string, ReadinessCheck>,
  timeoutMs = READINESS_TIMEOUT_MS,
): void {
  const probed = Object.fromEntries(Object.entries(checks).filter(([, check]) => typeof check === 'function'));
  // An app built twice on one registry (tests do) reports its latest checks.
  registry.removeSingleMetric('cairn_dependency_up');
  new Gauge({
    name: 'cairn_dependency_up',
    help: 'Whether a dependency (postgres, redis) answered its readiness check when scraped (1) or not (0).',
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      const { body } = await checkReadiness(probed, timeoutMs);
      for (const name of Object.keys(probed)) this.set({ dependency: name }, body[name] === 'ok' ? 1 : 0);
    },
  });
}
