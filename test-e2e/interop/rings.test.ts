/**
 * `cairn rings plan|apply|push|pull` (the built CLI) against a real Swift all-in-one: 6 object
 * devices plus 2 spare ones, each its own tmpfs, the object replicator over ssync, rings with
 * min_part_hours 0 (so only the recon checks gate a step), and the management API on Postgres.
 * Run alone:
 *
 *   node --experimental-vm-modules node_modules/jest/bin/jest.js -c test-e2e/jest.interop.config.js interop/rings
 *
 * CAIRN_INTEROP_VERBOSE=1 prints the plans' figures (docs/rings.md's worked example comes from it).
 *
 * @slow: waits out replication passes (jest.sequencer.js starts it first)
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SWIFT_RING_RELOAD_MS } from '@cairn/swift-cluster';
import type { Plan } from '../../packages/rings/src/plan-types';
import { builderDevices, copyDir, reassigned, removeDir, srb } from './swift-ring';
import { cairn } from '../support/processes';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';
import { startSwiftCluster, type SwiftCluster } from './swift-cluster';

const OBJECTS = 800;
const OBJECT_BYTES = 32 * 1024;
const SEED = 7;
/** Swift's Ring objects look at the ring file's mtime at most this often (their reload_time). */
const RING_RELOAD_MS = SWIFT_RING_RELOAD_MS + 1_000;
const verbose = !!process.env.CAIRN_INTEROP_VERBOSE;
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

