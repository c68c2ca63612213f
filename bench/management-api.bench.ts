/**
 * management-api benchmark (issue: foundation). A benchmark, not a test: it prints figures, compares
 * them with the targets and says PASS/FAIL, but exits non-zero only when something is broken
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
 * all postgres processes, autocannon (this process), and the rest of the machine ("other", e.g. other
 * tenants); it is how a missed target is attributed to Node or to Postgres.
 *
 * Latency percentiles are computed here from every response time autocannon reports (sub-millisecond
 * precision; autocannon's own histogram rounds to whole milliseconds).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import express from 'express';
import { Client } from 'pg';
import { bootstrap, createApp, createDeps, migrateLatest, readConfig } from '@cairn/management-api';

// ---------------------------------------------------------------------------------------------
// Settings

const env = process.env;
const intEnv = (name: string, fallback: number, min = 1): number => {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}, got '${raw}'`);
  return n;
};

const SETTINGS = {
  users: intEnv('BENCH_USERS', 1_000_000),
  clusters: intEnv('BENCH_CLUSTERS', 10),
  duration: intEnv('BENCH_DURATION', 10),
  warmup: intEnv('BENCH_WARMUP', 3, 0),
  connections: intEnv('BENCH_CONNECTIONS', 10),
  poolMax: intEnv('BENCH_POOL_MAX', 10),
  pgServerUrl: env.BENCH_PG_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
  databaseUrl: env.DATABASE_URL || undefined,
};

/** The offset=900000 for 1,000,000 users; scaled the same way in quick mode. */
const DEEP_OFFSET = Math.floor(SETTINGS.users * 0.9);

const ADMIN_USER = 'bench-admin';
/** Not a secret: it only ever opens a throwaway benchmark database on loopback. */
const ADMIN_KEY = 'cairn-bench-admin-key-not-a-secret-0123456789';
const AUTHORIZATION = `ApiKey ${ADMIN_USER}:${ADMIN_KEY}`;

const TARGETS = {
  page1P50Ms: 10,
  page1Ratio: 0.3,
  detailRatio: 0.4,
  deepP50Ms: 100,
};

// ---------------------------------------------------------------------------------------------
// Child processes: the servers under test

type ServerRole = 'baseline' | 'api';
const ROLE_FLAG = '--bench-serve=';

async function serve(role: ServerRole): Promise<void> {
  let app: express.Express;
  let closeDb = async (): Promise<void> => {};
  if (role === 'baseline') {
    app = express();
    app.get('/', (_req, res) => {
      res.json({ hello: 'world' });
    });
  } else {
    const config = readConfig({
      DATABASE_URL: env.BENCH_CHILD_DATABASE_URL,
      DATABASE_POOL_MAX: String(SETTINGS.poolMax),
      LOG_LEVEL: 'warn',
      CAIRN_MIGRATE_ON_START: 'false',
      CAIRN_DEFAULT_CLUSTER: '',
    });
    const deps = createDeps(config);
    app = createApp(deps);
    closeDb = () => deps.db.destroy();
  }
  const server = app.listen(0, '127.0.0.1', () => {
    process.send!({ port: (server.address() as AddressInfo).port });
  });
  // The parent going away (normally or not) ends the child.
  process.on('disconnect', () => {
    server.close();
    server.closeAllConnections();
    void closeDb().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}

interface Child {
  role: ServerRole;
  proc: ChildProcess;
  port: number;
}

function startChild(role: ServerRole, databaseUrl: string): Promise<Child> {
  const proc = fork(__filename, [`${ROLE_FLAG}${role}`], {
    env: { ...env, BENCH_CHILD_DATABASE_URL: databaseUrl },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${role} server did not start within 30 s`)), 30_000);
    proc.once('message', (m: { port: number }) => {
      clearTimeout(timer);
      resolve({ role, proc, port: m.port });
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${role} server exited early with code ${code}`));
    });
  });
}

function stopChild(child: Child): Promise<void> {
  return new Promise((resolve) => {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.proc.kill('SIGKILL'), 5000);
    child.proc.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    if (child.proc.connected) child.proc.disconnect();
    else child.proc.kill('SIGTERM');
  });
}

// ---------------------------------------------------------------------------------------------
// Database: throwaway database, schema, seed

