/**
 * management-api benchmark. A benchmark, not a test: it prints figures, compares
 * them with its targets and says PASS/FAIL, but exits non-zero only when something is broken
 * (setup failure, a non-2xx response, socket errors or timeouts), never because a target was missed.
 *
 *   pnpm bench                                          # full size: 1,000,000 users, 10 s per scenario
 *   BENCH_USERS=100000 BENCH_DURATION=3 pnpm bench      # quick smoke run
 *
 * Environment (all optional):
 *   DATABASE_URL       use this database (migrated, bench rows added, kept) instead of a throwaway one
 *   BENCH_PG_URL       server on which the throwaway database cairn_bench_<random> is created and
 *                      dropped (default postgres://postgres@127.0.0.1:5432/postgres)
 *   BENCH_USERS        storage users to seed (default 1000000)
 *   BENCH_CLUSTERS     clusters they are spread over, round-robin (default 10)
 *   BENCH_DURATION     seconds measured per scenario (default 10)
 *   BENCH_WARMUP       seconds of unmeasured warm-up before each scenario (default 3)
 *   BENCH_CONNECTIONS  concurrent autocannon connections (default 10)
 *   BENCH_POOL_MAX     DATABASE_POOL_MAX of the API (default 10, one Postgres connection per socket)
 *   BENCH_SCENARIOS    comma-separated subset of the scenario keys (default all; the unknown-key error
 *                      lists them): page1, deep, detail, then one per documented list filter and
 *                      ordering, each on page 1 and deep (`…_deep`), see LIST_SCENARIOS
 *   CAIRN_DATABASE_PREPARED_STATEMENTS  passed to the API (false: statements sent unnamed, as behind
 *                      a PgBouncer older than 1.21)
 *   BENCH_CPU_PROF     a directory: the API child runs with --cpu-prof and writes its profile there
 *   BENCH_TASTYPIE     1: measure the django-tastypie anchor (bench/tastypie) beside page1,
 *                      cluster__name, detail and deep, and fail when it cannot run; 0: do not; unset:
 *                      measure it when Debian's packages for it are installed, else say why not
 *   BENCH_TASTYPIE_WORKERS  the anchor's gunicorn workers (default one per core, as the API child's
 *                      one process and Postgres share the cores; 1 is gunicorn's default and a
 *                      process against Cairn's one process)
 *   BENCH_STACK        1: also measure the stack's ceiling beside page1, cluster__name, detail and
 *                      deep: bare express running the statements the API sends for the same request
 *                      on the same knex and node-postgres (lib/stack-ceiling.ts)
 *
 * Process layout. The machine this was written for has 2 cores shared with Postgres. The hello-world
 * baseline and the API each run in their own child process (forked from this file), and autocannon
 * runs in this parent process. So the load generator never shares an event loop with a server, and
 * both servers are measured the same way: one Node process each, same express version, same
 * loopback, same load generator, same connections and duration. Only one server is under load at a
 * time (the other sits idle). The baseline is measured first and again after every API scenario; each
 * ratio divides by the mean of the two baseline runs around that scenario, so a noisy neighbour that
 * comes and goes during the run hurts both sides of a ratio instead of only one.
 *
 * The CPU column (from /proc) says where the cores went during each measurement: the server process,
 * the Postgres backends of the benchmark's database (not other databases' on a shared server, see
 * backendsOf), autocannon (this process), and the rest of the machine ("other", e.g. other
 * tenants); it is how a missed target is attributed to Node or to Postgres.
 *
 * Latency percentiles are computed here from every response time autocannon reports (sub-millisecond
 * precision; autocannon's own histogram rounds to whole milliseconds).
 *
 * What is common to the benchmarks (children, load, CPU accounting, baseline bracketing, report,
 * cleanup) lives in ./lib.
 */
import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import {
  bootstrap,
  createApp,
  createDeps,
  ensureHourlyPartitions,
  migrateLatest,
  readConfig,
  type Deps,
} from '@cairn/management-api';
import { BASELINE_ROLE, serveApp, startChild, stopChild } from './lib/children';
import { party } from './lib/cpu';
import { intEnv, loadEnv, stringEnv } from './lib/env';
import { checkOnce, measureBracketed, type LoadSettings, type Measured, type Scenario } from './lib/load';
import { runBenchmark, type Cleanups } from './lib/main';
import { backendsOf, throwawayDatabase } from './lib/postgres';
import { startTastypie, tastypieMissing, type TastypieAnchor } from './lib/tastypie';
import { fmtInt, fmtMs, printResults, ratio, verdict, type Verdict } from './lib/report';
import { listScenarios } from './lib/user-lists';
import { serveStackCeiling, STACK_ROLE, type StackPaths } from './lib/stack-ceiling';

