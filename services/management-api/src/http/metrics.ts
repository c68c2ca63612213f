import { createRegistry, HttpMetrics, knexPool, registerPoolMetrics } from '@cairn/runtime';
import type { Knex } from 'knex';
import { Counter, Gauge, type Registry } from 'prom-client';
import { monitoringSnapshot, type MonitoringSnapshot } from '../services/monitoring';
import { NO_HEALTH_FIGURES } from '../services/health-figures';
import { registerHealthMetrics } from './health-metrics';

/**
 * The management API's metrics, one registry per app: requests by route template, the database
 * pool, the process, utilization maintenance, and what the collectors reported (read from
 * Postgres, so every replica exports the same figures whichever replica a collector posted to).
 */
export interface ApiMetrics {
  registry: Registry;
  http: HttpMetrics;
  rollups: RollupMetrics;
}

/**
 * Daily rollups, per cluster (label `cluster`: the cluster's id). A failed rollup is retried at
 * every maintenance pass; alert on the backlog rather than on single failures, e.g.
 * `cairn_utilization_rollup_backlog_days > 1`: summaries then read that cluster's days from the
 * hourly rows, which retention drops after CAIRN_UTILIZATION_HOURLY_DAYS.
 */
export interface RollupMetrics {
  failures: Counter<'cluster'>;
  backlogDays: Gauge<'cluster'>;
  passFailures: Counter;
}

function createRollupMetrics(registry: Registry): RollupMetrics {
  return {
    failures: new Counter({
      name: 'cairn_utilization_rollup_failures_total',
      help: "Daily rollups of one cluster's day that failed (each is retried at the next maintenance pass).",
      labelNames: ['cluster'],
      registers: [registry],
    }),
    backlogDays: new Gauge({
      name: 'cairn_utilization_rollup_backlog_days',
      help: 'Days from the oldest finished day not rolled up to today, per cluster, after the last maintenance pass (0: every finished day is rolled up).',
      labelNames: ['cluster'],
      registers: [registry],
    }),
    passFailures: new Counter({
      name: 'cairn_utilization_maintenance_failures_total',
      help: 'Utilization maintenance passes that failed outside a rollup (creating or dropping partitions).',
      registers: [registry],
    }),
  };
}

/** How long one read of the collectors' figures serves scrapes: several scrapers, one query. */
export const SNAPSHOT_CACHE_MS = 5_000;
/** A scrape does not wait longer than this for Postgres; the previous figures are served instead. */
const SNAPSHOT_TIMEOUT_MS = 2_000;

export interface ApiMetricsOptions {
  /** The clock of the incomplete-hours windows. */
  now?: () => Date;
  cacheMs?: number;
}

export function createApiMetrics(db: Knex, options: ApiMetricsOptions = {}): ApiMetrics {
  const registry = createRegistry('management-api');
  registerPoolMetrics(registry, () => knexPool(db));
  registerCollectorMetrics(
    registry,
    cachedSnapshot(db, options.now ?? (() => new Date()), options.cacheMs ?? SNAPSHOT_CACHE_MS),
  );
  return { registry, http: new HttpMetrics(registry), rollups: createRollupMetrics(registry) };
}

/**
 * The latest snapshot, read at most once per SNAPSHOT_CACHE_MS. When Postgres does not answer
 * (cairn_dependency_up says so), the last figures read are served rather than failing /metrics.
 */
function cachedSnapshot(db: Knex, now: () => Date, cacheMs: number): () => Promise<MonitoringSnapshot> {
  let last: MonitoringSnapshot = {
    collectors: [],
    capacity: [],
    incomplete: [],
    findings: [],
    health: NO_HEALTH_FIGURES,
  };
  let read: { at: number; pending: Promise<MonitoringSnapshot> } | undefined;
  return () => {
    const at = Date.now();
    if (!read || at - read.at >= cacheMs) {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<MonitoringSnapshot>((resolve) => {
        timer = setTimeout(() => resolve(last), SNAPSHOT_TIMEOUT_MS);
      });
      const fresh = monitoringSnapshot(db, now()).then(
        (snapshot) => (last = snapshot),
        () => last,
      );
      read = { at, pending: Promise.race([fresh, timeout]).finally(() => clearTimeout(timer)) };
    }
    return read.pending;
  };
}

function registerCollectorMetrics(registry: Registry, snapshot: () => Promise<MonitoringSnapshot>): void {
  new Gauge({
    name: 'cairn_collector_last_success_timestamp_seconds',
    help: "When the API last accepted a post from a cluster's collector (capacity: device report; storage: account samples; transfer: access-log batch), Unix seconds.",
    labelNames: ['cluster', 'collector'],
    registers: [registry],
    async collect() {
      const { collectors } = await snapshot();
      this.reset();
      for (const c of collectors) this.set({ cluster: c.cluster, collector: c.collector }, c.lastSuccessSeconds);
    },
  });
  new Gauge({
    name: 'cairn_capacity_used_ratio',
    help: "Share of a ring set's raw capacity in use (0 to 1), from the cluster's latest device report.",
    labelNames: ['cluster', 'ring_set'],
    registers: [registry],
    async collect() {
      const { capacity } = await snapshot();
      this.reset();
      for (const r of capacity)
        if (r.usedPct !== null) this.set({ cluster: r.cluster, ring_set: r.ringSet }, r.usedPct / 100);
    },
  });
  new Gauge({
    name: 'cairn_utilization_incomplete_hours',
    help: 'Hours of the last day whose utilization is incomplete, by cluster and kind (storage: the 24 h before the current hour lacking a collection round; transfer: the 24 h before those not fully covered by ingested logs).',
    labelNames: ['cluster', 'kind'],
    registers: [registry],
    async collect() {
      const { incomplete } = await snapshot();
      this.reset();
      for (const r of incomplete) this.set({ cluster: r.cluster, kind: r.kind }, r.hours);
    },
  });
  new Gauge({
    name: 'cairn_health_findings_open',
    help: "Open health findings by cluster, severity (warning, critical) and code (docs/health.md), from the cluster's latest health round. A cluster with none has no series.",
    labelNames: ['cluster', 'severity', 'code'],
    registers: [registry],
    async collect() {
      const { findings } = await snapshot();
      this.reset();
      for (const f of findings) this.set({ cluster: f.cluster, severity: f.severity, code: f.code }, f.count);
    },
  });
  registerHealthMetrics(registry, async () => (await snapshot()).health);
}
