/**
 * Hostile-input run: a million random hostile requests against every endpoint of both
 * services, from the jest suite's generators (test-e2e/hostile/arbitraries.ts), every answer
 * checked. Not a speed benchmark: it reports requests/s for scale, but it fails (exit 1) on what
 * matters: any 5xx, any 4xx without a clear message, any leak or accepted write, a request never
 * answered, a service that dies or stops answering /healthz, any change to the database, and any
 * connection to the trap that external XML entities point at.
 *
 *   pnpm bench:hostile                                  # 1,000,000 requests
 *   BENCH_HOSTILE_REQUESTS=20000 pnpm bench:hostile     # smoke run
 *   HOSTILE_SEED=123 pnpm bench:hostile                 # replay a run (same request count)
 *
 * Then a token flood: one user logging in from 64 connections at once (lib/hostile-tokens.ts,
 * BENCH_HOSTILE_TOKEN_SECONDS per flood, 0 to skip).
 *
 * Environment (all optional):
 *   BENCH_PG_URL                     Postgres server for the throwaway database cairn_bench_hostile_<random>
 *                                    (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_REDIS_URL                  the gateway's REDIS_URL (default redis://127.0.0.1:6379); its keys live
 *                                    under the run's own cluster uuid
 *   BENCH_HOSTILE_REQUESTS           total requests, about half to each service (default 1000000)
 *   BENCH_CONNECTIONS                requests in flight per service (default 32), over keep-alive connections
 *                                    (one request at a time each; no pipelining)
 *   BENCH_HOSTILE_API_REPLICAS       management API processes on the database, requests spread in turn (default 2)
 *   BENCH_HOSTILE_LOGIN_PER_ADDRESS  the gateway's failed logins per address before 429 (default 10)
 *   BENCH_HOSTILE_LOGIN_PER_NAME     the gateway's failed logins per name before 429 (default 2)
 *   BENCH_HOSTILE_LOGIN_WINDOW       seconds of both login windows (default 86400: the whole run)
 *   BENCH_CPU_PROF                   a directory: the services write V8 CPU profiles there
 *   HOSTILE_SEED                     the run's seed (default: random, printed)
 *
 * Layout: the management API (two replicas, as in compose: one event loop cannot keep up with the
 * API's half of the load, measured) and the gateway in processes of their own, started from
 * variables like a deployment (the API on the throwaway database, the gateway on it and on Redis,
 * logs off); the generator, the raw-socket client and the checks in this process.
 *
 * Password checks are bounded on purpose. Every failed login costs one scrypt run (about 0.1-0.5 s
 * of a core) and a random request stream would make the run a KDF benchmark. The gateway is
 * configured as a deployment may be, with low failure limits: 2 per login name (the generators draw
 * names from a small pool) and BENCH_HOSTILE_LOGIN_PER_ADDRESS per client address over the whole
 * run, so after the first few dozen failures every well-formed login is answered 429 before the
 * KDF. Everything before the limiter (HTTP parsing, body limits, content types, JSON/XML, schema
 * validation) still sees every login request; the report prints how many KDF runs there were.
 */
import { createDatabase } from '@cairn/management-api';
import { hostileRequest } from '../test-e2e/hostile/arbitraries';
import { LOGIN_PASSWORD, prepareContext, startTrap } from '../test-e2e/hostile/context';
import { RawPool } from '../test-e2e/hostile/raw-http';
import { runSeed, sampleStream } from '../test-e2e/hostile/runner';
import { changedTables, snapshot } from '../test-e2e/hostile/snapshot';
import { cpuShares, cpuSnapshot, party, type ProcInfo } from './lib/cpu';
import { intEnv, stringEnv } from './lib/env';
import { runHostileLoad, watchHealth } from './lib/hostile-load';
import { runBodyFlood } from './lib/hostile-bodies';
import { kdfRuns, loadAverage, metricsSize, printChecks, printReport } from './lib/hostile-report';
import { pidOf, ReplicaTargets, serveHostile, startServices } from './lib/hostile-services';
import { runTokenFlood, serveTokenFloodGateway, TOKEN_FLOOD_GATEWAY_ROLE } from './lib/hostile-tokens';
import { runBenchmark } from './lib/main';
import { throwawayDatabase } from './lib/postgres';
import { fmtCores, fmtInt } from './lib/report';