const quoteIdent = (s: string): string => `"${s.replace(/"/g, '""')}"`;

async function withServer<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: SETTINGS.pgServerUrl, application_name: 'cairn-bench' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function createThrowawayDatabase(): Promise<{ name: string; url: string }> {
  const name = `cairn_bench_${randomBytes(4).toString('hex')}`;
  await withServer((c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
  const url = new URL(SETTINGS.pgServerUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

async function dropDatabase(name: string): Promise<void> {
  await withServer((c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
}

interface Seeded {
  clusterIds: number[];
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
  const deps = createDeps(readConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', CAIRN_DEFAULT_CLUSTER: '' }));
  const { db } = deps;
  try {
    await migrateLatest(db);
    await bootstrap(db, {
      adminUser: ADMIN_USER,
      adminKey: ADMIN_KEY,
      defaultCluster: '',
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
    const clusterRows = (await db.raw(`SELECT id FROM clusters WHERE name LIKE 'bench-%' ORDER BY name LIMIT ?`, [SETTINGS.clusters])) as {
      rows: Array<{ id: number }>;
    };
    const clusterIds = clusterRows.rows.map((r) => Number(r.id));

    const existing = await db.raw(`SELECT count(*)::bigint AS n FROM storage_users WHERE cluster_id = ANY(?::int[])`, [clusterIds]);
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
      await db.raw(
        `INSERT INTO storage_users (cluster_id, username, password_hash)
         SELECT (?::int[])[1 + (g - 1) % ?], 'user' || lpad(g::text, 8, '0'), ?
           FROM generate_series(1, ?) AS g`,
        [clusterIds, clusterIds.length, passwordHash, SETTINGS.users],
      );
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
    const version = await db.raw(`SELECT current_setting('server_version') AS v, current_setting('shared_buffers') AS sb`);
    const size = await db.raw(`SELECT pg_size_pretty(pg_total_relation_size('storage_users')) AS s`);
    const r = range.rows[0] as { lo: string; hi: string; n: string };
    if (Number(r.hi) - Number(r.lo) + 1 !== Number(r.n)) {
      throw new Error(`bench user ids are not contiguous (${r.lo}..${r.hi} for ${r.n} rows); use a fresh database`);
    }
    return {
      clusterIds,
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

// ---------------------------------------------------------------------------------------------
// CPU accounting (Linux /proc; silently absent elsewhere)

const CLOCK_TICKS = 100;

interface CpuSnapshot {
  at: number;
  byPid: Map<number, number>;
  /** Every postgres process (server, backends, parallel workers) by pid. */
  postgres: Map<number, number>;
  /** Busy ticks of the whole machine (all processes, all tenants). */
  machine: number;
}

function procTicks(pid: number | 'self'): { ticks: number; comm: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // utime and stime are fields 14 and 15 of /proc/<pid>/stat; fields[0] here is field 3.
    return { ticks: Number(fields[11]) + Number(fields[12]), comm };
  } catch {
    return null;
  }
}

function machineBusyTicks(): number {
  // cpu user nice system idle iowait irq softirq steal ...: busy = everything but idle and iowait.
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1, 9).map(Number);
  return cpu.reduce((a, b) => a + b, 0) - cpu[3]! - cpu[4]!;
}

function cpuSnapshot(pids: number[]): CpuSnapshot | null {
  const self = procTicks('self');
  if (!self) return null;
  const byPid = new Map<number, number>([[process.pid, self.ticks]]);
  for (const pid of pids) byPid.set(pid, procTicks(pid)?.ticks ?? 0);
  const postgres = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const p = procTicks(Number(entry));
    if (p && p.comm === 'postgres') postgres.set(Number(entry), p.ticks);
  }
  return { at: performance.now(), byPid, postgres, machine: machineBusyTicks() };
}

/**
 * CPU used between two snapshots, in cores (1.0 = one core fully busy). Postgres processes that
 * started in between count in full; those that ended in between are lost (short-lived, small).
 */
function cpuBetween(a: CpuSnapshot | null, b: CpuSnapshot | null, what: number | 'postgres' | 'machine'): number | null {
  if (!a || !b) return null;
  const seconds = (b.at - a.at) / 1000;
  let ticks: number;
  if (what === 'machine') ticks = b.machine - a.machine;
  else if (what === 'postgres') {
    ticks = 0;
    for (const [pid, t] of b.postgres) ticks += t - (a.postgres.get(pid) ?? 0);
  } else ticks = (b.byPid.get(what) ?? 0) - (a.byPid.get(what) ?? 0);
  return Math.max(0, ticks) / CLOCK_TICKS / seconds;
}

// ---------------------------------------------------------------------------------------------
// Load

interface Scenario {
  key: string;
  label: string;
  target: 'baseline' | 'api';
  /** Path of each request; called per request so ids and clusters can vary. */
  path: () => string;
}

interface Measured {
  scenario: Scenario;
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  /** Cores used during the measurement; `other` is the rest of the machine (other tenants included). */
  cpu: { server: number | null; postgres: number | null; loadgen: number | null; other: number | null };
  /** For API scenarios: mean req/s of the baseline runs just before and just after. */
  baselineRps?: number;
}

const percentile = (sorted: number[], p: number): number => {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
};

function fire(port: number, scenario: Scenario, seconds: number, onResponse?: (ms: number) => void): Promise<autocannon.Result> {
  const headers = scenario.target === 'api' ? { authorization: AUTHORIZATION, accept: 'application/json' } : {};
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: SETTINGS.connections,
        duration: seconds,
        headers,
        requests: [{ setupRequest: (req) => ({ ...req, path: scenario.path() }) }],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    if (onResponse) instance.on('response', (_client, _status, _bytes, ms: number) => onResponse(ms));
  });
}

async function measure(port: number, scenario: Scenario, cpuPids: { server: number }): Promise<Measured> {
  if (SETTINGS.warmup > 0) {
    process.stdout.write(`  ${scenario.label}: warm-up ${SETTINGS.warmup} s ... `);
    const warm = await fire(port, scenario, SETTINGS.warmup);
    assertClean(scenario, warm, 'warm-up');
  } else {
    process.stdout.write(`  ${scenario.label}: `);
  }
  process.stdout.write(`measuring ${SETTINGS.duration} s ... `);
  const latencies: number[] = [];
  const before = cpuSnapshot([cpuPids.server]);
  const result = await fire(port, scenario, SETTINGS.duration, (ms) => latencies.push(ms));
  const after = cpuSnapshot([cpuPids.server]);
  assertClean(scenario, result, 'measurement');
  latencies.sort((a, b) => a - b);
  const m: Measured = {
    scenario,
    rps: result.requests.average,
    requests: result.requests.total,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpu: {
      server: cpuBetween(before, after, cpuPids.server),
      postgres: cpuBetween(before, after, 'postgres'),
      loadgen: cpuBetween(before, after, process.pid),
      other: null,
    },
  };
  const machine = cpuBetween(before, after, 'machine');
  if (machine !== null) m.cpu.other = Math.max(0, machine - (m.cpu.server ?? 0) - (m.cpu.postgres ?? 0) - (m.cpu.loadgen ?? 0));
  process.stdout.write(`${fmtInt(m.rps)} req/s, p50 ${fmtMs(m.p50)} ms\n`);
  return m;
}

/** Any non-2xx, socket error, timeout or mismatch makes every figure meaningless: stop loudly. */
function assertClean(scenario: Scenario, result: autocannon.Result, phase: string): void {
  const bad = result.non2xx + result.errors + result.timeouts + result.mismatches;
  if (bad === 0 && result.requests.total > 0) return;
  throw new Error(
    `${scenario.label} (${phase}): ${result.requests.total} requests, ${result.non2xx} non-2xx, ` +
      `${result.errors} errors, ${result.timeouts} timeouts; status codes ${JSON.stringify(result.statusCodeStats ?? {})}`,
  );
}

/** One request per scenario before loading it, to check the answer is what the scenario claims. */
async function sanityCheck(port: number, scenario: Scenario, check: (body: unknown) => string | null): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}${scenario.path()}`, {
    headers: scenario.target === 'api' ? { authorization: AUTHORIZATION, accept: 'application/json' } : {},
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${scenario.label}: expected 200, got ${res.status}: ${text.slice(0, 500)}`);
  const problem = check(JSON.parse(text));
  if (problem) throw new Error(`${scenario.label}: ${problem}`);
}

// ---------------------------------------------------------------------------------------------
// Report

const fmtInt = (n: number): string => Math.round(n).toLocaleString('en-US');
const fmtMs = (n: number): string => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0));
const fmtPct = (n: number): string => `${(n * 100).toFixed(1)} %`;
const fmtCores = (n: number | null): string => (n === null ? '-' : n.toFixed(2));

interface Verdict {
  text: string;
  pass: boolean;
}

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(headers), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const started = new Date();
  console.log(
    `management-api benchmark: ${fmtInt(SETTINGS.users)} users over ${SETTINGS.clusters} clusters, ` +
      `${SETTINGS.connections} connections, ${SETTINGS.warmup} s warm-up + ${SETTINGS.duration} s per scenario, pool max ${SETTINGS.poolMax}`,
  );

  const cleanups: Array<() => Promise<void>> = [];
  const cleanup = async () => {
    while (cleanups.length) {
      try {
        await cleanups.pop()!();
      } catch (e) {
        console.error(`cleanup: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  };
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    let databaseUrl = SETTINGS.databaseUrl;
    if (!databaseUrl) {
      const created = await createThrowawayDatabase();
      cleanups.push(async () => {
        await dropDatabase(created.name);
        console.log(`dropped database ${created.name}`);
      });
      databaseUrl = created.url;
      console.log(`created database ${created.name}`);
    } else {
      console.log('using DATABASE_URL (bench rows are added and kept)');
    }

    console.log('seeding ...');
    const seeded = await seed(databaseUrl);
    console.log(
      seeded.reused
        ? `  reusing ${fmtInt(SETTINGS.users)} bench users already present`
        : `  inserted ${fmtInt(SETTINGS.users)} users in ${seeded.seedSeconds.toFixed(1)} s, VACUUM ANALYZE ${seeded.vacuumSeconds.toFixed(1)} s`,
    );
    console.log(`  storage_users: ${fmtInt(seeded.totalUsers)} rows, ${seeded.tableSize} with indexes; ${seeded.postgres}`);

    const [baseline, api] = await Promise.all([startChild('baseline', databaseUrl), startChild('api', databaseUrl)]);
    cleanups.push(() => stopChild(baseline));
    cleanups.push(() => stopChild(api));

    let clusterTurn = 0;
    const pick = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo + 1));
    const scenarios = {
      baseline: { key: 'baseline', label: 'express hello world', target: 'baseline', path: () => '/' },
      page1: {
        key: 'page1',
        label: 'users page 1 by cluster',
        target: 'api',
        path: () => `/api/v1/users/?cluster=${seeded.clusterIds[clusterTurn++ % seeded.clusterIds.length]}`,
      },
      deep: { key: 'deep', label: `users offset=${DEEP_OFFSET}`, target: 'api', path: () => `/api/v1/users/?offset=${DEEP_OFFSET}` },
      detail: {
        key: 'detail',
        label: 'user detail',
        target: 'api',
        path: () => `/api/v1/users/${pick(seeded.minUserId, seeded.maxUserId)}/`,
      },
    } satisfies Record<string, Scenario>;

    const perCluster = Math.floor(SETTINGS.users / SETTINGS.clusters);
    await sanityCheck(baseline.port, scenarios.baseline, (b) => ((b as { hello?: string }).hello === 'world' ? null : 'unexpected body'));
    await sanityCheck(api.port, scenarios.page1, (b) => {
      const body = b as { meta: { total_count: number }; objects: unknown[] };
      if (Math.abs(body.meta.total_count - perCluster) > 1) return `total_count ${body.meta.total_count}, expected ~${perCluster}`;
      return body.objects.length === Math.min(20, perCluster) ? null : `${body.objects.length} objects on page 1`;
    });
    await sanityCheck(api.port, scenarios.deep, (b) => {
      const body = b as { meta: { total_count: number; offset: number }; objects: unknown[] };
      if (body.meta.total_count !== seeded.totalUsers) return `total_count ${body.meta.total_count}, expected ${seeded.totalUsers}`;
      return body.objects.length === Math.min(20, seeded.totalUsers - DEEP_OFFSET) ? null : `${body.objects.length} objects on the deep page`;
    });
    await sanityCheck(api.port, scenarios.detail, (b) => (typeof (b as { user?: string }).user === 'string' ? null : 'no user in detail'));
    console.log('sanity checks passed (200s with the expected shapes)');

    // Baseline, then each API scenario followed by the baseline again: every API figure is compared
    // with the baseline measured right around it, so a noisy neighbour hurts both sides alike.
    console.log('load (autocannon in this process; each server in its own child process):');
    const baselinePids = { server: baseline.proc.pid! };
    const apiPids = { server: api.proc.pid! };
    const baselines = [await measure(baseline.port, { ...scenarios.baseline, label: 'express hello world #1' }, baselinePids)];
    const measured: Measured[] = [baselines[0]!];
    const byKey = new Map<string, Measured>();
    for (const scenario of [scenarios.page1, scenarios.deep, scenarios.detail]) {
      const m = await measure(api.port, scenario, apiPids);
      const b = await measure(baseline.port, { ...scenarios.baseline, label: `express hello world #${baselines.length + 1}` }, baselinePids);
      m.baselineRps = (baselines[baselines.length - 1]!.rps + b.rps) / 2;
      baselines.push(b);
      measured.push(m, b);
      byKey.set(scenario.key, m);
    }
    const page1 = byKey.get('page1')!;
    const deep = byKey.get('deep')!;
    const detail = byKey.get('detail')!;
    const ratio = (m: Measured) => m.rps / m.baselineRps!;
    const baseRps = baselines.map((b) => b.rps);

    const verdicts = new Map<string, Verdict[]>([
      [
        'page1',
        [
          { text: `p50 <= ${TARGETS.page1P50Ms} ms`, pass: page1.p50 <= TARGETS.page1P50Ms },
          { text: `>= ${TARGETS.page1Ratio * 100} % of baseline`, pass: ratio(page1) >= TARGETS.page1Ratio },
        ],
      ],
      ['deep', [{ text: `p50 <= ${TARGETS.deepP50Ms} ms`, pass: deep.p50 <= TARGETS.deepP50Ms }]],
      ['detail', [{ text: `>= ${TARGETS.detailRatio * 100} % of baseline`, pass: ratio(detail) >= TARGETS.detailRatio }]],
    ]);

    const rows = measured.map((m) => {
      const v = verdicts.get(m.scenario.key) ?? [];
      return [
        m.scenario.label,
        fmtInt(m.rps),
        fmtMs(m.p50),
        fmtMs(m.p99),
        m.baselineRps === undefined ? '-' : fmtPct(ratio(m)),
        [m.cpu.server, m.cpu.postgres, m.cpu.loadgen, m.cpu.other].map(fmtCores).join(' / '),
        v.length ? v.map((x) => `${x.pass ? 'PASS' : 'FAIL'} ${x.text}`).join('; ') : '-',
      ];
    });
    const misses = [...verdicts.entries()].flatMap(([key, vs]) =>
      vs.filter((v) => !v.pass).map((v) => `${scenarios[key as keyof typeof scenarios].label}: ${v.text}`),
    );

    console.log(
      `\nResults (${started.toISOString()}; ${fmtInt(SETTINGS.users)} users, ${SETTINGS.connections} connections, ${SETTINGS.duration} s each)`,
    );
    console.log(
      `"vs baseline" divides by the mean of the two hello-world runs around the scenario; hello world ranged ` +
        `${fmtInt(Math.min(...baseRps))}..${fmtInt(Math.max(...baseRps))} req/s over the run.\n`,
    );
    console.log(
      table(['scenario', 'req/s', 'p50 ms', 'p99 ms', 'vs baseline', 'CPU cores: server / postgres / loadgen / other', 'target'], rows),
    );
    console.log('');
    if (SETTINGS.users !== 1_000_000 || SETTINGS.clusters !== 10) {
      console.log('Quick mode: the targets are defined for 1,000,000 users over 10 clusters; these verdicts are only indicative.');
    }
    if (misses.length === 0) console.log('All targets met.');
    else {
      console.log(`MISSED ${misses.length} target(s):`);
      for (const miss of misses) console.log(`  - FAIL ${miss}`);
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await cleanup();
  }
}

const roleArg = process.argv.find((a) => a.startsWith(ROLE_FLAG));
if (roleArg) {
  serve(roleArg.slice(ROLE_FLAG.length) as ServerRole).catch((e: unknown) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      console.error(`\nBENCHMARK ERROR: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      process.exit(1);
    },
  );
}
