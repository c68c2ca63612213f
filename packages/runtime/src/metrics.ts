import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { RequestHandler } from 'express';
import { collectDefaultMetrics, Gauge, Registry, type Metric } from 'prom-client';

/**
 * Prometheus metrics shared by both services. One Registry per app (tests build several apps in
 * one process; a global registry would mix them and refuse duplicate names).
 *
 * The per-request and per-token metrics below are kept in plain numbers and only turned into
 * prom-client's shape when scraped: prom-client's own Counter/Histogram allocate label objects,
 * hash strings and copy arrays on every increment (measured ~2 µs per request against ~0.2 µs here).
 */

/** A registry with the process's default metrics (CPU, memory, event loop, GC) and a `service` label. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** The `/metrics` handler: the registry in Prometheus text format. */
export function metricsEndpoint(registry: Registry): RequestHandler {
  return (_req, res, next) => {
    registry.metrics().then((text) => {
      res.set('Content-Type', registry.contentType).set('Cache-Control', 'no-store').send(text);
    }, next);
  };
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * A metric computed at scrape time, registered under prom-client's metric interface (name, help,
 * type, get, reset: what Registry reads), so it prints alongside the default metrics.
 */
abstract class ScrapedMetric {
  readonly aggregator = 'sum';
  constructor(
    readonly name: string,
    readonly help: string,
    readonly type: 'counter' | 'histogram',
  ) {}
  protected abstract samples(): Sample[];
  abstract reset(): void;
  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.samples() };
  }
  register(registry: Registry): this {
    registry.registerMetric(this as unknown as Metric);
    return this;
  }
}

export interface CounterChild {
  inc(by?: number): void;
}

/**
 * A counter with labels whose children are looked up once (at start) and then incremented with
 * a plain addition: `const issued = family.labels({ version: 'v3' }); … issued.inc()`.
 */
export class CounterFamily<L extends string> extends ScrapedMetric {
  private readonly children = new Map<
    string,
    { labels: Record<L, string>; value: number; inc: (by?: number) => void }
  >();
  constructor(name: string, help: string, registry: Registry) {
    super(name, help, 'counter');
    this.register(registry);
  }
  labels(labels: Record<L, string>): CounterChild {
    const key = JSON.stringify(Object.entries(labels).sort());
    let child = this.children.get(key);
    if (!child) {
      const created = { labels: { ...labels }, value: 0, inc: (by = 1) => void (created.value += by) };
      child = created;
      this.children.set(key, child);
    }
    return child;
  }
  protected samples(): Sample[] {
    return [...this.children.values()].map((c) => ({ labels: c.labels, value: c.value }));
  }
  reset(): void {
    for (const child of this.children.values()) child.value = 0;
  }
}

/** Request latency buckets, seconds: from a cached token check (sub-ms) to a slow list (seconds). */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Methods labelled as themselves; any other is `OTHER`. */
const COMMON_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** The route label of a request that no route matched (404s, probes of random paths). */
export const UNMATCHED_ROUTE = 'unmatched';

interface Series {
  method: string;
  route: string;
  status: string;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last slot is above the largest bound. */
  buckets: Float64Array;
}

const STARTED = Symbol('cairn.metrics.started');
const MOUNT = Symbol('cairn.metrics.mount');
type Timed = ServerResponse & { [STARTED]?: number };
type Mounted = IncomingMessage & { [MOUNT]?: string; baseUrl?: string; route?: { path: unknown } };

/**
 * Requests by method, route template and status, and their latency. The route is express's
 * matched route path under its mount (`/api/v1/users/:id/`), never the raw path: ids and names
 * in paths would make a series per user. Everything else is `unmatched`.
 *
 * Install `middleware` first, and `mount` as the first handler of every mounted router
 * (`app.use('/api/v1', metrics.mount, api)`): express resets `req.baseUrl` when an error leaves
 * a router, so the mount is remembered when the request enters it.
 */
export class HttpMetrics {
  /** route label → method → status → series. Nested maps: no key string is built per request. */
  private readonly table = new Map<string, Map<string, Map<number, Series>>>();
  /** A matched route's label under the mount it was last seen at, so the label is built once. */
  private readonly labels = new WeakMap<object, { mount: string; label: string }>();

