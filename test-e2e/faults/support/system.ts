import type { Knex } from 'knex';
import { createDatabase, ensurePostgres } from './postgres-cluster';
import { RedisServer } from './redis-server';
import { ADMIN_AUTH, launchApi, launchGateway, type Service } from './services';
import { Load, PASSWORD } from './load';
import { RECOVERY_MS, summary } from './checks';

/**
 * The system under test: management-api and auth-gateway as real processes on a database of
 * their own in the fault tests' Postgres cluster, the gateway's tokens in the fault tests' Redis.
 */
export interface System {
  db: Knex;
  databaseUrl: string;
  redis: RedisServer;
  api: Service;
  gateway: Service;
  gatewayUsers: string[];
  serviceToken: string;
  /** Every load run so far, for the final checks against the database and the token store. */
  loads: Load[];
  /**
   * Runs `fault` under a steady load: the load starts, warms up, the fault runs and resolves with
   * the moment its dependency is ready again, the load continues for RECOVERY_MS and 2 s more.
   */
  underLoad: (
    title: string,
    fault: () => Promise<number>,
  ) => Promise<{ load: Load; faultAt: number; readyAt: number; endAt: number }>;
  /** A new management-api process (after one was killed). */
  relaunchApi: () => Promise<void>;
  close: () => Promise<void>;
}

const GATEWAY_USERS = 3;

export async function startSystem(): Promise<System> {
  await ensurePostgres();
  const database = await createDatabase();
  const redis = new RedisServer();
  const started: Service[] = [];
  // A failed start must not leave processes behind (jest would wait for them forever).
  const undo = async (e: unknown): Promise<never> => {
    for (const s of started) await s.kill();
    await redis.destroy();
    await database.drop();
    throw e;
  };
  await redis.start().catch(undo);
  const api = await launchApi(database.url).catch(undo);
  started.push(api);
  const gateway = await launchGateway(database.url, redis.url).catch(undo);
  started.push(gateway);

  const create = async (user: string, extra: Record<string, unknown> = {}) => {
    const res = await fetch(`${api.url}/api/v1/users/`, {
      method: 'POST',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({ cluster: '/api/v1/clusters/1/', user, password: PASSWORD, ...extra }),
    });
    if (res.status !== 201) throw new Error(`create ${user}: ${res.status} ${await res.text()}`);
  };
  const gatewayUsers = Array.from({ length: GATEWAY_USERS }, (_, i) => `gw-${i}`);
  const probe = new Load({
    apiUrl: api.url,
    gatewayUrl: gateway.url,
    apiWorkers: 0,
    gatewayWorkers: 0,
    gatewayUsers,
    serviceToken: '',
    pauseMs: 0,
  });
  const serviceToken = await (async () => {
    for (const u of gatewayUsers) await create(u);
    await create('swift-proxy', { is_superuser: true });
    const token = await probe.loginV3('swift-proxy');
    if (!token) throw new Error(`no service token: ${JSON.stringify(probe.rec.outcomes.map((o) => o.body))}`);
    // Warm-up: the first login of each user costs a full scrypt check (then remembered), and a
    // fresh process compiles its code paths; neither is what the fault runs measure.
    for (const u of gatewayUsers) await probe.loginV3(u);
    return token;
  })().catch(undo);

  const system: System = {
    db: database.db,
    databaseUrl: database.url,
    redis,
    api,
    gateway,
    gatewayUsers,
    serviceToken,
    loads: [],
    underLoad: async (title, fault) => {
      const load = new Load({
        apiUrl: system.api.url,
        gatewayUrl: system.gateway.url,
        apiWorkers: 2,
        gatewayWorkers: GATEWAY_USERS,
        gatewayUsers,
        serviceToken,
        pauseMs: 50,
      });
      system.loads.push(load);
      load.start();
      await new Promise((r) => setTimeout(r, 1500));
      const faultAt = Date.now();
      const readyAt = await fault();
      await new Promise((r) => setTimeout(r, RECOVERY_MS + 2000));
      await load.stop();
      process.stdout.write(summary(title, load.rec, faultAt, readyAt));
      return { load, faultAt, readyAt, endAt: Date.now() };
    },
    relaunchApi: async () => {
      system.api = await launchApi(database.url);
    },
    close: async () => {
      await system.gateway.stop();
      await system.api.stop();
      await redis.destroy();
      await database.drop();
    },
  };
  return system;
}
