/**
 * Perf check (not a test): parseRing on a large ring must take at most 1 s, with or without the
 * assignment rows. The ring (2^18 partitions, 3 replicas, 10,000 devices) is written here directly in
 * format v1 (gzip of magic + version + JSON header + rows), as Swift's serialize_v1 does; building it
 * with swift-ring-builder would take far too long.
 *
 *   npx tsx packages/swift-cluster/perf/ring-parse.perf.ts
 */
import { gzipSync } from 'node:zlib';
import { parseRing } from '../src';

const PART_POWER = 18;
const REPLICAS = 3;
const DEVICES = 10_000;
const BUDGET_MS = 1000;
const RUNS = 5;

/** Python's json.dumps(sort_keys=True) layout: ", " and ": " separators. */
const pyJson = (value: unknown): string =>
  JSON.stringify(value).replace(/","/g, '", "').replace(/":/g, '": ').replace(/,\{/g, ', {');

function buildRing(): Buffer {
  const devs = Array.from({ length: DEVICES }, (_, id) => ({
    device: `sd${String.fromCharCode(97 + (id % 24))}${1 + (id % 4)}`,
    id,
    ip: `10.${(id >> 16) & 255}.${(id >> 8) & 255}.${id & 255}`,
    meta: '',
    port: 6200,
    region: 1 + (id % 3),
    replication_ip: `10.128.${(id >> 8) & 255}.${id & 255}`,
    replication_port: 6300,
    weight: 8000.0 + (id % 7),
    zone: 1 + (id % 12),
  }));
  const json = Buffer.from(
    pyJson({ byteorder: 'little', devs, part_shift: 32 - PART_POWER, replica_count: REPLICAS, version: 123 }),
    'ascii',
  );
  const parts = 2 ** PART_POWER;
  const rows = Buffer.alloc(REPLICAS * parts * 2);
  // Like a balanced ring: device ids spread evenly and (nearly) incompressibly. mulberry32, fixed seed.
  let seed = 12345;
  for (let i = 0; i < REPLICAS * parts; i++) {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    rows.writeUInt16LE(((t ^ (t >>> 14)) >>> 0) % DEVICES, i * 2);
  }
  const prefix = Buffer.alloc(10);
  prefix.write('R1NG', 0, 'latin1');
  prefix.writeUInt16BE(1, 4);
  prefix.writeUInt32BE(json.length, 6);
  return gzipSync(Buffer.concat([prefix, json, rows]));
}

function time(fn: () => void): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

const ring = buildRing();
console.log(
  `ring: 2^${PART_POWER} partitions, ${REPLICAS} replicas, ${DEVICES} devices, ${(ring.length / 1e6).toFixed(2)} MB gzip'd`,
);

let worst = 0;
for (const withAssignments of [false, true]) {
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    times.push(
      time(() => {
        const parsed = parseRing(ring, 'object.ring.gz', { withAssignments });
        if (parsed.devices.length !== DEVICES) throw new Error('wrong device count');
      }),
    );
  }
  const sorted = [...times].sort((a, b) => a - b);
  worst = Math.max(worst, ...times);
  console.log(
    `${withAssignments ? 'with assignments ' : 'header only      '}: first ${times[0]?.toFixed(1)} ms, median ${sorted[Math.floor(RUNS / 2)]?.toFixed(1)} ms, max ${sorted[RUNS - 1]?.toFixed(1)} ms`,
  );
}
console.log(
  worst <= BUDGET_MS ? `OK: every run within ${BUDGET_MS} ms` : `TOO SLOW: ${worst.toFixed(1)} ms > ${BUDGET_MS} ms`,
);
process.exitCode = worst <= BUDGET_MS ? 0 : 1;