// ---------------------------------------------------------------------------------------------
// Settings

const SETTINGS = {
  users: intEnv('BENCH_USERS', 1_000_000),
  clusters: intEnv('BENCH_CLUSTERS', 10),
  ...loadEnv(10),
  poolMax: intEnv('BENCH_POOL_MAX', 10),
  pgServerUrl: stringEnv('BENCH_PG_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
  databaseUrl: stringEnv('DATABASE_URL'),
  cpuProfDir: stringEnv('BENCH_CPU_PROF'),
  tastypie: stringEnv('BENCH_TASTYPIE'),
  tastypieWorkers: intEnv('BENCH_TASTYPIE_WORKERS', availableParallelism()),
  stack: stringEnv('BENCH_STACK') === '1',
};

/** The scenarios measured beside the django-tastypie anchor (plain tastypie over the same users). */
const ANCHORED = ['page1', 'cluster__name', 'detail', 'deep'];

/** Users inserted per statement while seeding (with their quota records and usage samples). */
const SEED_BATCH = 1_000_000;

const LIST_SCENARIOS = listScenarios(SETTINGS.users, SETTINGS.clusters);
const ALL_SCENARIOS = ['page1', 'deep', 'detail', ...LIST_SCENARIOS.map((s) => s.key)];

/** BENCH_SCENARIOS: a subset to measure while iterating on one of them. */
function scenarioSelection(): Set<string> {
  const raw = stringEnv('BENCH_SCENARIOS');
  if (!raw) return new Set(ALL_SCENARIOS);
  const keys = raw
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const unknown = keys.filter((k) => !ALL_SCENARIOS.includes(k));
  if (unknown.length)
    throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')} (known: ${ALL_SCENARIOS.join(', ')})`);
  return new Set(keys);
}

/** The offset=900000 for 1,000,000 users; scaled the same way in quick mode. */
const DEEP_OFFSET = Math.floor(SETTINGS.users * 0.9);

const ADMIN_USER = 'bench-admin';
/** Not a secret: it only ever opens a throwaway benchmark database on loopback. */
const ADMIN_KEY = 'cairn-bench-admin-key-not-a-secret-0123456789';
const AUTHORIZATION = `ApiKey ${ADMIN_USER}:${ADMIN_KEY}`;
const API_HEADERS = { authorization: AUTHORIZATION, accept: 'application/json' };

const TARGETS = {
  page1P50Ms: 10,
  page1Ratio: 0.3,
  detailRatio: 0.4,
  deepP50Ms: 100,
  /** Every list filter and ordering, page 1 and deep, with an exact total_count. */
  listP50Ms: 10,
  /**
   * Throughput as a fraction of the baseline around it, at least what the release before users
   * showed their quota state and usage measured on the same machine and settings (medians of
   * alternated runs at 100,000 users, see docs/benchmarks.md): those fields may not cost speed.
   */
  floorRatio: { page1: 0.17, cluster__name: 0.21, detail: 0.38, deep: 0.18 } as Record<string, number>,
  /**
   * The size floorRatio was measured at, and the only one it holds at: the lists' exact totals and
   * the deep page's offset grow with the users, so at 10,000,000 a floor of 100,000 says FAIL of a
   * tree that is as fast as it was.
   */
  floorUsers: 100_000,
};

// ---------------------------------------------------------------------------------------------
// Child process: the API under test (the baseline is served by ./lib)

const API_ROLE = 'api';

async function serve(role: string): Promise<void> {
  if (role === STACK_ROLE) return serveStackCeiling(process.env.BENCH_CHILD_DATABASE_URL!, SETTINGS.poolMax);
  if (role !== API_ROLE) throw new Error(`unknown role ${role}`);
  const config = readConfig({
    DATABASE_URL: process.env.BENCH_CHILD_DATABASE_URL,
    DATABASE_POOL_MAX: String(SETTINGS.poolMax),
    LOG_LEVEL: 'warn',
    CAIRN_MIGRATE_ON_START: 'false',
    CAIRN_CREATE_DEFAULT_CLUSTER: 'false',
    // Passed on, to measure the API as it runs behind a PgBouncer that carries no prepared statements.
    ...(process.env.CAIRN_DATABASE_PREPARED_STATEMENTS === undefined
      ? {}
      : { CAIRN_DATABASE_PREPARED_STATEMENTS: process.env.CAIRN_DATABASE_PREPARED_STATEMENTS }),
  });
  const deps = createDeps(config);
  serveApp(createApp(deps), () => deps.db.destroy());
}

// ---------------------------------------------------------------------------------------------
// Database: schema, seed

interface Seeded {
  clusterIds: number[];
  clusterNames: string[];
  clusterUuids: string[];
  minUserId: number;
  maxUserId: number;
  totalUsers: number;
  seedSeconds: number;
  vacuumSeconds: number;
  reused: boolean;
  postgres: string;
  tableSize: string;
}

async function seed(databaseUrl: string): Promise<Seeded> {
  const deps = createDeps(
    readConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', CAIRN_CREATE_DEFAULT_CLUSTER: 'false' }),
  );
  const { db } = deps;
  try {
    await migrateLatest(db);
    await bootstrap(db, {
      adminUser: ADMIN_USER,
      adminKey: ADMIN_KEY,
      defaultCluster: 'default',
      createDefaultCluster: false,
      defaultAuthUrl: 'http://127.0.0.1:5000/auth',
      defaultStorageUrl: 'http://127.0.0.1:8080/v1',
    });
    // bootstrap only creates an admin while there is no operator at all: in a database given with
    // DATABASE_URL that already has operators, add the bench admin (unrestricted) and its key here.
    await db.raw(`INSERT INTO operators (name, role) VALUES (?, 'admin') ON CONFLICT (name) DO NOTHING`, [ADMIN_USER]);
    await db.raw(
      `INSERT INTO api_keys (operator_id, key_hash) SELECT id, ? FROM operators WHERE name = ? ON CONFLICT (key_hash) DO NOTHING`,
      [createHash('sha256').update(ADMIN_KEY, 'utf8').digest(), ADMIN_USER],
    );

    await db.raw(
      `INSERT INTO clusters (name, uuid, auth_url, storage_url, region)
       SELECT 'bench-' || lpad(i::text, 3, '0'), gen_random_uuid(), 'http://127.0.0.1:5000/auth',
              'http://127.0.0.1:8080/v1', 'RegionOne'
         FROM generate_series(0, ? - 1) AS i
       ON CONFLICT (name) DO NOTHING`,
      [SETTINGS.clusters],
    );
    const clusterRows = (await db.raw(
      `SELECT id, name, uuid FROM clusters WHERE name LIKE 'bench-%' ORDER BY name LIMIT ?`,
      [SETTINGS.clusters],
    )) as {
      rows: Array<{ id: number; name: string; uuid: string }>;
    };
    const clusterIds = clusterRows.rows.map((r) => Number(r.id));

    const existing = await db.raw(`SELECT count(*)::bigint AS n FROM storage_users WHERE cluster_id = ANY(?::int[])`, [
      clusterIds,
    ]);
    const reused = Number(existing.rows[0].n) === SETTINGS.users;
    let seedSeconds = 0;
    let vacuumSeconds = 0;
    if (!reused) {
      // One real scrypt hash (default parameters) for every row: the benchmark measures reads.
      const passwordHash = await deps.hashPassword('bench-password-never-used-for-login');
      const t0 = performance.now();
      await db.raw(`DELETE FROM storage_users WHERE cluster_id = ANY(?::int[])`, [clusterIds]);
      // Round-robin over the clusters, as users created over time would be: each cluster's users are
      // spread over the whole heap, not stored next to each other.
      // Every tenth user with a byte quota (where the schema has quotas), as an operator would set.
      const quotas = await hasRelation(db, 'quota_applications');
      // In statements of SEED_BATCH users, each with every trigger and index as the API's own
      // inserts: one statement of 10,000,000 rows would hold them all in its transition tables.
      // Every user's sample at the same hour, the one the run starts in.
      const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
      for (let lo = 1; lo <= SETTINGS.users; lo += SEED_BATCH) {
        const hi = Math.min(SETTINGS.users, lo + SEED_BATCH - 1);
        await db.raw(
          `INSERT INTO storage_users (cluster_id, username, password_hash${quotas ? ', quota_bytes' : ''})
           SELECT (?::int[])[1 + (g - 1) % ?], 'user' || lpad(g::text, 8, '0'), ?
                  ${quotas ? ', CASE WHEN g % 10 = 0 THEN 1073741824 END' : ''}
             FROM generate_series(?::int, ?::int) AS g`,
          [clusterIds, clusterIds.length, passwordHash, lo, hi],
        );
        await seedQuotasAndUsage(
          db,
          clusterIds,
          quotas,
          `user${String(lo).padStart(8, '0')}`,
          `user${String(hi).padStart(8, '0')}`,
          hour,
        );
        if (SETTINGS.users > SEED_BATCH)
          console.log(`  ${fmtInt(hi)} users (${((performance.now() - t0) / 1000).toFixed(0)} s)`);
      }
      seedSeconds = (performance.now() - t0) / 1000;
      const t1 = performance.now();
      await db.raw('VACUUM ANALYZE');
      vacuumSeconds = (performance.now() - t1) / 1000;
    }

    const range = await db.raw(
      `SELECT min(id)::bigint AS lo, max(id)::bigint AS hi, count(*)::bigint AS n FROM storage_users WHERE cluster_id = ANY(?::int[])`,
      [clusterIds],
    );
    const total = await db.raw(`SELECT count(*)::bigint AS n FROM storage_users`);
    const version = await db.raw(
      `SELECT current_setting('server_version') AS v, current_setting('shared_buffers') AS sb`,
    );
    const size = await db.raw(`SELECT pg_size_pretty(pg_total_relation_size('storage_users')) AS s`);
    const r = range.rows[0] as { lo: string; hi: string; n: string };
    if (Number(r.hi) - Number(r.lo) + 1 !== Number(r.n)) {
      throw new Error(`bench user ids are not contiguous (${r.lo}..${r.hi} for ${r.n} rows); use a fresh database`);
    }
    return {
      clusterIds,
      clusterNames: clusterRows.rows.map((c) => c.name),
      clusterUuids: clusterRows.rows.map((c) => c.uuid),
      minUserId: Number(r.lo),
      maxUserId: Number(r.hi),
      totalUsers: Number(total.rows[0].n),
      seedSeconds,
      vacuumSeconds,
      reused,
      postgres: `PostgreSQL ${version.rows[0].v}, shared_buffers ${version.rows[0].sb}`,
      tableSize: String(size.rows[0].s),
    };
  } finally {
    await db.destroy();
  }
}

/** Whether the schema has this table (the benchmark also runs against releases without it). */
async function hasRelation(db: Deps['db'], name: string): Promise<boolean> {
  const found = await db.raw('SELECT to_regclass(?) AS r', [name]);
  return found.rows[0].r !== null;
}

/**
 * What users show beside their quotas, so each page reads real rows of them: the quota
 * reconciler's record of the users with a quota (applied), and a storage sample of every user's
 * account at the current hour, written as the collector writes them (one hourly row each).
 */
async function seedQuotasAndUsage(
  db: Deps['db'],
  clusterIds: number[],
  quotas: boolean,
  firstName: string,
  lastName: string,
  hour: Date,
): Promise<void> {
  if (quotas) {
    await db.raw(
      `INSERT INTO quota_applications (user_id, cluster_id, wanted_version, applied_version, applied_at)
       SELECT id, cluster_id, 1, 1, now() FROM storage_users
        WHERE cluster_id = ANY(?::int[]) AND username BETWEEN ? AND ? AND quota_bytes IS NOT NULL`,
      [clusterIds, firstName, lastName],
    );
  }
  await ensureHourlyPartitions(db, [hour.getTime()]);
  await db.raw(
    `INSERT INTO utilization_storage_hourly
       (cluster_id, policy_index, account, hour, bytes_used, object_count, container_count, slots, slot_count)
     SELECT cluster_id, -1, 'AUTH_' || username, ?, (id % 1000) * 1048576, id % 1000, 1, 1, 1
       FROM storage_users WHERE cluster_id = ANY(?::int[]) AND username BETWEEN ? AND ?`,
    [hour, clusterIds, firstName, lastName],
  );
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(cleanups: Cleanups): Promise<void> {
  const started = new Date();
  const selected = scenarioSelection();
  console.log(
    `management-api benchmark: ${fmtInt(SETTINGS.users)} users over ${SETTINGS.clusters} clusters, ` +
      `${SETTINGS.connections} connections, ${SETTINGS.warmup} s warm-up + ${SETTINGS.duration} s per scenario, pool max ${SETTINGS.poolMax}`,
  );

  let databaseUrl = SETTINGS.databaseUrl;
  if (!databaseUrl) databaseUrl = (await throwawayDatabase(cleanups, SETTINGS.pgServerUrl)).url;
  else console.log('using DATABASE_URL (bench rows are added and kept)');

  console.log('seeding ...');
  const seeded = await seed(databaseUrl);
  console.log(
    seeded.reused
      ? `  reusing ${fmtInt(SETTINGS.users)} bench users already present`
      : `  inserted ${fmtInt(SETTINGS.users)} users in ${seeded.seedSeconds.toFixed(1)} s, VACUUM ANALYZE ${seeded.vacuumSeconds.toFixed(1)} s`,
  );
  console.log(
    `  storage_users: ${fmtInt(seeded.totalUsers)} rows, ${seeded.tableSize} with indexes; ${seeded.postgres}`,
  );

  const childEnv = { ...process.env, BENCH_CHILD_DATABASE_URL: databaseUrl };
  const profArgs = SETTINGS.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', SETTINGS.cpuProfDir] : [];
  const [baseline, api] = await Promise.all([
    startChild(__filename, BASELINE_ROLE, childEnv),
    startChild(__filename, API_ROLE, childEnv, profArgs),
  ]);
  cleanups.push(() => stopChild(baseline));
  cleanups.push(() => stopChild(api));

  const baselineTarget = { port: baseline.port, server: party.pid('server', baseline.proc.pid!) };
  const apiTarget = { port: api.port, server: party.pid('server', api.proc.pid!) };
  let clusterTurn = 0;
  const pick = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));
  const apiGet = (path: () => string) => () => ({ path: path(), headers: API_HEADERS });
  const scenarios = {
    baseline: { key: 'baseline', label: 'express hello world', target: baselineTarget, request: () => ({ path: '/' }) },
    page1: {
      key: 'page1',
      label: 'users page 1 by cluster',
      target: apiTarget,
      request: apiGet(() => `/api/v1/users/?cluster=${seeded.clusterIds[clusterTurn++ % seeded.clusterIds.length]}`),
    },
    deep: {
      key: 'deep',
      label: `users offset=${DEEP_OFFSET}`,
      target: apiTarget,
      request: apiGet(() => `/api/v1/users/?offset=${DEEP_OFFSET}`),
    },
    detail: {
      key: 'detail',
      label: 'user detail',
      target: apiTarget,
      request: apiGet(() => `/api/v1/users/${pick(seeded.minUserId, seeded.maxUserId)}/`),
    },
  } satisfies Record<string, Scenario>;
  const listTurns = new Map<string, number>();
  const listed = new Map<string, Scenario>(
    LIST_SCENARIOS.map((l) => {
      const scenario: Scenario = {
        key: l.key,
        label: l.label,
        target: apiTarget,
        // Some orderings take seconds a page under load (see the report): warm-up and measurement
        // share one run, so a warm-up in which no answer completes yet is not taken for a failure.
        continuous: true,
        timeoutSeconds: 60,
        request: apiGet(() => {
          const turn = listTurns.get(l.key) ?? 0;
          listTurns.set(l.key, turn + 1);
          return l.path(seeded, turn);
        }),
      };
      return [l.key, scenario];
    }),
  );

  const perCluster = Math.floor(SETTINGS.users / SETTINGS.clusters);
  const json =
    <T>(check: (body: T) => string | null) =>
    (res: { text: string }) =>
      check(JSON.parse(res.text) as T);
  await checkOnce(
    scenarios.baseline,
    json<{ hello?: string }>((b) => (b.hello === 'world' ? null : 'unexpected body')),
  );
  await checkOnce(
    scenarios.page1,
    json<{ meta: { total_count: number }; objects: unknown[] }>((body) => {
      if (Math.abs(body.meta.total_count - perCluster) > 1)
        return `total_count ${body.meta.total_count}, expected ~${perCluster}`;
      return body.objects.length === Math.min(20, perCluster) ? null : `${body.objects.length} objects on page 1`;
    }),
  );
  await checkOnce(
    scenarios.deep,
    json<{ meta: { total_count: number; offset: number }; objects: unknown[] }>((body) => {
      if (body.meta.total_count !== seeded.totalUsers)
        return `total_count ${body.meta.total_count}, expected ${seeded.totalUsers}`;
      return body.objects.length === Math.min(20, seeded.totalUsers - DEEP_OFFSET)
        ? null
        : `${body.objects.length} objects on the deep page`;
    }),
  );
  await checkOnce(
    scenarios.detail,
    json<{ user?: string }>((b) => (typeof b.user === 'string' ? null : 'no user in detail')),
  );
  for (const l of LIST_SCENARIOS) {
    if (!selected.has(l.key)) continue;
    await checkOnce(
      listed.get(l.key)!,
      json<{ meta: { total_count: number }; objects: unknown[] }>((body) =>
        body.meta.total_count === l.total(seeded)
          ? null
          : `total_count ${body.meta.total_count}, expected exactly ${l.total(seeded)}`,
      ),
    );
    listTurns.set(l.key, 0);
  }
  console.log('sanity checks passed (200s with the expected shapes and exact totals)');

  // The anchor answers the same requests; each of its answers is checked against Cairn's once.
  const twins = new Map<string, Scenario>();
  const anchor = ANCHORED.some((k) => selected.has(k)) ? await anchorIfWanted(databaseUrl, cleanups) : null;
  if (anchor) {
    const target = { port: anchor.port, server: anchor.server };
    for (const key of ANCHORED.filter((k) => selected.has(k))) {
      const cairn = key in scenarios ? scenarios[key as keyof typeof scenarios] : listed.get(key)!;
      const twin: Scenario = { ...cairn, key: `${key}${TWIN}`, label: `${cairn.label} (tastypie)`, target };
      await sameAnswer(cairn, twin);
      twins.set(key, twin);
    }
    console.log('tastypie anchor: same total_count and same page of ids as Cairn for each anchored scenario');
  }
  const stackTwins = SETTINGS.stack
    ? await stackCeiling(scenarios, listed, seeded, childEnv, selected, cleanups)
    : null;

  console.log('load (autocannon in this process; each server in its own child process):');
  const { connections, warmup, duration } = SETTINGS;
  const settings: LoadSettings = {
    connections,
    warmup,
    duration,
    parties: [await backendsOf(cleanups, databaseUrl), party.self('loadgen')],
  };
  // Each anchored scenario is followed by the anchor's, so both are measured around the same time.
  const measured = ALL_SCENARIOS.filter((k) => selected.has(k)).flatMap((k) => [
    k in scenarios ? scenarios[k as keyof typeof scenarios] : listed.get(k)!,
    ...(twins.has(k) ? [twins.get(k)!] : []),
    ...(stackTwins?.has(k) ? [stackTwins.get(k)!] : []),
  ]);
  const run = await measureBracketed(scenarios.baseline, measured, settings);
  const page1 = run.byKey.get('page1');
  const deep = run.byKey.get('deep');
  const detail = run.byKey.get('detail');

  const verdicts = new Map<string, Verdict[]>();
  if (page1) {
    verdicts.set('page1', [
      verdict(`p50 <= ${TARGETS.page1P50Ms} ms`, page1.p50 <= TARGETS.page1P50Ms),
      verdict(`>= ${TARGETS.page1Ratio * 100} % of baseline`, ratio(page1) >= TARGETS.page1Ratio),
    ]);
  }
  if (deep) verdicts.set('deep', [verdict(`p50 <= ${TARGETS.deepP50Ms} ms`, deep.p50 <= TARGETS.deepP50Ms)]);
  if (detail)
    verdicts.set('detail', [
      verdict(`>= ${TARGETS.detailRatio * 100} % of baseline`, ratio(detail) >= TARGETS.detailRatio),
    ]);

  for (const l of LIST_SCENARIOS) {
    const m = run.byKey.get(l.key);
    if (m) verdicts.set(l.key, [verdict(`p50 <= ${TARGETS.listP50Ms} ms`, m.p50 <= TARGETS.listP50Ms)]);
  }
  const floors = SETTINGS.users === TARGETS.floorUsers ? Object.entries(TARGETS.floorRatio) : [];
  for (const [key, floor] of floors) {
    const m = run.byKey.get(key);
    if (m)
      verdicts.set(key, [
        ...(verdicts.get(key) ?? []),
        verdict(`>= ${(floor * 100).toFixed(1)} % of baseline (before quota fields)`, ratio(m) >= floor),
      ]);
  }
  // CPU time per request: steadier than req/s on a shared machine, and it says which side a cost is on.
  const msPerRequest = (party: number) => (m: Measured) => {
    const cores = m.cpu[party]?.cores;
    return cores === null || cores === undefined || m.rps === 0 ? undefined : fmtMs((cores * 1000) / m.rps);
  };

  // Each side as a fraction of the hello world measured around it, so that a neighbour who took
  // the cores during one side's run and not the other's moves the ratio less.
  const overTastypie = (m: Measured) => {
    const t = run.byKey.get(`${m.scenario.key}${TWIN}`);
    return t && t.rps > 0 ? ratio(m) / ratio(t) : undefined;
  };
  // CPU time per request of the server and Postgres together: what each side costs the machine,
  // steadier than req/s while other tenants take cores.
  const cpuMs = (m: Measured) => {
    const [server, postgres] = [m.cpu[0]?.cores, m.cpu[1]?.cores];
    return server == null || postgres == null || m.rps === 0 ? undefined : ((server + postgres) * 1000) / m.rps;
  };
  const tastypieCpuOver = (m: Measured) => {
    const t = run.byKey.get(`${m.scenario.key}${TWIN}`);
    const [ours, theirs] = [cpuMs(m), t && cpuMs(t)];
    return ours && theirs ? theirs / ours : undefined;
  };
  /** The stack's ceiling over the anchor, and Cairn's share of that ceiling. */
  const stackNote = (k: string): string => {
    const [m, s, t] = [run.byKey.get(k)!, run.byKey.get(`${k}${STACK}`), run.byKey.get(`${k}${TWIN}`)];
    if (!s || s.rps === 0) return `${k} -`;
    const overTastypie = t && t.rps > 0 ? `, ${fmtTimes(ratio(s) / ratio(t))} tastypie` : '';
    return `${k} ${(ratio(s) * 100).toFixed(1)} % of hello world${overTastypie}, Cairn at ${(ratio(m) / ratio(s)).toFixed(2)} of it`;
  };
  const quick = SETTINGS.users !== 1_000_000 || SETTINGS.clusters !== 10;
  printResults({
    title: `\nResults (${started.toISOString()}; ${fmtInt(SETTINGS.users)} users, ${SETTINGS.connections} connections, ${SETTINGS.duration} s each)`,
    ...run,
    verdicts,
    extraColumns: [
      ...(anchor ? [{ header: '× tastypie', cell: (m: Measured) => fmtTimes(overTastypie(m)) }] : []),
      { header: 'server CPU ms/req', cell: msPerRequest(0) },
      { header: 'postgres CPU ms/req', cell: msPerRequest(1) },
    ],
    notes: [
      ...(anchor
        ? [
            `× tastypie: Cairn's "vs baseline" over the django-tastypie anchor's, measured right after it (${anchor.versions}, ${anchor.workers} workers): ` +
              ANCHORED.filter((k) => run.byKey.has(k))
                .map((k) => `${k} ${fmtTimes(overTastypie(run.byKey.get(k)!))}`)
                .join(', '),
            `CPU per request (server + postgres), tastypie's over Cairn's: ` +
              ANCHORED.filter((k) => run.byKey.has(k))
                .map((k) => `${k} ${fmtTimes(tastypieCpuOver(run.byKey.get(k)!)) ?? '-'}`)
                .join(', '),
          ]
        : []),
      ...(stackTwins
        ? [
            `The stack alone (bare express running the API's statements for the same request): ` +
              ANCHORED.filter((k) => run.byKey.has(k))
                .map(stackNote)
                .join('; '),
          ]
        : []),
      ...(floors.length === 0
        ? [
            `Floors (the ratios before the quota fields) not applied: they were measured at ${fmtInt(TARGETS.floorUsers)} users.`,
          ]
        : []),
      ...(quick
        ? [
            'Quick mode: the targets are defined for 1,000,000 users over 10 clusters; these verdicts are only indicative.',
          ]
        : []),
    ],
  });
}

