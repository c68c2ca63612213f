import { createRegistry, HttpMetrics, knexPool, registerPoolMetrics } from '@cairn/runtime';
import type { Knex } from 'knex';
import { Counter, Gauge, type Registry } from 'prom-client';

/** The management API's metrics, one registry per app: requests by route template, the database pool, the process, utilization maintenance. */
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
    failures: new Counter({ name: 'cairn_utilization_rollup_failures_total', help: "Daily rollups of one cluster's day that failed (each is retried at the next maintenance pass).", labelNames: ['cluster'], registers: [registry] }),
    backlogDays: new Gauge({
      name: 'cairn_utilization_rollup_backlog_days',
      help: 'Days from the oldest finished day not rolled up to today, per cluster, after the last maintenance pass (0: every finished day is rolled up).',
      labelNames: ['cluster'],
      registers: [registry],
    }),
    passFailures: new Counter({ name: 'cairn_utilization_maintenance_failures_total', help: 'Utilization maintenance passes that failed outside a rollup (creating or dropping partitions).', registers: [registry] }),
  };
}

export function createApiMetrics(db: Knex): ApiMetrics {
  const registry = createRegistry('management-api');
  registerPoolMetrics(registry, () => knexPool(db));
  return { registry, http: new HttpMetrics(registry), rollups: createRollupMetrics(registry) };
}