  readonly middleware: RequestHandler;
  readonly mount: RequestHandler = (req, _res, next) => {
    (req as Mounted)[MOUNT] = req.baseUrl;
    next();
  };

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[] = LATENCY_BUCKETS,
  ) {
    const record = (req: Mounted, status: number, seconds: number) => this.record(req, status, seconds);
    // One listener function for every response (`this` is the response): nothing allocated per request.
    function onFinish(this: Timed) {
      record(this.req as Mounted, this.statusCode, (performance.now() - (this[STARTED] ?? 0)) / 1000);
    }
    this.middleware = (_req, res, next) => {
      (res as Timed)[STARTED] = performance.now();
      // `on`, not `once`: once wraps the listener in a new closure; 'finish' is emitted once anyway.
      res.on('finish', onFinish);
      next();
    };
    const table = this.table;
    const requests = new (class extends ScrapedMetric {
      protected samples(): Sample[] {
        const out: Sample[] = [];
        for (const s of allSeries(table))
          out.push({ labels: { method: s.method, route: s.route, status: s.status }, value: s.count });
        return out;
      }
      reset() {
        table.clear();
      }
    })('http_requests_total', 'HTTP requests answered, by method, route template and status.', 'counter');
    const latency = new (class extends ScrapedMetric {
      protected samples(): Sample[] {
        const out: Sample[] = [];
        const name = this.name;
        for (const s of allSeries(table)) {
          const labels = { method: s.method, route: s.route, status: s.status };
          let cumulative = 0;
          bounds.forEach((le, i) => {
            cumulative += s.buckets[i]!;
            out.push({ labels: { ...labels, le }, value: cumulative, metricName: `${name}_bucket` });
          });
          out.push({ labels: { ...labels, le: '+Inf' }, value: s.count, metricName: `${name}_bucket` });
          out.push({ labels, value: s.sum, metricName: `${name}_sum` });
          out.push({ labels, value: s.count, metricName: `${name}_count` });
        }
        return out;
      }
      reset() {
        table.clear();
      }
    })(
      'http_request_duration_seconds',
      'Time from the request reaching the app to the last byte of its answer, by method, route template and status.',
      'histogram',
    );
    requests.register(registry);
    latency.register(registry);
  }

  private routeLabel(req: Mounted): string {
    const route = req.route;
    if (!route) return UNMATCHED_ROUTE;
    const mount = req[MOUNT] ?? req.baseUrl ?? '';
    const known = this.labels.get(route);
    if (known && known.mount === mount) return known.label;
    const label = mount + String(route.path);
    this.labels.set(route, { mount, label });
    return label;
  }

  private record(req: Mounted, status: number, seconds: number): void {
    const route = this.routeLabel(req);
    // Node accepts some thirty methods; the rare ones share a label so probes cannot multiply series.
    const method = req.method && COMMON_METHODS.has(req.method) ? req.method : 'OTHER';
    let byMethod = this.table.get(route);
    if (!byMethod) this.table.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (!series) {
      series = {
        method,
        route,
        status: String(status),
        count: 0,
        sum: 0,
        buckets: new Float64Array(this.bounds.length + 1),
      };
      byStatus.set(status, series);
    }
    series.count += 1;
    series.sum += seconds;
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]!) i++;
    series.buckets[i]! += 1;
  }
}

function* allSeries(table: Map<string, Map<string, Map<number, Series>>>): Generator<Series> {
  for (const byMethod of table.values()) for (const byStatus of byMethod.values()) yield* byStatus.values();
}

/** What the pool gauges read: tarn's pool, which knex uses (`db.client.pool`). */
export interface PoolLike {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
}

/** A knex handle's pool, when it has one (knex-pglite's embedded database may not). */
export function knexPool(db: { client: unknown }): PoolLike | undefined {
  const pool = (db.client as { pool?: Partial<PoolLike> } | undefined)?.pool;
  return pool && typeof pool.numUsed === 'function' ? (pool as PoolLike) : undefined;
}

/**
 * Connection pool state, read when scraped (collect callbacks: nothing runs per query):
 * connections in use and idle, requests waiting for a connection, connections being opened.
 */
export function registerPoolMetrics(registry: Registry, pool: () => PoolLike | undefined): void {
  new Gauge({
    name: 'cairn_db_pool_connections',
    help: 'Database connections in the pool, by state (used: lent to a query; free: idle).',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const p = pool();
      this.set({ state: 'used' }, p ? p.numUsed() : 0);
      this.set({ state: 'free' }, p ? p.numFree() : 0);
    },
  });
  new Gauge({
    name: 'cairn_db_pool_pending_acquires',
    help: 'Queries waiting for a database connection (non-zero for long: the pool is too small or the database slow).',
    registers: [registry],
    collect() {
      this.set(pool()?.numPendingAcquires() ?? 0);
    },
  });
  new Gauge({
    name: 'cairn_db_pool_pending_creates',
    help: 'Database connections being opened.',
    registers: [registry],
    collect() {
      this.set(pool()?.numPendingCreates() ?? 0);
    },
  });
}
