/**
 * Hostile-input run (issue #6): a million random hostile requests against every endpoint of both
 * services, the same generators as the jest suite (test-e2e/hostile/arbitraries.ts). Not a speed
 * benchmark: it reports requests/s for scale, but it fails (exit 1) on what matters: any 5xx, any
 * 4xx without a clear message, any accepted write, a server that stops answering or dies, and any
 * change to the database.
 *
 *   pnpm bench:hostile                                  # 1,000,000 requests
 *   BENCH_HOSTILE_REQUESTS=20000 pnpm bench:hostile     # smoke run
 *   HOSTILE_SEED=123 pnpm bench:hostile                 # replay a run
 *
 * Environment (all optional):
 *   BENCH_PG_URL             Postgres server for the throwaway database cairn_bench_hostile_<random>
 *                            (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_HOSTILE_REQUESTS   total requests, split about evenly between the services (default 1000000)
 *   BENCH_CONNECTIONS        keep-alive connections per service (default 32)
 *   HOSTILE_SEED             the run's seed (default: random, printed)
 *
 * Layout: both services in one forked child (the real createApp / startAuthGateway on the throwaway
 * database, in-process token store, logs off), the generator and the raw-socket client in this
 * process. The gateway allows 2 failed logins per name before 429, so the malformed logins cost a
 * bounded number of scrypt runs; the rest of the load is parsing, validation and refusal.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { bootstrap, createApp, createDatabase, createLogger as createApiLogger, migrateLatest } from '@cairn/management-api';
import { createDeps, createLogger, readConfig, startAuthGateway } from '../services/auth-gateway/src';
import { hashPassword } from '../packages/domain/src/password-hash';
import { listen } from '../packages/runtime/src';
import { hostileRequest } from '../test-e2e/hostile/arbitraries';
import { LOGIN_PASSWORD, prepareContext, startTrap } from '../test-e2e/hostile/context';
import { formatFailures, runRequests, runSeed, sampleStream, Targets, type RunResult } from '../test-e2e/hostile/runner';
import { changedTables, snapshot } from '../test-e2e/hostile/snapshot';
import { intEnv, stringEnv } from './lib/env';
import { runBenchmark } from './lib/main';
import { throwawayDatabase } from './lib/postgres';
import { fmtInt, table } from './lib/report';

const ADMIN_NAME = 'root';
const ADMIN_KEY = 'bench-hostile-admin-key-0123456789abcdefgh';
const ADMIN_AUTH = `ApiKey ${ADMIN_NAME}:${ADMIN_KEY}`;
const ROLE = 'services';

/** In the child: both services on the database the parent made; ports back over IPC. */
async function serveBoth(): Promise<void> {
  const url = process.env.BENCH_HOSTILE_DATABASE_URL!;
  const db = createDatabase({ url, poolMax: 10 });
  await migrateLatest(db);
  await bootstrap(db, {
    adminUser: ADMIN_NAME,
    adminKey: ADMIN_KEY,
    defaultCluster: 'default',
    defaultAuthUrl: 'http://127.0.0.1:5000/auth',
    defaultStorageUrl: 'http://127.0.0.1:8080/v1',
  } as Parameters<typeof bootstrap>[1]);
  const app = createApp({ db, log: createApiLogger('silent'), hashPassword: (p: string) => hashPassword(p), apiKeyCacheMs: 5000 } as Parameters<typeof createApp>[0]);
  const api = await listen(app, 0, '127.0.0.1');
  const config = readConfig({ CAIRN_GATEWAY_HOST: '127.0.0.1', CAIRN_GATEWAY_PORT: '0', LOG_LEVEL: 'silent', CAIRN_LOGIN_FAILURE_LIMIT: '2' });
  const deps = await createDeps(config, { db, log: createLogger('silent') });
  const gateway = await startAuthGateway(config, deps);
  process.send!({ api: api.port, gateway: gateway.port });
  process.on('disconnect', () => {
    setTimeout(() => process.exit(0), 2000).unref();
    void gateway
      .close()
      .then(() => new Promise((r) => api.server.close(r)))
      .then(() => db.destroy())
      .finally(() => process.exit(0));
  });
}

function startServices(databaseUrl: string): Promise<{ proc: ChildProcess; api: number; gateway: number }> {
  const proc = fork(__filename, [`--bench-serve=${ROLE}`], {
    env: { ...process.env, BENCH_HOSTILE_DATABASE_URL: databaseUrl },
    execArgv: process.execArgv,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('services did not start within 60 s')), 60_000);
    proc.once('message', (m: { api: number; gateway: number }) => {
      clearTimeout(timer);
      resolve({ proc, ...m });
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`services exited early with code ${code}`));
    });
  });
}

