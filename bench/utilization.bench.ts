/**
 * Utilization benchmark. A benchmark, not a test: figures, PASS/FAIL against the
 * targets, non-zero exit only when something is broken.
 *
 *   pnpm bench:utilization
 *   BENCH_ACCOUNTS=20000 BENCH_DETAIL_ACCOUNTS=2000 pnpm bench:utilization
 *   BENCH_ACCOUNTS=1000000 BENCH_READS=0 BENCH_LOG_LINES=2000000 pnpm bench:utilization  # writes only
 *
 * 1. Write: one collection round of BENCH_ACCOUNTS accounts with 2 policies each, POSTed by this
 *    process to an API child in requests of BENCH_CHUNK samples, as `cairn utilization collect`
 *    does; the round is sent twice (the second time every row is an update keeping the maximum).
 * 2. Detail: BENCH_DETAIL_ACCOUNTS accounts x 31 days x 24 hours (totals and one policy) are
 *    stored in a second cluster with one INSERT ... generate_series, hour by hour as collection
 *    rounds would write them; then one account's 31-day detail (744 records, one page) is
 *    fetched BENCH_DETAIL_REQUESTS times, sequentially, for accounts spread over the set.
 * 3. Summary: BENCH_ACCOUNTS accounts x yesterday's 24 hours (totals and 2 policies) plus transfer
 *    rows, rolled up as the API's maintenance does for every finished day, then the whole summary
 *    as CSV, streamed, timed until its last byte.
 * 4. Ingest: BENCH_LOG_LINES lines of a day of Swift proxy access log (bench/lib/proxy-log.ts: the
 *    documented template, a mix of classes, s3api, errors and middleware subrequests) for
 *    BENCH_ACCOUNTS accounts, written to a temporary file, then read by the ingest
 *    `cairn utilization ingest-logs` runs (parse, classify, sum, POST each batch to the API child),
 *    in this process. Lines per second of wall time, and this process's CPU time: the ingest runs
 *    on one core. Also the machine's Postgres CPU meanwhile, and lines per CPU second of reader,
 *    API and Postgres together.
 * Beside each phase, the API child's peak RSS and its CPU seconds (the machine may be shared: CPU
 * time is the figure that does not depend on other tenants). BENCH_READS=0 leaves out 2. and 3.
 * BENCH_CPU_PROF, a directory: the API child runs with --cpu-prof and writes its profile there.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import {
  bootstrap,
  createDeps,
  ensureHourlyPartitions,
  migrateLatest,
  readConfig,
  rollUpDay,
} from '@cairn/management-api';
import { startChild, stopChild } from './lib/children';
import { intEnv, stringEnv } from './lib/env';
import { ADMIN_KEY, ADMIN_USER, API_ROLE, HEADERS, serveApi } from './lib/api-child';
import { runBenchmark, type Cleanups } from './lib/main';
import { throwawayDatabase } from './lib/postgres';
import { cpuSnapshot, coresBetween, party } from './lib/cpu';
import { fmtInt, fmtMs } from './lib/report';
import { writeProxyLog } from './lib/proxy-log';
import { watchRss } from '../test-e2e/support/body-flood';
import { ingestLogs } from '../packages/cli/src/utilization/ingest';

const SETTINGS = {
  accounts: intEnv('BENCH_ACCOUNTS', 100_000),
  chunk: intEnv('BENCH_CHUNK', 10_000),
  detailAccounts: intEnv('BENCH_DETAIL_ACCOUNTS', 100_000),
  detailRequests: intEnv('BENCH_DETAIL_REQUESTS', 300),
  logLines: intEnv('BENCH_LOG_LINES', 200_000),
  pgServerUrl: stringEnv('BENCH_PG_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
  /** 0 leaves out the detail and the summary and their seeding (hours at 1,000,000 accounts). */
  reads: intEnv('BENCH_READS', 1, 0),
  cpuProfDir: stringEnv('BENCH_CPU_PROF'),
};
// The targets are for 1,000,000 accounts; at 100,000 the round and the summary are held to a tenth.
const SCALE = SETTINGS.accounts / 1_000_000;
const TARGETS = {
  writeSeconds: Math.max(6, 60 * SCALE),
  detailP50Ms: 10,
  summaryCsvSeconds: Math.max(2, 20 * SCALE),
  ingestLinesPerSecond: 100_000,
  apiRssMb: 400,
};
const MB = 1024 * 1024;
/** A process's CPU seconds (user + system) so far: the machine is shared, so wall time alone misleads. */
const cpuSecondsOf = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
};
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const account = (prefix: string, i: number) => `AUTH_${prefix}${String(i).padStart(7, '0')}`;
const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
const line = (label: string, figure: string, pass: boolean, target: string) =>
  console.log(`${label.padEnd(44)} ${figure.padEnd(40)} ${pass ? 'PASS' : 'FAIL'} ${target}`);

