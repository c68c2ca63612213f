/**
 * The embedded start's time to ready, with its data directory present (every start but the first).
 *
 *   pnpm bench:start                      # 5 second starts on a new data directory
 *   BENCH_START_RUNS=10 pnpm bench:start
 *   BENCH_START_ROOT=/path/to/other/checkout pnpm bench:start   # another checkout's build, same method
 *   BENCH_START_FROM=<data dir> BENCH_START_KEY='ApiKey admin:…' pnpm bench:start  # a copy of a started one
 *
 * Builds the checkout (`node scripts/build.mjs --quiet --node-only`, what `pnpm start` runs first
 * and skips when dist/ is current), starts `node packages/cli/bin/cairn start` once on a new
 * temporary data directory (the first start: initdb, every migration, the admin's key), stops it,
 * then starts it BENCH_START_RUNS more times on that directory. Each of those is timed from the
 * spawn to: the banner's gateway line (the launcher's ready line, which the e2e tests wait for),
 * the first 200 of GET /api/v1/clusters/ with the admin's key, and the first 200 of the gateway's
 * GET /auth/v3/. The process's own CPU time (all its threads) at the banner is read from /proc.
 */
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { median } from './lib/load';

const ROOT = resolve(process.env.BENCH_START_ROOT ?? join(__dirname, '..'));
const RUNS = Number(process.env.BENCH_START_RUNS ?? 5);
const TIMEOUT_MS = 180_000;

interface Start {
  cpuMs: number;
  bannerMs: number;
  apiMs: number;
  gatewayMs: number;
  out: string;
}

/** CPU (user + system) of a live process so far, in ms, from /proc (clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function first200(url: string, since: number, headers: Record<string, string> = {}): Promise<number> {
  for (;;) {
    try {
      const res = await fetch(url, { headers });
      await res.arrayBuffer();
      if (res.status === 200) return performance.now() - since;
      if (res.status !== 503) throw new Error(`${url} answered ${res.status}`);
    } catch (e) {
      if ((e as Error).message.includes('answered')) throw e;
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function start(dataDir: string, auth?: string): Promise<Start> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'packages/cli/bin/cairn'), 'start'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      LOG_LEVEL: 'warn',
      CAIRN_API_PORT: '0',
      CAIRN_GATEWAY_PORT: '0',
      CAIRN_API_HOST: '127.0.0.1',
      CAIRN_GATEWAY_HOST: '127.0.0.1',
      CAIRN_DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let cpuMs = 0;
  let bannerMs = 0;
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error(`no banner within ${TIMEOUT_MS} ms:\n${out}`)), TIMEOUT_MS);
    const read = (d: Buffer) => {
      out += d.toString();
      if (bannerMs === 0 && /auth gateway\s+http/.test(out)) {
        bannerMs = performance.now() - t0;
        cpuMs = cpuMsOf(child.pid!);
        clearTimeout(timer);
        ready();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => fail(new Error(`cairn start exited (${code}):\n${out}`)));
  });
  const apiUrl = /management API\s+(http:\/\/\S+)\/api\/v1\//.exec(out)![1]!;
  const gatewayUrl = /auth gateway\s+(http:\/\/\S+)\/auth\//.exec(out)![1]!;
  const key = auth ?? /Authorization: (ApiKey \S+)\n/.exec(out)?.[1];
  if (!key) throw new Error(`no admin key given or printed:\n${out}`);
  const [apiMs, gatewayMs] = await Promise.all([
    first200(`${apiUrl}/api/v1/clusters/`, t0, { Authorization: key }),
    first200(`${gatewayUrl}/auth/v3/`, t0),
  ]);
  child.removeAllListeners('exit');
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
  return { cpuMs, bannerMs, apiMs, gatewayMs, out: key };
}

const s = (ms: number) => (ms / 1000).toFixed(2);

async function main(): Promise<void> {
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs'), '--quiet', '--node-only'], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error('the build failed');
  const dir = mkdtempSync(join(tmpdir(), 'cairn-bench-start-'));
  try {
    const dataDir = join(dir, 'pglite');
    // Instead of a first start (minutes on a busy machine): a copy of a directory started before.
    const from = process.env.BENCH_START_FROM;
    if (from) cpSync(from, dataDir, { recursive: true });
    const first = from ? { out: process.env.BENCH_START_KEY ?? '' } : await start(dataDir);
    if ('bannerMs' in first)
      console.log(`first start (new data directory): banner ${s(first.bannerMs)} s, CPU ${s(first.cpuMs)} s`);
    const runs: Start[] = [];
    console.log('second starts, s from spawn: CPU at banner | banner | GET /api/v1/clusters/ 200 | GET /auth/v3/ 200');
    for (let i = 0; i < RUNS; i++) {
      const run = await start(dataDir, first.out);
      runs.push(run);
      console.log(`  ${s(run.cpuMs)} | ${s(run.bannerMs)} | ${s(run.apiMs)} | ${s(run.gatewayMs)}`);
    }
    const med = (f: (r: Start) => number) => s(median(runs.map(f)));
    console.log(
      `median of ${RUNS}: CPU ${med((r) => r.cpuMs)} s, banner ${med((r) => r.bannerMs)} s, API 200 ${med((r) => r.apiMs)} s, gateway 200 ${med((r) => r.gatewayMs)} s`,
    );
    console.log(`load average: ${readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
