/**
 * Ring plan benchmark. A benchmark, not a test: the figure, PASS/FAIL against the target, non-zero
 * exit only when something is broken.
 *
 *   pnpm bench:rings
 *   BENCH_RING_ADD=4 pnpm bench:rings                                  # a change that fits one step
 *   BENCH_RING_PART_POWER=14 BENCH_RING_DEVICES=100 pnpm bench:rings   # quick smoke run
 *
 * Setup (not timed): a builder of 2^BENCH_RING_PART_POWER partitions, 3 replicas, min_part_hours 1
 * and BENCH_RING_DEVICES devices (20 a node, nodes spread over 5 zones, weight 4000), built and
 * rebalanced once by Swift's RingBuilder with /usr/bin/python3, kept under BENCH_RING_CACHE so
 * later runs skip it. Timed: `makePlan` (what `cairn rings plan` runs) adding BENCH_RING_ADD devices
 * (20) on one new node, with a fixed seed and 5 % a step: loading the builder, Swift's rebalance of
 * the whole change and of the first step (side by side when the change takes several steps), the
 * moves per device. Reference (timed apart): swift-ring-builder's own `rebalance --seed` of the same
 * change on a copy, which must reassign the plan's parts_moved. Each is reported in wall and CPU
 * seconds (the CPU of every process it ran), with the cores the machine's other tenants used
 * meanwhile.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { makePlan } from '@cairn/rings';
import { endedChildrenCpuSeconds, machineCpuSeconds } from './lib/cpu';
import { intEnv, stringEnv } from './lib/env';
import { loadAverage } from './lib/hostile-report';
import { fmtCores, fmtInt, table } from './lib/report';

const SETTINGS = {
  partPower: intEnv('BENCH_RING_PART_POWER', 18),
  devices: intEnv('BENCH_RING_DEVICES', 1000),
  seed: intEnv('BENCH_RING_SEED', 42, 0),
  python: stringEnv('BENCH_RING_PYTHON', '/usr/bin/python3'),
  /** Devices the planned change adds, all on one new node (default: a whole node of 20). */
  add: intEnv('BENCH_RING_ADD', 20),
};
const TARGET_SECONDS = 30;
const PER_NODE = 20;

const BUILD = `
import sys
from swift.common.ring import RingBuilder
path, part_power, devices, per_node = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
b = RingBuilder(part_power, 3, 1)
for i in range(devices):
    node = i // per_node
    ip = "10.1.%d.%d" % (node // 250, node % 250 + 1)
    b.add_dev({"region": 1, "zone": node % 5 + 1, "ip": ip, "port": 6200, "replication_ip": ip,
               "replication_port": 6200, "device": "d%d" % (i % per_node), "weight": 4000, "meta": ""})
b.rebalance(seed="1")
b.save(path + "/object.builder")
b.get_ring().save(path + "/object.ring.gz")
`;