// ---------------------------------------------------------------------------------------------
// The django-tastypie anchor

/** Key suffix of a scenario's twin on the anchor. */
const TWIN = '@tastypie';

const fmtTimes = (x: number | undefined): string | undefined => (x === undefined ? undefined : `${x.toFixed(1)} ×`);

// ---------------------------------------------------------------------------------------------
// The stack's ceiling

/** Key suffix of a scenario's twin on the stack alone. */
const STACK = '@stack';

/**
 * Starts the stack-ceiling child for the anchored scenarios selected, with every path they will ask
 * for captured, and checks that each answers the same users as Cairn.
 */
async function stackCeiling(
  scenarios: Record<string, Scenario>,
  listed: Map<string, Scenario>,
  seeded: Seeded,
  childEnv: NodeJS.ProcessEnv,
  selected: Set<string>,
  cleanups: Cleanups,
): Promise<Map<string, Scenario>> {
  const keys = ANCHORED.filter((k) => selected.has(k));
  const scenarioOf = (k: string) => scenarios[k] ?? listed.get(k)!;
  // Every path the load will ask for: page1 and the list scenarios turn over the clusters, deep
  // asks one path (the detail, a random user each time, is replayed for any id).
  const lists = new Set<string>();
  for (const k of keys.filter((k) => k !== 'detail'))
    for (let turn = 0; turn < seeded.clusterIds.length; turn++) lists.add(scenarioOf(k).request().path);
  const paths: StackPaths = {
    lists: [...lists],
    detail: keys.includes('detail') ? `/api/v1/users/${seeded.maxUserId}/` : undefined,
    authorization: AUTHORIZATION,
  };
  const child = await startChild(__filename, STACK_ROLE, { ...childEnv, BENCH_CHILD_STACK: JSON.stringify(paths) });
  cleanups.push(() => stopChild(child));
  const target = { port: child.port, server: party.pid('server', child.proc.pid!) };
  const twins = new Map<string, Scenario>();
  for (const k of keys) {
    const cairn = scenarioOf(k);
    const twin: Scenario = { ...cairn, key: `${k}${STACK}`, label: `${cairn.label} (the stack alone)`, target };
    await sameRows(cairn, twin);
    twins.set(k, twin);
  }
  console.log(`stack ceiling: ${paths.lists.length} list paths captured, each answering Cairn's users`);
  return twins;
}

