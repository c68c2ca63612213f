import { createRegistry, HttpMetrics, knexPool, registerPoolMetrics } from '@cairn/runtime';
import type { Knex } from 'knex';
import type { Registry } from 'prom-client';

/** The management API's metrics, one registry per app: requests by route template, the database pool, the process. */
export interface ApiMetrics {
  registry: Registry;
  http: HttpMetrics;
}

export function createApiMetrics(db: Knex): ApiMetrics {
  const registry = createRegistry('management-api');
  registerPoolMetrics(registry, () => knexPool(db));
  return { registry, http: new HttpMetrics(registry) };
}
