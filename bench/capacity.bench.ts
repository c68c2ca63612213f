/**
 * Capacity benchmark. A benchmark, not a test: figures, PASS/FAIL against the
 * its targets, non-zero exit only when something is broken.
 *
 *   pnpm bench:capacity                              # 100,000 devices over 8 policies
 *   BENCH_DEVICES=10000 BENCH_DURATION=3 pnpm bench:capacity
 *
 * 1. A throwaway database, an API child process, and a device report of BENCH_DEVICES devices over 8
 *    storage policies with random overlapping ring sets (1 to 3 policies each, seeded PRNG, 5 % of
 *    the devices unmounted).
 * 2. PUT of the whole report, timed end to end from this process (JSON over loopback, validation,
 *    the capacity computation and the transaction), BENCH_PUTS times.
 * 3. GET capacity/list under autocannon, bracketed by the hello-world baseline like the other
 *    benchmarks.
 * 4. Parsing a ring of 2^18 partitions, 3 replicas and 10,000 devices (written here in format v1),
 *    header only and with the assignment rows.
 */
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { bootstrap, createDeps, migrateLatest, readConfig } from '@cairn/management-api';
import { parseRing } from '@cairn/swift-cluster';
import { BASELINE_ROLE, startChild, stopChild } from './lib/children';
import { party } from './lib/cpu';
import { intEnv, stringEnv } from './lib/env';
import { checkOnce, measureBracketed, type LoadSettings, type Scenario } from './lib/load';
import { ADMIN_KEY, ADMIN_USER, API_ROLE, HEADERS, serveApi } from './lib/api-child';
import { runBenchmark, type Cleanups } from './lib/main';
import { createThrowawayDatabase, dropDatabase } from './lib/postgres';
import { fmtInt, fmtMs, printResults, verdict, type Verdict } from './lib/report';
import { median } from './lib/load';