/** One request to Cairn and to the stack alone: the same users (ids) in the same order. */
async function sameRows(cairn: Scenario, stack: Scenario): Promise<void> {
  const r = cairn.request();
  const ids = (x: Answer) => (x.objects ?? [x]).map((o) => String(o.id)).join(',');
  const [a, b] = [ids(await answerOf(cairn, r)), ids(await answerOf(stack, r))];
  if (a !== b) throw new Error(`${stack.label}: ${r.path} answered other users than Cairn: ${b.slice(0, 200)}`);
}

/** BENCH_TASTYPIE: 1 requires the anchor, 0 turns it off, unset uses it when it can run. */
async function anchorIfWanted(databaseUrl: string, cleanups: Cleanups): Promise<TastypieAnchor | null> {
  const wanted = SETTINGS.tastypie;
  if (wanted !== undefined && wanted !== '0' && wanted !== '1')
    throw new Error(`BENCH_TASTYPIE must be 0 or 1, got '${wanted}'`);
  if (wanted === '0') {
    console.log('tastypie anchor: off (BENCH_TASTYPIE=0)');
    return null;
  }
  const missing = tastypieMissing();
  if (missing) {
    if (wanted === '1') throw new Error(`BENCH_TASTYPIE=1, but the tastypie anchor cannot run: ${missing}`);
    console.log(`tastypie anchor: skipped, ${missing}`);
    return null;
  }
  const anchor = await startTastypie(databaseUrl, cleanups, SETTINGS.tastypieWorkers);
  console.log(`tastypie anchor: ${anchor.versions}, ${anchor.workers} workers, port ${anchor.port}`);
  return anchor;
}