function report(result: RunResult): void {
  const classes = ['2xx', '3xx', '4xx', '5xx', 'failed'];
  console.log(
    table(
      ['', 'requests', ...classes],
      (['api', 'gateway'] as const).map((s) => [s, fmtInt(result.byService[s].total), ...classes.map((c) => fmtInt(result.byService[s].byClass[c] ?? 0))]),
    ),
  );
  const top = [...result.tally.byStatus.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
  console.log(`statuses: ${top.map(([s, n]) => `${s}: ${fmtInt(n)}`).join(', ')}`);
  console.log(`${fmtInt(result.tally.total)} requests in ${result.seconds.toFixed(1)} s = ${fmtInt(result.tally.total / result.seconds)} req/s`);
}

runBenchmark({
  serve: async (role) => {
    if (role !== ROLE) throw new Error(`unknown role ${role}`);
    await serveBoth();
  },
  main: async (cleanups) => {
    const total = intEnv('BENCH_HOSTILE_REQUESTS', 1_000_000);
    const connections = intEnv('BENCH_CONNECTIONS', 32);
    const seed = runSeed();
    const pgUrl = stringEnv('BENCH_PG_URL', 'postgres://postgres@127.0.0.1:5432/postgres');
    console.log(`hostile input: ${fmtInt(total)} requests, ${connections} connections per service, seed ${seed}`);

    const database = await throwawayDatabase(cleanups, pgUrl, 'cairn_bench_hostile_');
    const services = await startServices(database.url);
    let crashes = 0;
    let stopping = false;
    services.proc.on('exit', (code, signal) => {
      if (!stopping) {
        crashes += 1;
        console.error(`\nthe services' process died (code ${code}, signal ${signal})`);
      }
    });
    cleanups.push(async () => {
      stopping = true;
      if (services.proc.connected) services.proc.disconnect();
      await new Promise((r) => (services.proc.exitCode !== null ? r(null) : services.proc.once('exit', r)));
    });
    const apiUrl = `http://127.0.0.1:${services.api}`;
    const gatewayUrl = `http://127.0.0.1:${services.gateway}`;
    const trap = await startTrap();
    cleanups.push(trap.close);
    const ctx = await prepareContext(apiUrl, gatewayUrl, ADMIN_AUTH, trap.url, 'bench');
    const db = createDatabase({ url: database.url, poolMax: 1 });
    cleanups.push(() => db.destroy());
    const targets = new Targets(apiUrl, gatewayUrl, connections);
    cleanups.push(async () => targets.close());

    const before = await snapshot(db);
    let lastReport = Date.now();
    const result = await runRequests(sampleStream(hostileRequest(ctx), seed, total), targets, {
      concurrency: connections * 2,
      secrets: [ADMIN_KEY, ctx.readerAuth.split(':')[1]!, LOGIN_PASSWORD],
      keepFailures: 20,
      onProgress: (done) => {
        if (Date.now() - lastReport < 10_000) return;
        lastReport = Date.now();
        process.stdout.write(`  ${fmtInt(done)} / ${fmtInt(total)}\n`);
      },
    });
    const changed = changedTables(before, await snapshot(db));
    const alive = await Promise.all(
      [apiUrl, gatewayUrl].map((u) =>
        fetch(`${u}/healthz`)
          .then((r) => r.status === 200)
          .catch(() => false),
      ),
    );

    report(result);
    const checks: Array<[string, boolean]> = [
      ['5xx = 0', (result.tally.byClass['5xx'] ?? 0) === 0],
      ['every answer kept its properties (clear 4xx, no leak, no accepted write)', result.failureCount === 0],
      ['every request was answered', (result.tally.byClass.failed ?? 0) === 0],
      ['crashes = 0', crashes === 0],
      ['both services answer /healthz afterwards', alive.every(Boolean)],
      [`database unchanged (${Object.keys(before).join(', ')})`, changed.length === 0],
      ['no external entity fetched', trap.connections.length === 0],
    ];
    for (const [text, ok] of checks) console.log(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
    if (result.failureCount) console.log(formatFailures(result, seed));
    if (changed.length) console.log(changed.join('\n'));
    if (checks.some(([, ok]) => !ok)) throw new Error(`hostile input: a property failed (seed ${seed})`);
  },
});
