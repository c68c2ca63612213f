/**
 * checkStepSafety (@cairn/swift-cluster) against a real Swift all-in-one: 6 object devices, the
 * object replicator (ssync) and the account/container replicators writing recon stats, rings built
 * and rewritten by swift-ring-builder. Run alone:
 *
 *   node --experimental-vm-modules node_modules/jest/bin/jest.js -c test-e2e/jest.interop.config.js ring-safety
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkStepSafety, SWIFT_RING_RELOAD_MS, type StepSafety, type StepSafetyInput } from '@cairn/swift-cluster';

/** A pass counts once it began after Swift's servers reloaded the ring written at `at`. */
const reloaded = (at: Date) => new Date(at.getTime() + SWIFT_RING_RELOAD_MS + 1_000);
import { startSwiftCluster, swiftRingBuilderSteps, type InstalledRing, type SwiftCluster } from './swift-cluster';

const md5Of = (path: string) => createHash('md5').update(readFileSync(path)).digest('hex');
const byName = (s: StepSafety) => Object.fromEntries(s.checks.map((c) => [c.name, c]));

describe('ring step safety checks against a real Swift all-in-one', () => {
  let swift: SwiftCluster;
  let work: string;
  let objectNode: string;
  /** The object ring as installed now: what the next step check expects. */
  let current: { md5: string; writtenAt: Date };

  const input = (overrides: Partial<StepSafetyInput> = {}): StepSafetyInput => ({
    ring: 'object',
    expectedMd5: current.md5,
    ringWrittenAt: current.writtenAt,
    nodes: [{ ip: swift.nodes.object.ip, port: swift.nodes.object.port }],
    // All devices are directories of the machine's temp file system, which may be past 90% used.
    fillLimitPct: 100,
    ...overrides,
  });

  const withLogs = async (body: () => Promise<void>) => {
    try {
      await body();
    } catch (e) {
      swift?.dumpLogs(200);
      throw e;
    }
  };

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'cairn-ring-safety-'));
    swift = await startSwiftCluster({ pipeline: 'tempauth', allInOne: true });
    if (process.env.CAIRN_INTEROP_VERBOSE) console.log(`all-in-one started in ${swift.startedInMs} ms`);
    objectNode = `${swift.nodes.object.ip}:${swift.nodes.object.port}`;
    const ring = join(swift.swiftDir, 'object.ring.gz');
    current = { md5: md5Of(ring), writtenAt: statSync(ring).mtime };

    // Objects in many partitions, so a replication pass has real work and a rebalance moves data.
    const login = await fetch(swift.authUrl!, { headers: { 'X-Auth-User': 'test:tester', 'X-Auth-Key': 'testing' } });
    const token = login.headers.get('x-auth-token')!;
    const container = `${swift.storageUrl('test')}/ring-safety`;
    expect((await fetch(container, { method: 'PUT', headers: { 'X-Auth-Token': token } })).status).toBe(201);
    const puts = Array.from({ length: 24 }, (_, i) =>
      fetch(`${container}/obj-${i}`, {
        method: 'PUT',
        headers: { 'X-Auth-Token': token },
        body: `object ${i} `.repeat(100),
      }),
    );
    expect((await Promise.all(puts)).map((r) => r.status)).toEqual(Array(24).fill(201));
  });

  afterAll(async () => {
    await swift?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('when the all-in-one runs, then recon reports 6 object devices with their used bytes and the replicators run', () =>
    withLogs(async () => {
      expect(swift.replicators).toEqual(['object-replicator', 'container-replicator', 'account-replicator']);
      const usage = await swift.diskUsage();
      expect(usage.map((d) => d.device).sort()).toEqual(['d1', 'd2', 'd3', 'd4', 'd5', 'd6']);
      for (const d of usage) {
        expect(d.mounted).toBe(true);
        expect(d.used).toBeGreaterThan(0);
      }
    }));

  it('when an object replication pass has finished since the ring was written, then the step is safe', () =>
    withLogs(async () => {
      await swift.waitForReplicationPass(reloaded(current.writtenAt));
      const safety = await checkStepSafety(input());
      expect(safety.checks.filter((c) => !c.ok)).toEqual([]);
      expect(safety.safe).toBe(true);
      expect(safety.checks.map((c) => c.name).sort()).toEqual(['fill', 'mounted', 'nodes', 'replication', 'ring_md5']);
      expect(byName(safety).ring_md5!.detail).toBe(
        `Every node runs object.ring.gz ${current.md5.slice(0, 8)}…, the ring last written.`,
      );
    }));

  it('when the account replicator has passed, then the account ring is judged from its replication_last', () =>
    withLogs(async () => {
      const ring = join(swift.swiftDir, 'account.ring.gz');
      const writtenAt = statSync(ring).mtime;
      await swift.waitForReplicationPass(reloaded(writtenAt), { type: 'account' });
      const nodes = [{ ip: swift.nodes.account.ip, port: swift.nodes.account.port }];
      const safety = await checkStepSafety(
        input({ ring: 'account', expectedMd5: md5Of(ring), ringWrittenAt: writtenAt, nodes }),
      );
      expect(safety.checks.filter((c) => !c.ok)).toEqual([]);
      // A ring written after the last pass began is not yet replicated.
      const later = await checkStepSafety(
        input({ ring: 'account', expectedMd5: md5Of(ring), ringWrittenAt: new Date(), nodes }),
      );
      expect(byName(later).replication!.ok).toBe(false);
      expect(byName(later).replication!.detail).toContain('account replication pass that began before account.ring.gz');
    }));

  it('when the object ring is rewritten, then replication fails right after the write and passes once a pass began after it', () =>
    withLogs(async () => {
      // An operator's step: set_weight + rebalance on a copy of the builder, then the new ring goes out.
      const builder = join(work, 'object.builder');
      copyFileSync(join(swift.swiftDir, 'object.builder'), builder);
      const commands = [['pretend_min_part_hours_passed'], ['set_weight', '/d6', '50'], ['rebalance', '--seed', '2']];
      const results = await swiftRingBuilderSteps(commands.map((c) => [builder, ...c]));
      expect(results.map((r) => ({ command: r.args[1], ok: r.ok, output: r.output }))).toEqual([
        { command: 'pretend_min_part_hours_passed', ok: true, output: expect.any(String) },
        { command: 'set_weight', ok: true, output: expect.stringContaining('weight set to 50') },
        { command: 'rebalance', ok: true, output: expect.stringMatching(/^Reassigned \d+ /) },
      ]);
      const previous = current;
      // An empty pass takes a millisecond: hold the replicator still so that none can begin and end
      // between the write and the check that follows it.
      swift.pauseProcess('object-replicator');
      let now: StepSafety;
      let installed: InstalledRing;
      try {
        installed = swift.installRing(join(work, 'object.ring.gz'));
        now = await checkStepSafety(input({ expectedMd5: installed.md5, ringWrittenAt: installed.writtenAt }));
      } finally {
        swift.resumeProcess('object-replicator');
      }
      expect(installed.md5).not.toBe(previous.md5);
      if (process.env.CAIRN_INTEROP_VERBOSE) console.log(JSON.stringify(now, null, 2));
      current = { md5: installed.md5, writtenAt: installed.writtenAt };
      const replication = byName(now).replication!;
      expect(now.safe).toBe(false);
      expect(replication.ok).toBe(false);
      expect(replication.detail).toMatch(
        new RegExp(
          `^${objectNode.replace(/\./g, '\\.')} \\(began \\S+, finished \\S+\\) last finished an object replication pass ` +
            `that began before object\\.ring\\.gz was written at ${installed.writtenAt.toISOString().replace(/\./g, '\\.')} — ` +
            'wait for a pass that begins after the write to finish there \\(swift-recon object -r shows it\\)\\.$',
        ),
      );
      // The node reads the ring file itself, so it already runs the new one.
      expect(byName(now).ring_md5!.ok).toBe(true);

      const pass = await swift.waitForReplicationPass(reloaded(installed.writtenAt));
      expect(pass.startedAt.getTime()).toBeGreaterThan(installed.writtenAt.getTime() + SWIFT_RING_RELOAD_MS);
      const later = await checkStepSafety(input());
      expect(later.checks.filter((c) => !c.ok)).toEqual([]);
      expect(later.safe).toBe(true);
    }));

  it('when the node runs a ring other than the one expected, then ring_md5 fails and says to wait for the ring', () =>
    withLogs(async () => {
      const expected = createHash('md5').update('a ring the node never got').digest('hex');
      const safety = await checkStepSafety(input({ expectedMd5: expected }));
      expect(safety.safe).toBe(false);
      expect(byName(safety).ring_md5).toEqual({
        name: 'ring_md5',
        ok: false,
        detail:
          `${objectNode} still runs object.ring.gz ${current.md5.slice(0, 8)}… (expected ${expected.slice(0, 8)}…) — ` +
          'wait for the ring to reach it (or run cairn rings pull there).',
      });
    }));

  it('when a device is fuller than the fill limit, then fill fails naming it', () =>
    withLogs(async () => {
      const usage = await swift.diskUsage();
      const pct = (usage[0]!.used! / usage[0]!.size!) * 100;
      const safety = await checkStepSafety(input({ fillLimitPct: pct / 2 }));
      const fill = byName(safety).fill!;
      expect(safety.safe).toBe(false);
      expect(fill.ok).toBe(false);
      // All devices are directories of one file system here, so all six are equally full.
      expect(fill.detail).toMatch(
        new RegExp(
          `^${objectNode.replace(/\./g, '\\.')}/d\\d at \\d+\\.\\d%, .* and 1 more are past the [0-9.]+% fill limit — add capacity`,
        ),
      );
    }));

  it('when a device is unmounted, then mounted fails naming the device', () =>
    withLogs(async () => {
      // recon treats a device directory as mounted when it is a mount point or holds `.ismount`.
      const marker = join(swift.devicesDir, 'd4', '.ismount');
      unlinkSync(marker);
      try {
        const safety = await checkStepSafety(input());
        expect(byName(safety).mounted).toEqual({
          name: 'mounted',
          ok: false,
          detail: expect.stringMatching(
            new RegExp(`^${objectNode.replace(/\./g, '\\.')}/d4 is unmounted — mount it again`),
          ),
        });
        expect(safety.safe).toBe(false);
      } finally {
        writeFileSync(marker, '');
      }
    }));

  it('when the object server is stopped, then the nodes check fails naming the node', () =>
    withLogs(async () => {
      await swift.stopProcess('object-server');
      const safety = await checkStepSafety(input(), { timeoutMs: 2_000 });
      expect(safety.safe).toBe(false);
      expect(byName(safety).nodes).toEqual({
        name: 'nodes',
        ok: false,
        detail:
          `1 of 1 storage node did not answer recon: ${objectNode} (request failed (ECONNREFUSED)) — ` +
          'start the storage server there (with the recon middleware in its pipeline) or fix the network, then check again.',
      });
      expect(
        safety.checks.filter((c) => c.name !== 'nodes').every((c) => !c.ok && c.detail.startsWith('Not checked')),
      ).toBe(true);
    }));
});
