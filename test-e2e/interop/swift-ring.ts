import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const SWIFT_RING_BUILDER = '/usr/bin/swift-ring-builder';
export const SWIFT_PYTHON = '/usr/bin/python3';

/** swift-ring-builder itself; its exit 1 ("completed with warnings", e.g. dispersion) is a success. */
export async function srb(dir: string, ...args: string[]): Promise<string> {
  try {
    return (await run(SWIFT_RING_BUILDER, args, { cwd: dir })).stdout;
  } catch (e) {
    const err = e as { code?: number; stdout?: string };
    if (err.code === 1 && err.stdout !== undefined) return err.stdout;
    throw e;
  }
}

/**
 * A ring built by swift-ring-builder: part power 10, 3 replicas, six devices of weight 100 on
 * six nodes in three zones, rebalanced with seed 1.
 */
export async function buildRing(minPartHours = 0): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'cairn-rings-'));
  await srb(dir, 'object.builder', 'create', '10', '3', String(minPartHours));
  const devs = [1, 2, 3, 4, 5, 6].map((i) => `r1z${((i - 1) % 3) + 1}-10.0.0.${i}:6200/sdb`);
  await srb(dir, 'object.builder', 'add', ...devs.flatMap((d) => [d, '100']));
  await srb(dir, 'object.builder', 'rebalance', '--seed', '1');
  return dir;
}

export async function copyDir(dir: string): Promise<string> {
  const copy = await mkdtemp(join(tmpdir(), 'cairn-rings-copy-'));
  await cp(dir, copy, { recursive: true });
  return copy;
}

export const removeDir = (dir: string) => rm(dir, { recursive: true, force: true });

/** Each device's weight and partition count as Swift's RingBuilder loads them from the builder file. */
export async function builderDevices(dir: string): Promise<Array<{ id: number; weight: number; parts: number }>> {
  const script =
    'import json,sys\nfrom swift.common.ring import RingBuilder\nb = RingBuilder.load(sys.argv[1])\n' +
    'print(json.dumps([{"id": d["id"], "weight": d["weight"], "parts": d["parts"]} for d in b.devs if d]))';
  const { stdout } = await run(SWIFT_PYTHON, ['-c', script, join(dir, 'object.builder')]);
  return JSON.parse(stdout) as Array<{ id: number; weight: number; parts: number }>;
}

/** "Reassigned 472 (46.09%) partitions." from swift-ring-builder's rebalance. */
export function reassigned(out: string): number {
  const m = /Reassigned (\d+) \(/.exec(out);
  if (!m) throw new Error(`swift-ring-builder rebalance said: ${out}`);
  return Number(m[1]);
}