interface Answer {
  meta?: { total_count: number };
  objects?: Array<{ id: unknown; user: unknown }>;
  id?: unknown;
  user?: unknown;
}

/** The answer of `s`'s server to request `r`, which must be a 200. */
async function answerOf(s: Scenario, r: ReturnType<Scenario['request']>): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${s.target.port}${r.path}`, { headers: r.headers ?? {} });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${s.label}: ${r.path} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as Answer;
}

/**
 * One request of Cairn's scenario, sent to Cairn and to the anchor: both must answer 200 with the
 * same total_count and the same users in the same order (or the same user, for a detail).
 */
async function sameAnswer(cairn: Scenario, anchor: Scenario): Promise<void> {
  const r = cairn.request();
  const [a, b] = [await answerOf(cairn, r), await answerOf(anchor, r)];
  const users = (x: Answer) => (x.objects ?? [x]).map((o) => `${String(o.id)}:${String(o.user)}`).join(',');
  if (a.meta?.total_count !== b.meta?.total_count)
    throw new Error(`${anchor.label}: ${r.path} total_count ${b.meta?.total_count}, Cairn's ${a.meta?.total_count}`);
  if (users(a) !== users(b))
    throw new Error(`${anchor.label}: ${r.path} answered other users than Cairn: ${users(b).slice(0, 200)}`);
}

runBenchmark({ serve, main });