/**
 * CPU seconds of every postgres process of the machine between two snapshots (null where /proc
 * cannot tell): the database server is shared, so a busy tenant adds.
 */
function postgresCpu(from: ReturnType<typeof cpuSnapshot>, to: ReturnType<typeof cpuSnapshot>): number | null {
  return from && to ? (coresBetween(from, to, party.comm('postgres', 'postgres')) * (to.at - from.at)) / 1000 : null;
}

async function timed<T>(what: string, fn: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await fn();
  console.log(`  ${what}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return out;
}

async function main(cleanups: Cleanups): Promise<void> {
  const started = new Date();
  console.log(
    `utilization benchmark: ${fmtInt(SETTINGS.accounts)} accounts per round and summary, ${fmtInt(SETTINGS.detailAccounts)} accounts x 31 days for detail`,
  );
  const created = await throwawayDatabase(cleanups, SETTINGS.pgServerUrl);
  const deps = createDeps(readConfig({ DATABASE_URL: created.url, LOG_LEVEL: 'warn' }));
  await migrateLatest(deps.db);
  await bootstrap(deps.db, {
    adminUser: ADMIN_USER,
    adminKey: ADMIN_KEY,
    defaultCluster: 'bench',
    defaultAuthUrl: 'http://127.0.0.1:5000/auth',
    defaultStorageUrl: 'http://127.0.0.1:8080/v1',
  });
  await deps.db('clusters').insert({
    name: 'bench-detail',
    uuid: '00000000-0000-4000-8000-000000000002',
    auth_url: 'http://127.0.0.1:5000/auth',
    storage_url: 'http://127.0.0.1:8080/v1',
  });
  const now = Date.now();
  const today = Math.floor(now / DAY) * DAY;
  await ensureHourlyPartitions(
    deps.db,
    Array.from({ length: 33 }, (_, i) => today - (31 - i) * DAY),
  );
  await deps.db.destroy();

  const profArgs = SETTINGS.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', SETTINGS.cpuProfDir] : [];
  const child = await startChild(
    __filename,
    API_ROLE,
    { ...process.env, BENCH_CHILD_DATABASE_URL: created.url },
    profArgs,
  );
  cleanups.push(() => stopChild(child));
  const base = `http://127.0.0.1:${child.port}/api/v1/clusters`;
  // The storage policies the samples name, as the capacity collector would report them.
  const report = await fetch(`${base}/1/devices/`, {
    method: 'PUT',
    headers: { ...HEADERS, 'content-type': 'application/json' },
    body: JSON.stringify({
      policies: [
        { index: 0, name: 'gold', default: true },
        { index: 1, name: 'silver' },
      ],
      devices: [],
    }),
  });
  if (report.status !== 204)
    throw new Error(`device report answered ${report.status}: ${(await report.text()).slice(0, 300)}`);

  // ---- 1. one collection round -------------------------------------------------------------
  const sampledAt = new Date(now).toISOString();
  const round = async () => {
    let apiMs = 0;
    for (let from = 0; from < SETTINGS.accounts; from += SETTINGS.chunk) {
      const samples = [];
      for (let i = from; i < Math.min(SETTINGS.accounts, from + SETTINGS.chunk); i++) {
        const gold = (i * 7919) % 1_000_000_000;
        const silver = (i * 104_729) % 1_000_000_000;
        samples.push({
          account: account('w', i),
          bytes_used: gold + silver,
          object_count: (i % 1000) + 2,
          container_count: 2,
          policies: [
            { index: 0, bytes_used: gold, object_count: (i % 1000) + 1, container_count: 1 },
            { index: 1, bytes_used: silver, object_count: 1, container_count: 1 },
          ],
        });
      }
      const body = JSON.stringify({ interval: 3600, sampled_at: sampledAt, samples });
      const t0 = performance.now();
      const res = await fetch(`${base}/1/utilization/storage/`, {
        method: 'POST',
        headers: { ...HEADERS, 'content-type': 'application/json' },
        body,
      });
      const text = await res.text();
      apiMs += performance.now() - t0;
      if (res.status !== 200) throw new Error(`storage POST answered ${res.status}: ${text.slice(0, 300)}`);
    }
    return apiMs / 1000;
  };
  const apiPid = child.proc.pid!;
  let rss = watchRss(apiPid, 50);
  let apiCpu = cpuSecondsOf(apiPid);
  const roundsPg0 = cpuSnapshot();
  const firstRound = await timed('round 1 (inserts)', round);
  const roundsPg1 = cpuSnapshot();
  const secondRound = await timed('round 2 (same hour: updates)', round);
  const roundsPg2 = cpuSnapshot();
  const roundRssMb = rss.stop() / MB;
  const roundCpu = cpuSecondsOf(apiPid) - apiCpu;
  const roundPgCpu = [postgresCpu(roundsPg0, roundsPg1), postgresCpu(roundsPg1, roundsPg2)];

  const detailMs: number[] = [];
  const summaryRuns: number[] = [];
  let rows = 0;
  let summaryRssMb = 0;
  let summaryCpu = 0;
  if (SETTINGS.reads) {
    // ---- 2. and 3. seed -----------------------------------------------------------------------
    const pg = new Client({ connectionString: created.url });
    await pg.connect();
    cleanups.push(() => pg.end());
    const detailStart = today - 31 * DAY;
    await timed(`seed ${fmtInt(SETTINGS.detailAccounts)} accounts x 744 hours x 2 rows`, () =>
      pg.query(
        `INSERT INTO utilization_storage_hourly (cluster_id, policy_index, account, hour, bytes_used, object_count, container_count, slots, slot_count)
         SELECT 2, p, 'AUTH_d' || lpad(a::text, 7, '0'), h, a * 1000 + p, a, 1, 1, 1
           FROM generate_series($2::timestamptz, $3::timestamptz, '1 hour') h, generate_series(0, $1 - 1) a, (VALUES (-1), (0)) v(p)`,
        [SETTINGS.detailAccounts, new Date(detailStart).toISOString(), new Date(today - HOUR).toISOString()],
      ),
    );
    await pg.query(
      `INSERT INTO utilization_accounts (cluster_id, account) SELECT 2, 'AUTH_d' || lpad(a::text, 7, '0') FROM generate_series(0, $1 - 1) a`,
      [SETTINGS.detailAccounts],
    );
    const yesterday = today - DAY;
    await timed(`seed ${fmtInt(SETTINGS.accounts)} accounts x 24 hours x 3 rows + transfer`, async () => {
      await pg.query(
        `INSERT INTO utilization_storage_hourly (cluster_id, policy_index, account, hour, bytes_used, object_count, container_count, slots, slot_count)
         SELECT 1, p, 'AUTH_w' || lpad(a::text, 7, '0'), h, a * 10 + p + extract(hour from h)::int, a, 2, 1, 1
           FROM generate_series(0, $1 - 1) a, generate_series($2::timestamptz, $3::timestamptz, '1 hour') h, (VALUES (-1), (0), (1)) v(p)`,
        [SETTINGS.accounts, new Date(yesterday).toISOString(), new Date(today - HOUR).toISOString()],
      );
      await pg.query(
        `INSERT INTO utilization_transfer_hourly (cluster_id, policy_index, account, hour, bytes_in, bytes_out, req_count)
         SELECT 1, 0, 'AUTH_w' || lpad(a::text, 7, '0'), h, a, a * 2, 3
           FROM generate_series(0, $1 - 1) a, generate_series($2::timestamptz, $3::timestamptz, '4 hours') h`,
        [SETTINGS.accounts, new Date(yesterday).toISOString(), new Date(today - HOUR).toISOString()],
      );
      // Autovacuum does this for finished days in production (inserts alone trigger it since PG 13);
      // the visibility map it leaves is what lets reads stay in the covering keys.
      await pg.query('VACUUM ANALYZE utilization_storage_hourly');
      await pg.query('VACUUM ANALYZE utilization_transfer_hourly');
    });

    // What the API's maintenance does for every finished day (here only the one the summary reads).
    await timed('roll up yesterday', async () => {
      const maintenance = createDeps(readConfig({ DATABASE_URL: created.url, LOG_LEVEL: 'warn' }));
      await rollUpDay(maintenance.db, yesterday);
      await maintenance.db.destroy();
    });

    // ---- 2. detail ------------------------------------------------------------------------------
    const range = `start=${new Date(detailStart).toISOString()}&end=${new Date(today).toISOString()}&limit=1000`;
    for (let i = 0; i < SETTINGS.detailRequests; i++) {
      const a = account('d', (i * 7919) % SETTINGS.detailAccounts);
      const t0 = performance.now();
      const res = await fetch(`${base}/2/utilization/storage/0/${a}/detail/?${range}`, { headers: HEADERS });
      const body = (await res.json()) as { objects: unknown[] };
      detailMs.push(performance.now() - t0);
      if (res.status !== 200 || body.objects.length !== 744)
        throw new Error(`detail of ${a}: ${res.status}, ${body.objects?.length} records`);
    }

    // ---- 3. summary as CSV ------------------------------------------------------------------
    rss = watchRss(apiPid, 50);
    apiCpu = cpuSecondsOf(apiPid);
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      const res = await fetch(
        `${base}/1/utilization/summary/?start=${new Date(yesterday).toISOString()}&end=${new Date(today).toISOString()}&format=csv`,
        { headers: HEADERS },
      );
      rows = 0;
      const reader = res.body!.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const byte of value) if (byte === 10) rows++;
      }
      summaryRuns.push((performance.now() - t0) / 1000);
      if (res.status !== 200 || rows - 1 < SETTINGS.accounts)
        throw new Error(`summary CSV: ${res.status}, ${rows - 1} rows`);
    }
    summaryRssMb = rss.stop() / MB;
    summaryCpu = (cpuSecondsOf(apiPid) - apiCpu) / 3;
  }

  // ---- 4. ingest a day of proxy logs ----------------------------------------------------------
  const logDir = mkdtempSync(join(tmpdir(), 'cairn-bench-ingest-'));
  cleanups.push(() => rm(logDir, { recursive: true, force: true }));
  const logFile = join(logDir, 'proxy-access.log');
  // The day that ended a minute ago: inside the times the API accepts, none in its future.
  const dayStartMs = Date.now() - DAY - 60_000;
  await timed(`write ${fmtInt(SETTINGS.logLines)} proxy log lines`, () =>
    writeProxyLog({
      file: logFile,
      lines: SETTINGS.logLines,
      accounts: SETTINGS.accounts,
      accountName: (i) => account('w', i),
      dayStartMs,
    }),
  );
  rss = watchRss(apiPid, 50);
  apiCpu = cpuSecondsOf(apiPid);
  const cpu0 = process.cpuUsage();
  const machine0 = cpuSnapshot();
  const t0 = performance.now();
  const ingested = await ingestLogs({
    cluster: '1',
    inputs: [logFile],
    config: {
      apiUrl: `http://127.0.0.1:${child.port}`,
      apiKey: `${ADMIN_USER}:${ADMIN_KEY}`,
      reconTimeoutMs: 5000,
      reconConcurrency: 1,
      healthConcurrency: 1,
      healthNodeTimeoutMs: 5000,
      utilizationConcurrency: 1,
      utilizationTimeoutMs: 60_000,
      utilizationRetries: 0,
      utilizationInternalNetworks: '10.0.0.0/8,fd00::/8',
      utilizationInternalAddress: 'remote_addr',
    },
    warn: (l) => console.log(`  ingest warning: ${l}`),
  });
  const ingestSeconds = (performance.now() - t0) / 1000;
  const ingestRssMb = rss.stop() / MB;
  const ingestApiCpu = cpuSecondsOf(apiPid) - apiCpu;
  const ingestPgCpu = postgresCpu(machine0, cpuSnapshot());
  const cpu = process.cpuUsage(cpu0);
  const ingestCpuSeconds = (cpu.user + cpu.system) / 1e6;
  console.log(
    `  ingest: ${fmtInt(ingested.lines)} lines, ${fmtInt(ingested.requests)} requests billed (${fmtInt(ingested.internal)} internal), ${fmtInt(ingested.skipped)} subrequests skipped, ${fmtInt(ingested.unknownAccount)} to unknown accounts, ${ingested.batches} batches; ${ingestSeconds.toFixed(1)} s, ${ingestCpuSeconds.toFixed(1)} s CPU in this process`,
  );
  if (
    ingested.lines !== SETTINGS.logLines ||
    ingested.malformed + ingested.noAccount + ingested.unknownMethod + ingested.tooOld + ingested.future !== 0 ||
    ingested.unknownAccount !== 0 ||
    ingested.requests + ingested.skipped !== ingested.lines
  )
    throw new Error(`ingest of the generated day did not count every line: ${JSON.stringify(ingested)}`);
  const linesPerSecond = ingested.lines / ingestSeconds;

  console.log(`\nResults (${started.toISOString()}; Postgres, one API process)`);
  line(
    `collection round, ${fmtInt(SETTINGS.accounts)} accounts x 2 policies`,
    `${firstRound.toFixed(1)} s new, ${secondRound.toFixed(1)} s again`,
    Math.max(firstRound, secondRound) <= TARGETS.writeSeconds,
    `<= ${TARGETS.writeSeconds} s of API time`,
  );
  line(
    '  API during the two rounds',
    `peak RSS ${fmtInt(roundRssMb)} MB, ${roundCpu.toFixed(1)} s CPU`,
    roundRssMb <= TARGETS.apiRssMb,
    `<= ${TARGETS.apiRssMb} MB`,
  );
  // The writes are sent one after another: a round's time is the API's CPU and Postgres' in turn.
  if (roundPgCpu.every((c) => c !== null))
    console.log(
      `${'  Postgres during the rounds'.padEnd(44)} ${roundPgCpu.map((c) => c!.toFixed(1)).join(' s, ')} s CPU (new, again)`,
    );
  if (SETTINGS.reads) {
    line(
      `31-day detail, ${fmtInt(SETTINGS.detailAccounts)} accounts stored`,
      `p50 ${fmtMs(quantile(detailMs, 0.5))} ms, p95 ${fmtMs(quantile(detailMs, 0.95))} ms`,
      quantile(detailMs, 0.5) <= TARGETS.detailP50Ms,
      `p50 <= ${TARGETS.detailP50Ms} ms`,
    );
    line(
      `summary CSV, ${fmtInt(rows - 1)} accounts x 1 day`,
      `median ${quantile(summaryRuns, 0.5).toFixed(2)} s (${summaryRuns.map((s) => s.toFixed(2)).join(', ')})`,
      quantile(summaryRuns, 0.5) <= TARGETS.summaryCsvSeconds,
      `<= ${TARGETS.summaryCsvSeconds} s`,
    );
    line(
      '  API during the summaries',
      `peak RSS ${fmtInt(summaryRssMb)} MB, ${summaryCpu.toFixed(2)} s CPU each`,
      summaryRssMb <= TARGETS.apiRssMb,
      `<= ${TARGETS.apiRssMb} MB`,
    );
  }
  line(
    `ingest, ${fmtInt(ingested.lines)} lines, ${fmtInt(SETTINGS.accounts)} accounts`,
    `${fmtInt(linesPerSecond)} lines/s (${ingestSeconds.toFixed(1)} s, ${ingestCpuSeconds.toFixed(1)} s CPU)`,
    linesPerSecond >= TARGETS.ingestLinesPerSecond,
    `>= ${fmtInt(TARGETS.ingestLinesPerSecond)} lines/s on one core`,
  );
  line(
    '  API during the ingest',
    `peak RSS ${fmtInt(ingestRssMb)} MB, ${ingestApiCpu.toFixed(1)} s CPU`,
    ingestRssMb <= TARGETS.apiRssMb,
    `<= ${TARGETS.apiRssMb} MB`,
  );
  if (ingestPgCpu !== null) {
    // Reader, API and Postgres together: lines per CPU second of the whole ingest, its ceiling on one core.
    const allCpu = ingestCpuSeconds + ingestApiCpu + ingestPgCpu;
    line(
      '  reader + API + Postgres',
      `${fmtInt(ingested.lines / allCpu)} lines per CPU second (Postgres ${ingestPgCpu.toFixed(1)} s)`,
      ingested.lines / allCpu >= TARGETS.ingestLinesPerSecond,
      `>= ${fmtInt(TARGETS.ingestLinesPerSecond)} lines/s on one core`,
    );
  }
  // The reader's own share: the same run's lines per CPU second of this process (the API child's apart).
  line(
    '  reader alone (parse, sum, send)',
    `${fmtInt(ingested.lines / ingestCpuSeconds)} lines per CPU second`,
    ingested.lines / ingestCpuSeconds >= TARGETS.ingestLinesPerSecond,
    `>= ${fmtInt(TARGETS.ingestLinesPerSecond)} lines/s on one core`,
  );
}

runBenchmark({ serve: serveApi, main });