async function cachedBuilder(): Promise<string> {
  const dir =
    stringEnv('BENCH_RING_CACHE') ?? join(tmpdir(), `cairn-bench-rings-pp${SETTINGS.partPower}-d${SETTINGS.devices}`);
  if (await stat(join(dir, 'object.ring.gz')).catch(() => null)) return dir;
  await mkdir(dir, { recursive: true });
  const started = performance.now();
  process.stdout.write(`building the ring once with Swift (kept in ${dir}) ...\n`);
  await promisify(execFile)(
    SETTINGS.python,
    ['-c', BUILD, dir, String(SETTINGS.partPower), String(SETTINGS.devices), String(PER_NODE)],
    { maxBuffer: 1 << 20 },
  );
  process.stdout.write(`built in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  return dir;
}

interface Timed<T> {
  value: T;
  /** Wall-clock seconds. */
  wall: number;
  /** CPU seconds of this process and of every process it ran (null without /proc). */
  cpu: number | null;
  /** Cores the rest of the machine (other tenants) used meanwhile (null without /proc). */
  otherCores: number | null;
}

/** Times fn: wall and CPU seconds. Its child processes must have ended when it resolves. */
async function timed<T>(fn: () => Promise<T>): Promise<Timed<T>> {
  const [children, machine, self] = [endedChildrenCpuSeconds(), machineCpuSeconds(), process.cpuUsage()];
  const started = performance.now();
  const value = await fn();
  const wall = (performance.now() - started) / 1000;
  const [childrenAfter, machineAfter, selfUsed] = [
    endedChildrenCpuSeconds(),
    machineCpuSeconds(),
    process.cpuUsage(self),
  ];
  const cpu =
    children === null || childrenAfter === null
      ? null
      : childrenAfter - children + (selfUsed.user + selfUsed.system) / 1e6;
  const otherCores =
    cpu === null || machine === null || machineAfter === null ? null : Math.max(0, machineAfter - machine - cpu) / wall;
  return { value, wall, cpu, otherCores };
}

/** swift-ring-builder's own rebalance of the same change on a copy: the cost of one Swift rebalance. */
async function swiftRingBuilderRebalance(dir: string, add: string[]): Promise<Timed<number>> {
  const copy = await mkdtemp(join(tmpdir(), 'cairn-bench-rings-srb-'));
  const srb = (...args: string[]) =>
    promisify(execFile)('/usr/bin/swift-ring-builder', [join(copy, 'object.builder'), ...args]).catch(
      (e: { code?: number; stdout?: string }) => {
        // Exit 1 is "completed with warnings" (e.g. a balance worth another pass).
        if (e.code === 1 && e.stdout !== undefined) return { stdout: e.stdout };
        throw e;
      },
    );
  try {
    for (const f of ['object.builder', 'object.ring.gz']) await copyFile(join(dir, f), join(copy, f));
    await srb('pretend_min_part_hours_passed');
    await srb('add', ...add.flatMap((a) => [a.slice(0, a.lastIndexOf(':')), a.slice(a.lastIndexOf(':') + 1)]));
    return await timed(async () => {
      const { stdout } = await srb('rebalance', '--seed', String(SETTINGS.seed));
      const moved = /Reassigned (\d+) \(/.exec(stdout);
      if (!moved) throw new Error(`swift-ring-builder rebalance said: ${stdout}`);
      return Number(moved[1]);
    });
  } finally {
    await rm(copy, { recursive: true, force: true });
  }
}

const seconds = (s: number | null) => (s === null ? '-' : `${s.toFixed(1)} s`);

async function main(): Promise<void> {
  const cached = await cachedBuilder();
  // A copy, so the cached builder is never the one planned on (plan writes nothing, but still).
  const dir = await mkdtemp(join(tmpdir(), 'cairn-bench-rings-'));
  try {
    for (const f of ['object.builder', 'object.ring.gz']) await copyFile(join(cached, f), join(dir, f));
    const node = Math.ceil(SETTINGS.devices / PER_NODE);
    const add = Array.from({ length: SETTINGS.add }, (_, i) => `r1z${(node % 5) + 1}-10.2.0.1:6200/d${i}:4000`);
    const load = loadAverage();
    const planned = await timed(() =>
      makePlan({ swiftDir: dir, ring: 'object', add, seed: SETTINGS.seed, swiftPython: SETTINGS.python }),
    );
    const plan = planned.value;
    const reference = await swiftRingBuilderRebalance(dir, add);
    if (reference.value !== plan.parts_moved)
      throw new Error(`swift-ring-builder reassigned ${reference.value} partitions, the plan says ${plan.parts_moved}`);
    const step = plan.steps[0]!;
    process.stdout.write(
      `\nring: 2^${SETTINGS.partPower} partitions x 3 replicas, ${fmtInt(SETTINGS.devices)} devices; change: add ${SETTINGS.add} devices on one new node\n` +
        `Swift ${plan.swift_version}, seed ${plan.seed}: the whole change moves ${fmtInt(plan.parts_moved)} partitions (${plan.parts_moved_pct.toFixed(2)} %); ` +
        (step.fraction >= 1
          ? 'it fits in one step\n'
          : `step 1 (${(step.fraction * 100).toFixed(1)} % of the way) moves ${fmtInt(step.parts_moved)} (${step.parts_moved_pct.toFixed(2)} %), about ${plan.steps_estimated} steps in all (estimate)\n`) +
        `load average before: ${load}\n\n`,
    );
    process.stdout.write(
      table(
        ['measurement', 'wall', 'CPU', 'other tenants (cores)', 'target', 'verdict'],
        [
          [
            `cairn rings plan (makePlan), ${fmtInt(SETTINGS.devices)} devices`,
            seconds(planned.wall),
            seconds(planned.cpu),
            fmtCores(planned.otherCores),
            `≤ ${TARGET_SECONDS} s`,
            planned.wall <= TARGET_SECONDS ? 'PASS' : 'FAIL',
          ],
          [
            'reference: swift-ring-builder rebalance --seed, the whole change',
            seconds(reference.wall),
            seconds(reference.cpu),
            fmtCores(reference.otherCores),
            '-',
            '-',
          ],
        ],
      ),
    );
    process.stdout.write('\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:rings failed: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