describe('cairn rings against a real Swift all-in-one', () => {
  let swift: SwiftCluster;
  let stack: Stack;
  let work: string;
  let env: Record<string, string>;
  let token: string;
  let container: string;
  const ringFile = () => join(swift.swiftDir, 'object.ring.gz');
  const node = () => `127.0.0.1:${swift.nodes.object.port}`;

  const run = async (args: string[]) => {
    const r = await cairn(args, env);
    if (verbose) console.log(`$ cairn ${args.join(' ')}\n${r.out}`);
    return r;
  };
  const plan = async (name: string, ...change: string[]): Promise<{ plan: Plan; file: string }> => {
    const file = join(work, `${name}.json`);
    const r = await run([
      'rings',
      'plan',
      '--swift-dir',
      swift.swiftDir,
      ...change,
      '--seed',
      String(SEED),
      '--usage-from-recon',
      '-o',
      'json',
      '--save',
      file,
    ]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    return { plan: JSON.parse(r.stdout) as Plan, file };
  };
  /**
   * Applies a plan's steps from `from` on, each once a replication pass began after the last ring:
   * `count` of them, or up to the last. Each step is in the plan file before it is applied.
   */
  const applyAll = async (file: string, from = 1, count = Infinity) => {
    for (let step = from; step < from + count; step++) {
      const shown = (JSON.parse(readFileSync(file, 'utf8')) as Plan).steps[step - 1]!;
      await swift.waitForReplicationPass(new Date(statSync(ringFile()).mtime.getTime() + RING_RELOAD_MS), {
        timeoutMs: 60_000,
      });
      const r = await run(['rings', 'apply', file, '--swift-dir', swift.swiftDir]);
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
      expect(r.stdout).toMatch(new RegExp(`Applied step ${step}: ${shown.parts_moved} partitions moved`));
      if (/That was the last step/.test(r.stdout)) return;
    }
  };
  /**
   * Waits until a whole replication pass leaves every device's used bytes as they were. Only passes
   * that began after the replicator reloaded the ring count: a Swift process reloads a changed ring
   * at most every 15 s, and a pass in those seconds still moves data by the previous one.
   */
  const settle = async (timeoutMs = 90_000) => {
    const deadline = Date.now() + timeoutMs;
    const reloaded = statSync(ringFile()).mtime.getTime() + RING_RELOAD_MS;
    let before = '';
    for (;;) {
      const after = new Date(Math.max(Date.now(), reloaded));
      const pass = await swift.waitForReplicationPass(after, { timeoutMs });
      const now = JSON.stringify(await swift.diskUsage());
      if (now === before) return pass;
      if (Date.now() > deadline) throw new Error(`replication did not settle within ${timeoutMs} ms`);
      before = now;
    }
  };
  /** The object files (`.data`) a device still holds, as paths relative to it. */
  const dataFilesOn = (device: string) =>
    (readdirSync(join(swift.devicesDir, device), { recursive: true }) as string[]).filter((f) => f.endsWith('.data'));
  const usedBy = async () => Object.fromEntries((await swift.diskUsage()).map((d) => [d.device, d.used!]));
  const withLogs = async (body: () => Promise<void>) => {
    try {
      await body();
    } catch (e) {
      swift?.dumpLogs(150);
      throw e;
    }
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'cairn-rings-interop-'));
    [swift, stack] = await Promise.all([
      startSwiftCluster({
        pipeline: 'tempauth',
        // No account or container replicators: every check here is on the object ring, and their
        // passes a second apart would take CPU from the object replicator's.
        allInOne: { spareDevices: 2, tmpfsMiB: 96, dbReplicators: false },
        minPartHours: 0,
        // Which partitions hold the objects follows from the hash path salt. With a random one, a
        // device's share of 800 objects varies by about 6 % (one in √300) from run to run, which
        // is noise in the used-bytes comparison below, not an error of the plan's projection.
        hashPathSalt: 'cairn-rings-interop',
      }),
      startStack({ database: 'postgres' }),
    ]);
    if (!swift.tmpfs.mounted) console.log(`devices are plain directories: ${swift.tmpfs.reason}`);
    env = {
      XDG_CONFIG_HOME: work,
      CAIRN_API_URL: stack.apiUrl,
      CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}`,
    };
    const login = await fetch(swift.authUrl!, { headers: { 'X-Auth-User': 'test:tester', 'X-Auth-Key': 'testing' } });
    token = login.headers.get('x-auth-token')!;
    container = `${swift.storageUrl('test')}/rings`;
    expect((await fetch(container, { method: 'PUT', headers: { 'X-Auth-Token': token } })).status).toBe(201);
    // Enough objects that each device's share is measurable and close to its share of partitions.
    const t0 = Date.now();
    const body = Buffer.alloc(OBJECT_BYTES, 'r');
    const statuses: number[] = [];
    const queue = Array.from({ length: OBJECTS }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const res = await fetch(`${container}/obj-${i}`, {
            method: 'PUT',
            headers: { 'X-Auth-Token': token },
            body,
          });
          await res.arrayBuffer();
          statuses.push(res.status);
        }
      }),
    );
    expect(statuses.filter((s) => s !== 201)).toEqual([]);
    if (verbose) console.log(`Swift up in ${swift.startedInMs} ms; ${OBJECTS} objects put in ${Date.now() - t0} ms`);
  });

  afterAll(async () => {
    await swift?.stop();
    await stack?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  let grow: { plan: Plan; file: string };

  it('when two devices are planned in, then parts_moved and parts_after are what swift-ring-builder gives for the seed', () =>
    withLogs(async () => {
      const port = swift.nodes.object.port;
      const adds = swift.spareDevices.map((d, i) => `r1z${7 + i}-127.0.0.1:${port}/${d}:100`);
      expect(adds).toHaveLength(2);
      await swift.waitForReplicationPass(new Date(statSync(ringFile()).mtime.getTime() + RING_RELOAD_MS), {
        timeoutMs: 60_000,
      });
      grow = await plan('grow', ...adds.flatMap((a) => ['--add', a]), '--max-move-pct', '50');
      if (verbose) console.log(JSON.stringify({ ...grow.plan, steps: grow.plan.steps.length }, null, 2));

      const copy = await copyDir(swift.swiftDir);
      try {
        const out = await srb(
          copy,
          'object.builder',
          'add',
          ...adds.flatMap((a) => [a.slice(0, a.lastIndexOf(':')), '100']),
        );
        expect(out).toMatch(/\/d7_"" with 100\.0 weight got id 6\n/);
        const rebalanced = await srb(copy, 'object.builder', 'rebalance', '--seed', String(SEED));
        expect(grow.plan.parts_moved).toBe(reassigned(rebalanced));
        const swiftParts = Object.fromEntries((await builderDevices(copy)).map((d) => [d.id, d.parts]));
        expect(Object.fromEntries(grow.plan.devices.map((d) => [d.id, d.parts_after]))).toEqual(swiftParts);
      } finally {
        await removeDir(copy);
      }
      expect(grow.plan.usage_source).toBe('recon');
      expect(grow.plan.steps).toHaveLength(1);
      expect(grow.plan.steps[0]!.fraction).toBeLessThan(1);
    }));

  it('when a step went out and replication has not finished a pass since, then the next step is refused by the recon checks', () =>
    withLogs(async () => {
      // Hold the replicator still so that no pass can begin and end between step 1 and the next apply.
      swift.pauseProcess('object-replicator');
      try {
        await applyAll(grow.file, 1, 1);
        const refused = await run(['rings', 'apply', grow.file, '--swift-dir', swift.swiftDir]);
        expect(refused.code).toBe(5);
        expect(refused.stderr).toMatch(
          new RegExp(
            `^cairn: step 2 not applied: .*${node().replace(/\./g, '\\.')} .*last finished an object replication pass that began before object\\.ring\\.gz was written`,
          ),
        );
      } finally {
        swift.resumeProcess('object-replicator');
      }
      await applyAll(grow.file, 2);
      const after = Object.fromEntries((await builderDevices(swift.swiftDir)).map((d) => [d.id, d.parts]));
      expect(after).toEqual(Object.fromEntries(grow.plan.devices.map((d) => [d.id, d.parts_after])));
    }));

  it('when the ring is pushed and pulled, then every node runs the ring the management API serves', () =>
    withLogs(async () => {
      const pushed = await run([
        'rings',
        'push',
        '--cluster',
        'default',
        '--swift-dir',
        swift.swiftDir,
        '--ring',
        'object',
      ]);
      expect(pushed).toMatchObject({ code: 0, stderr: '' });
      const pulled = await run(['rings', 'pull', '--cluster', 'default', '--swift-dir', swift.swiftDir]);
      expect(pulled).toMatchObject({ code: 0, stderr: '' });
      const served = await fetch(`${stack.apiUrl}/api/v1/clusters/1/rings/object.ring.gz`, {
        headers: { Authorization: ADMIN_AUTH },
      });
      expect(served.status).toBe(200);
      const bytes = Buffer.from(await served.arrayBuffer());
      expect(served.headers.get('etag')).toBe(`"${md5(bytes)}"`);
      expect(md5(readFileSync(ringFile()))).toBe(md5(bytes));
      for (const server of ['account', 'container', 'object'] as const) {
        const res = await fetch(`${swift.nodes[server].reconUrl}/ringmd5`);
        const sums = (await res.json()) as Record<string, string>;
        expect({ server, md5: sums[ringFile()] }).toEqual({ server, md5: md5(bytes) });
      }
    }));

  it('when replication has settled, then each device uses within 10 % of the plan’s projected_used_bytes', () =>
    withLogs(async () => {
      await settle();
      if (!swift.tmpfs.mounted) {
        console.log(`skipped the used-bytes comparison: ${swift.tmpfs.reason}`);
        return;
      }
      const used = await usedBy();
      const rows = grow.plan.devices.map((d) => ({
        device: d.device,
        used_before: d.used_bytes,
        projected: d.projected_used_bytes!,
        used_after: used[d.device]!,
        off_pct: Math.round(((used[d.device]! - d.projected_used_bytes!) / d.projected_used_bytes!) * 1000) / 10,
      }));
      if (verbose) console.table(rows);
      // The new devices started empty and now hold their share.
      expect(rows.filter((r) => r.used_after < OBJECTS * OBJECT_BYTES * 0.2)).toEqual([]);
      expect(rows.filter((r) => Math.abs(r.off_pct) > 10)).toEqual([]);
    }));

  it('when a device is drained to weight 0 and then removed through plans, then every object is still readable', () =>
    withLogs(async () => {
      const d1 = grow.plan.devices.find((d) => d.device === 'd1')!;
      const drain = await plan('drain', '--set-weight', `d${d1.id}:0`, '--max-move-pct', '100');
      expect(drain.plan.devices.find((d) => d.id === d1.id)).toMatchObject({ weight_after: 0, parts_after: 0 });
      await applyAll(drain.file);
      await settle();
      // Count object files, not used bytes: the replicator leaves a drained device's empty partition
      // directories and hashes.pkl files behind (about 200 KiB here), and those are not data.
      expect(dataFilesOn('d1')).toEqual([]);

      const remove = await plan('remove', '--remove', `d${d1.id}`);
      expect(remove.plan.parts_moved).toBe(0);
      await applyAll(remove.file);
      expect((await builderDevices(swift.swiftDir)).map((d) => d.id)).not.toContain(d1.id);

      const failures: string[] = [];
      const queue = Array.from({ length: OBJECTS }, (_, i) => i);
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
            const res = await fetch(`${container}/obj-${i}`, { headers: { 'X-Auth-Token': token } });
            const got = Buffer.from(await res.arrayBuffer());
            if (res.status !== 200 || got.length !== OBJECT_BYTES) failures.push(`obj-${i}: ${res.status}`);
          }
        }),
      );
      expect(failures).toEqual([]);
    }));
});