const SETTINGS = {
  devices: intEnv('BENCH_DEVICES', 100_000),
  puts: intEnv('BENCH_PUTS', 3),
  duration: intEnv('BENCH_DURATION', 10),
  warmup: intEnv('BENCH_WARMUP', 3, 0),
  connections: intEnv('BENCH_CONNECTIONS', 10),
  pgServerUrl: stringEnv('BENCH_PG_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
};
const POLICIES = 8;
const TARGETS = { listP50Ms: 50, putSeconds: 5, ringParseMs: 1000 };
const RING = { partPower: 18, replicas: 3, devices: 10_000 };

/** mulberry32: a small seeded PRNG, so every run reports the same cluster. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function deviceReport(count: number): string {
  const random = prng(42);
  const names = Array.from({ length: POLICIES }, (_, i) => `policy-${i}`);
  const devices = Array.from({ length: count }, (_, i) => {
    const members = new Set<string>();
    const k = 1 + Math.floor(random() * 3);
    while (members.size < k) members.add(names[Math.floor(random() * POLICIES)]!);
    const size = 8e12 + Math.floor(random() * 8) * 1e12;
    const used = Math.floor(random() * size * 0.9);
    const unmounted = random() < 0.05;
    return {
      node: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${(i >> 4) & 255}:6200`,
      device: `d${i}`,
      policies: [...members],
      size_bytes: size,
      ...(unmounted ? { mounted: false } : { used_bytes: used, avail_bytes: size - used - Math.floor(size * 0.01) }),
    };
  });
  return JSON.stringify({ policies: names.map((name, index) => ({ index, name, default: index === 0 })), devices });
}

function ringFile(): Buffer {
  const random = prng(7);
  const devs = Array.from({ length: RING.devices }, (_, id) => ({
    device: `sd${id % 24}`,
    id,
    ip: `10.${(id >> 16) & 255}.${(id >> 8) & 255}.${id & 255}`,
    meta: '',
    port: 6200,
    region: 1,
    replication_ip: `10.${(id >> 16) & 255}.${(id >> 8) & 255}.${id & 255}`,
    replication_port: 6200,
    weight: 8000,
    zone: 1 + (id % 8),
  }));
  const json = Buffer.from(
    JSON.stringify({ byteorder: 'little', devs, part_shift: 32 - RING.partPower, replica_count: RING.replicas }),
    'ascii',
  );
  const rows = Buffer.alloc(RING.replicas * 2 ** RING.partPower * 2);
  for (let i = 0; i < rows.length / 2; i++) rows.writeUInt16LE(Math.floor(random() * RING.devices), i * 2);
  const prefix = Buffer.alloc(10);
  prefix.write('R1NG', 0, 'latin1');
  prefix.writeUInt16BE(1, 4);
  prefix.writeUInt32BE(json.length, 6);
  return gzipSync(Buffer.concat([prefix, json, rows]));
}

async function main(cleanups: Cleanups): Promise<void> {
  const started = new Date();
  console.log(
    `capacity benchmark: ${fmtInt(SETTINGS.devices)} devices over ${POLICIES} policies, ${SETTINGS.connections} connections`,
  );

  const created = await createThrowawayDatabase(SETTINGS.pgServerUrl);
  cleanups.push(async () => {
    await dropDatabase(SETTINGS.pgServerUrl, created.name);
    console.log(`dropped database ${created.name}`);
  });
  const deps = createDeps(readConfig({ DATABASE_URL: created.url, LOG_LEVEL: 'warn' }));
  await migrateLatest(deps.db);
  await bootstrap(deps.db, {
    adminUser: ADMIN_USER,
    adminKey: ADMIN_KEY,
    defaultCluster: 'bench',
    defaultAuthUrl: 'http://127.0.0.1:5000/auth',
    defaultStorageUrl: 'http://127.0.0.1:8080/v1',
  });
  await deps.db.destroy();

  const childEnv = { ...process.env, BENCH_CHILD_DATABASE_URL: created.url };
  const [baseline, api] = await Promise.all([
    startChild(__filename, BASELINE_ROLE, childEnv),
    startChild(__filename, API_ROLE, childEnv),
  ]);
  cleanups.push(() => stopChild(baseline));
  cleanups.push(() => stopChild(api));

  const body = deviceReport(SETTINGS.devices);
  console.log(`device report: ${(body.length / 1e6).toFixed(1)} MB of JSON`);
  const putSeconds: number[] = [];
  for (let i = 0; i < SETTINGS.puts; i++) {
    const t0 = performance.now();
    const res = await fetch(`http://127.0.0.1:${api.port}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { ...HEADERS, 'content-type': 'application/json' },
      body,
    });
    const text = await res.text();
    if (res.status !== 204) throw new Error(`PUT answered ${res.status}: ${text.slice(0, 300)}`);
    putSeconds.push((performance.now() - t0) / 1000);
    console.log(`  PUT #${i + 1}: ${putSeconds[i]!.toFixed(2)} s`);
  }

  const scenarios = {
    baseline: {
      key: 'baseline',
      label: 'express hello world',
      target: { port: baseline.port, server: party.pid('server', baseline.proc.pid!) },
      request: () => ({ path: '/' }),
    },
    list: {
      key: 'list',
      label: 'capacity/list',
      target: { port: api.port, server: party.pid('server', api.proc.pid!) },
      request: () => ({ path: '/api/v1/clusters/1/capacity/list/', headers: HEADERS }),
    },
  } satisfies Record<string, Scenario>;
  await checkOnce(scenarios.list, (res) => {
    const sets = (JSON.parse(res.text) as { capacity: Array<{ pct_used_stats: { count: number } }> }).capacity;
    const counted = sets.reduce((t, s) => t + s.pct_used_stats.count, 0);
    return sets.length > 0 && counted > SETTINGS.devices * 0.9
      ? null
      : `${sets.length} ring sets, ${counted} devices counted`;
  });
  const settings: LoadSettings = {
    connections: SETTINGS.connections,
    warmup: SETTINGS.warmup,
    duration: SETTINGS.duration,
    parties: [party.comm('postgres', 'postgres'), party.self('loadgen')],
  };
  const run = await measureBracketed(scenarios.baseline, [scenarios.list], settings);
  const list = run.byKey.get('list')!;

  const ring = ringFile();
  const parse: Record<string, number[]> = { header: [], assignments: [] };
  for (let i = 0; i < 5; i++) {
    for (const withAssignments of [false, true]) {
      const t0 = performance.now();
      const parsed = parseRing(ring, 'object.ring.gz', { withAssignments });
      if (parsed.devices.length !== RING.devices) throw new Error('wrong device count in the parsed ring');
      parse[withAssignments ? 'assignments' : 'header']!.push(performance.now() - t0);
    }
  }

  const putMedian = median(putSeconds);
  const parseWorst = Math.max(...parse.header!, ...parse.assignments!);
  const verdicts = new Map<string, Verdict[]>([
    ['list', [verdict(`p50 <= ${TARGETS.listP50Ms} ms`, list.p50 <= TARGETS.listP50Ms)]],
  ]);
  printResults({
    title: `\nResults (${started.toISOString()}; ${fmtInt(SETTINGS.devices)} devices, ${SETTINGS.connections} connections, ${SETTINGS.duration} s)`,
    ...run,
    verdicts,
    notes: [],
  });
  const line = (label: string, figure: string, pass: boolean, target: string) =>
    console.log(`${label.padEnd(34)} ${figure.padEnd(34)} ${pass ? 'PASS' : 'FAIL'} ${target}`);
  console.log('');
  line(
    `PUT of ${fmtInt(SETTINGS.devices)} devices`,
    `median ${putMedian.toFixed(2)} s (${putSeconds.map((s) => s.toFixed(2)).join(', ')})`,
    putMedian <= TARGETS.putSeconds,
    `<= ${TARGETS.putSeconds} s`,
  );
  line(
    `ring parse 2^${RING.partPower} x ${RING.replicas}, ${fmtInt(RING.devices)} devs`,
    `header ${fmtMs(median(parse.header!))} ms, rows ${fmtMs(median(parse.assignments!))} ms (median)`,
    parseWorst <= TARGETS.ringParseMs,
    `<= ${TARGETS.ringParseMs} ms (worst ${fmtMs(parseWorst)} ms)`,
  );
}

runBenchmark({ serve: serveApi, main });