const ADMIN_NAME = 'root';
/** Not a secret: it only ever opens a throwaway database. */
const ADMIN_KEY = 'bench-hostile-admin-key-0123456789abcdefgh';
/** fast-check draws this many requests per `sample` call (part of what a seed replays). */
const SAMPLE_BATCH = 1000;

runBenchmark({
  serve: (role) => (role === TOKEN_FLOOD_GATEWAY_ROLE ? serveTokenFloodGateway() : serveHostile(role)),
  main: async (cleanups) => {
    const total = intEnv('BENCH_HOSTILE_REQUESTS', 1_000_000);
    const connections = intEnv('BENCH_CONNECTIONS', 32);
    const apiReplicas = intEnv('BENCH_HOSTILE_API_REPLICAS', 2);
    const limits = {
      perName: intEnv('BENCH_HOSTILE_LOGIN_PER_NAME', 2),
      perAddress: intEnv('BENCH_HOSTILE_LOGIN_PER_ADDRESS', 10),
      windowSeconds: intEnv('BENCH_HOSTILE_LOGIN_WINDOW', 86400),
    };
    const seed = runSeed();
    const pgUrl = stringEnv('BENCH_PG_URL', 'postgres://postgres@127.0.0.1:5432/postgres');
    const redisUrl = stringEnv('BENCH_REDIS_URL', 'redis://127.0.0.1:6379');
    const profDir = stringEnv('BENCH_CPU_PROF');
    console.log(
      `hostile input: ${fmtInt(total)} requests, ${connections} in flight per service, ${apiReplicas} API replicas, seed ${seed} (replay: HOSTILE_SEED=${seed} BENCH_HOSTILE_REQUESTS=${total})`,
    );
    console.log(
      `gateway login limits: ${limits.perName} failures per name, ${limits.perAddress} per address, window ${limits.windowSeconds} s: ` +
        'most well-formed logins are refused 429 before the password KDF (bounded scrypt work, see the header of bench/hostile.bench.ts)',
    );
    console.log(`load average before: ${loadAverage()}`);

    const database = await throwawayDatabase(cleanups, pgUrl, 'cairn_bench_hostile_');
    const services = await startServices(
      __filename,
      { databaseUrl: database.url, redisUrl, adminUser: ADMIN_NAME, adminKey: ADMIN_KEY, limits },
      apiReplicas,
      profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`] : [],
    );
    cleanups.push(services.stop);
    const apiUrls = services.apis.map((a) => `http://127.0.0.1:${a.port}`);
    const apiUrl = apiUrls[0]!;
    const gatewayUrl = `http://127.0.0.1:${services.gateway.port}`;
    const trap = await startTrap();
    cleanups.push(trap.close);
    const ctx = await prepareContext(apiUrl, gatewayUrl, `ApiKey ${ADMIN_NAME}:${ADMIN_KEY}`, trap.url, 'bench');
    const db = createDatabase({ url: database.url, poolMax: 1 });
    cleanups.push(() => db.destroy());
    const targets = new ReplicaTargets(
      apiUrls.map((u) => new RawPool(u, connections)),
      new RawPool(gatewayUrl, connections),
    );
    cleanups.push(async () => targets.close());
    const kdfBefore = await kdfRuns(gatewayUrl);
    const metricsBefore = [await metricsSize(apiUrl), await metricsSize(gatewayUrl)];

    const before = await snapshot(db);
    const health = watchHealth([...apiUrls, gatewayUrl]);
    const cpuBefore = cpuSnapshot();
    const parties = [
      { name: 'api', match: (p: ProcInfo) => services.apis.some((a) => pidOf(a) === p.pid) },
      party.pid('gateway', pidOf(services.gateway)),
      party.self('client'),
      party.comm('postgres', 'postgres'),
      party.comm('redis', 'redis-server'),
    ];
    let last = { at: performance.now(), done: 0, cpu: cpuBefore };
    const result = await runHostileLoad(sampleStream(hostileRequest(ctx), seed, total, SAMPLE_BATCH), targets, {
      concurrency: connections * 2,
      secrets: [ADMIN_KEY, ctx.readerAuth.split(':')[1]!, LOGIN_PASSWORD],
      keepFailures: 20,
      onProgress: (done) => {
        const now = performance.now();
        if (now - last.at < 10_000) return;
        const cpu = cpuSnapshot();
        const cores = cpuShares(last.cpu, cpu, parties)
          .map((c) => `${c.name} ${fmtCores(c.cores)}`)
          .join(', ');
        console.log(
          `  ${fmtInt(done)} / ${fmtInt(total)}  ${fmtInt(((done - last.done) * 1000) / (now - last.at))} req/s  load ${loadAverage()}  cores: ${cores}`,
        );
        last = { at: now, done, cpu };
      },
    });
    const cpuAfter = cpuSnapshot();
    await health.stop();
    const changed = changedTables(before, await snapshot(db));
    const kdfAfter = await kdfRuns(gatewayUrl);
    const bodies = await runBodyFlood(
      { base: apiUrl, pid: pidOf(services.apis[0]!) },
      { base: gatewayUrl, pid: pidOf(services.gateway) },
    );
    const alive = await Promise.all(
      [...apiUrls, gatewayUrl].map((u) =>
        fetch(`${u}/healthz`).then(
          (r) => r.status === 200,
          () => false,
        ),
      ),
    );

    printReport(result, {
      cpu: cpuShares(cpuBefore, cpuAfter, parties),
      kdf: kdfBefore === null || kdfAfter === null ? null : kdfAfter - kdfBefore,
      metrics: [
        `api (first replica) /metrics before / after the load: ${metricsBefore[0]} / ${await metricsSize(apiUrl)}`,
        `gateway /metrics before / after the load: ${metricsBefore[1]} / ${await metricsSize(gatewayUrl)}`,
      ],
    });
    const failed = printChecks(
      [
        ['5xx = 0', (result.all.byClass['5xx'] ?? 0) === 0],
        [
          'every answer kept its properties (4xx with a clear message, no leak, no accepted write)',
          result.failureCount === 0,
        ],
        ['every request was answered', (result.all.byClass.failed ?? 0) === 0],
        [
          `crashes = 0 (process exits: ${services.crashes.length}, failed /healthz probes: ${health.failures.length} of ${health.probes()})`,
          services.crashes.length === 0 && health.failures.length === 0,
        ],
        ['every service process answers /healthz afterwards', alive.every(Boolean)],
        [`database unchanged (${Object.keys(before).join(', ')})`, changed.length === 0],
        [`no external entity fetched (trap connections: ${trap.connections.length})`, trap.connections.length === 0],
        ...bodies.checks,
      ],
      [
        ...services.crashes,
        ...health.failures.slice(0, 10),
        ...changed,
        ...trap.connections.slice(0, 5).map((c) => `trap: ${JSON.stringify(c)}`),
      ],
      result,
      seed,
      total,
    );
    // After the checks above: the flood creates users of its own.
    const floodFailed = await runTokenFlood(
      {
        script: __filename,
        apiUrl,
        adminAuth: `ApiKey ${ADMIN_NAME}:${ADMIN_KEY}`,
        databaseUrl: database.url,
        redisUrl,
        redisGateway: services.gateway,
      },
      cleanups,
    );
    if (failed) throw new Error(`hostile input: a property failed (seed ${seed})`);
    if (floodFailed) throw new Error('hostile input: the token flood failed');
  },
});
