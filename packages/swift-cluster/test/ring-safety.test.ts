import { checkStepSafety, type StepSafety, type StepSafetyInput } from '../src';
import { newTraffic, sendJson, startServer, type Handler, type TestServer, type Traffic } from './helpers/recon-server';

/**
 * The verdict over many nodes, against local HTTP servers answering like Swift 2.30's recon
 * middleware (the all-in-one interop test, test-e2e/interop/ring-safety.test.ts, has one real node).
 */

const MD5 = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
const OTHER_MD5 = 'ffeeddccbbaa99887766554433221100';
const WRITTEN = new Date('2026-03-01T12:00:00Z');
const secs = (d: Date) => d.getTime() / 1000;

interface FakeNode {
  rings?: Record<string, string | null>;
  /** Recon cache keys of /recon/replication/<type>, as the replicators write them. */
  replication?: Record<string, number | null>;
  devices?: Array<{ device: string; used: number; size: number } | { device: string; mounted: false }>;
  unmounted?: Array<{ device: string; mounted: false | string }>;
}

/** A pass that began a minute after the write and took 30 s (object replicator: minutes). */
const objectPassAfter = { object_replication_last: secs(WRITTEN) + 90, object_replication_time: 0.5 };

const healthy = (): FakeNode => ({
  rings: { '/etc/swift/object.ring.gz': MD5, '/etc/swift/account.ring.gz': OTHER_MD5 },
  replication: objectPassAfter,
  devices: [
    { device: 'sdb1', used: 40, size: 100 },
    { device: 'sdb2', used: 50, size: 100 },
  ],
  unmounted: [],
});

function reconHandler(node: FakeNode): Handler {
  return (req, res) => {
    const path = req.url ?? '';
    if (path === '/recon/ringmd5') return sendJson(res, 200, JSON.stringify(node.rings ?? {}));
    if (path.startsWith('/recon/replication/'))
      return sendJson(
        res,
        200,
        JSON.stringify({
          replication_time: null,
          replication_stats: null,
          replication_last: null,
          ...node.replication,
        }),
      );
    if (path === '/recon/diskusage')
      return sendJson(
        res,
        200,
        JSON.stringify(
          (node.devices ?? []).map((d) =>
            'mounted' in d
              ? { device: d.device, mounted: false, size: '', used: '', avail: '' }
              : { device: d.device, mounted: true, size: d.size, used: d.used, avail: d.size - d.used },
          ),
        ),
      );
    if (path === '/recon/unmounted') return sendJson(res, 200, JSON.stringify(node.unmounted ?? []));
    sendJson(res, 404, '"Not Found"');
  };
}

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function nodes(specs: Array<FakeNode | Handler>, traffic: Traffic = newTraffic()) {
  const started = await Promise.all(
    specs.map((s) => startServer(typeof s === 'function' ? s : reconHandler(s), traffic)),
  );
  servers.push(...started);
  return started.map((s) => ({ ip: '127.0.0.1', port: s.port }));
}

const input = (n: StepSafetyInput['nodes'], overrides: Partial<StepSafetyInput> = {}): StepSafetyInput => ({
  ring: 'object',
  expectedMd5: MD5,
  ringWrittenAt: WRITTEN,
  nodes: n,
  fillLimitPct: 90,
  ...overrides,
});
const check = (s: StepSafety, name: string) => s.checks.find((c) => c.name === name)!;
const failing = (s: StepSafety) => s.checks.filter((c) => !c.ok).map((c) => c.name);

describe('checkStepSafety', () => {
  it('when every node runs the ring, replicated after it and has room, then the step is safe', async () => {
    const n = await nodes([healthy(), healthy(), healthy()]);
    const safety = await checkStepSafety(input(n));
    expect(failing(safety)).toEqual([]);
    expect(safety.safe).toBe(true);
    expect(check(safety, 'nodes').detail).toBe('All 3 storage nodes of object.ring.gz answered recon within 10000 ms.');
    expect(check(safety, 'replication').detail).toBe(
      'Every node finished an object replication pass that began after object.ring.gz was written at ' +
        '2026-03-01T12:00:00.000Z (the oldest finished at 2026-03-01T12:01:30.000Z).',
    );
    expect(check(safety, 'fill').detail).toBe(
      `No device is past 90% used (the fullest is 127.0.0.1:${n[0]!.port}/sdb2 at 50.0%).`,
    );
  });

  it('when a pass ended after the write but began before it (an aborted pass), then replication fails', async () => {
    // object_replication_time is in minutes: 2 minutes back from 30 s after the write.
    const aborted = {
      ...healthy(),
      replication: { object_replication_last: secs(WRITTEN) + 30, object_replication_time: 2 },
    };
    const n = await nodes([healthy(), aborted]);
    const safety = await checkStepSafety(input(n));
    expect(safety.safe).toBe(false);
    expect(check(safety, 'replication')).toEqual({
      name: 'replication',
      ok: false,
      detail:
        `127.0.0.1:${n[1]!.port} (began 2026-03-01T11:58:30.000Z, finished 2026-03-01T12:00:30.000Z) last finished an ` +
        'object replication pass that began before object.ring.gz was written at 2026-03-01T12:00:00.000Z — ' +
        'wait for a pass that begins after the write to finish there (swift-recon object -r shows it).',
    });
  });

  it("when a pass began after the write but within Swift's 15 s ring reload, then replication fails", async () => {
    // Began 5 s after the write (finished at +35 s, 0.5 minutes long): it may have run on the old ring.
    const early = {
      ...healthy(),
      replication: { object_replication_last: secs(WRITTEN) + 35, object_replication_time: 0.5 },
    };
    const n = await nodes([healthy(), early]);
    const safety = await checkStepSafety(input(n));
    expect(failing(safety)).toEqual(['replication']);
    expect(check(safety, 'replication').detail).toBe(
      `127.0.0.1:${n[1]!.port} (began 2026-03-01T12:00:05.000Z) last finished an object replication pass that began ` +
        "within 15 s of the write of object.ring.gz at 2026-03-01T12:00:00.000Z, before Swift's servers reload a " +
        'changed ring, so it may have run on the previous one — wait for the next pass to finish there.',
    );
  });

  it('when the ring is the container ring, then replication_last and replication_time (seconds) are read', async () => {
    const container = (last: number, took: number): FakeNode => ({
      ...healthy(),
      rings: { '/etc/swift/container.ring.gz': MD5 },
      replication: { replication_last: secs(WRITTEN) + last, replication_time: took },
    });
    const n = await nodes([container(90, 30), container(90, 120)]);
    const safety = await checkStepSafety(input(n, { ring: 'container' }));
    expect(failing(safety)).toEqual(['replication']);
    expect(check(safety, 'replication').detail).toMatch(
      new RegExp(`^127\\.0\\.0\\.1:${n[1]!.port} \\(began 2026-03-01T11:59:30\\.000Z, .* container replication pass`),
    );
  });

  it('when an object node reports only replication_last (no transitional object_ keys), then those are read, in minutes', async () => {
    const plain = (took: number): FakeNode => ({
      ...healthy(),
      replication: { replication_last: secs(WRITTEN) + 90, replication_time: took },
    });
    const n = await nodes([plain(1), plain(2)]);
    const safety = await checkStepSafety(input(n));
    expect(failing(safety)).toEqual(['replication']);
    expect(check(safety, 'replication').detail).toMatch(
      new RegExp(
        `^127\\.0\\.0\\.1:${n[1]!.port} \\(began 2026-03-01T11:59:30\\.000Z, finished 2026-03-01T12:01:30\\.000Z\\)`,
      ),
    );
  });

  it('when a node has never finished a pass, then replication says to check its replicator', async () => {
    const n = await nodes([{ ...healthy(), replication: { object_replication_last: null } }]);
    const safety = await checkStepSafety(input(n));
    expect(check(safety, 'replication').detail).toBe(
      `127.0.0.1:${n[0]!.port} has not finished an object replication pass yet (recon's object_replication_last is empty) ` +
        '— check that swift-object-replicator runs there and writes to the recon_cache_path the recon middleware reads.',
    );
  });

  it('when nodes lack the ring, cannot read it or run another, then ring_md5 names each', async () => {
    const n = await nodes([
      { ...healthy(), rings: { '/etc/swift/account.ring.gz': MD5 } },
      { ...healthy(), rings: { '/srv/swift/object.ring.gz': null } },
      { ...healthy(), rings: { '/etc/swift/object.ring.gz': OTHER_MD5.toUpperCase() } },
      { ...healthy(), rings: { '/etc/swift/object.ring.gz': MD5.toUpperCase() } },
    ]);
    const safety = await checkStepSafety(input(n));
    expect(check(safety, 'ring_md5').detail).toBe(
      `127.0.0.1:${n[0]!.port} has no object.ring.gz; 127.0.0.1:${n[1]!.port} cannot read its object.ring.gz; ` +
        `127.0.0.1:${n[2]!.port} still runs object.ring.gz FFEEDDCC… (expected a1b2c3d4…) — wait for the ring to ` +
        'reach them (or run cairn rings pull there).',
    );
  });

  it('when devices are past the limit or unmounted, then fill and mounted name them', async () => {
    const n = await nodes([
      {
        ...healthy(),
        devices: [
          { device: 'sdb1', used: 95, size: 100 },
          { device: 'sdb9', mounted: false },
        ],
        unmounted: [
          { device: 'sdb9', mounted: false },
          { device: 'sdc1', mounted: '[Errno 5] Input/output error' },
        ],
      },
    ]);
    const safety = await checkStepSafety(input(n));
    const where = `127.0.0.1:${n[0]!.port}`;
    expect(check(safety, 'fill').detail).toBe(
      `${where}/sdb1 at 95.0% is past the 90% fill limit — add capacity or lower the weight of the full devices ` +
        'before the next step moves more partitions onto them.',
    );
    expect(check(safety, 'mounted').detail).toMatch(
      new RegExp(
        `^${where}/sdb9, ${where}/sdc1 \\(\\[Errno 5\\] Input/output error\\) are unmounted — mount them again`,
      ),
    );
    expect(failing(safety)).toEqual(['fill', 'mounted']);
  });

  it('when a node hangs or refuses, then nodes fails naming both and the rest are judged on the others', async () => {
    const [good, hanging, refused] = await nodes([healthy(), () => undefined, healthy()]);
    await servers.pop()!.close();
    const started = Date.now();
    const safety = await checkStepSafety(input([good!, hanging!, refused!]), { timeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(check(safety, 'nodes').detail).toBe(
      `2 of 3 storage nodes did not answer recon: 127.0.0.1:${hanging!.port} (no complete answer within 300 ms); ` +
        `127.0.0.1:${refused!.port} (request failed (ECONNREFUSED)) — start the storage server there (with the recon ` +
        'middleware in its pipeline) or fix the network, then check again.',
    );
    expect(check(safety, 'ring_md5')).toEqual({
      name: 'ring_md5',
      ok: true,
      detail: 'Every node (of the node that answered) runs object.ring.gz a1b2c3d4…, the ring last written.',
    });
    expect(failing(safety)).toEqual(['nodes']);
    expect(safety.safe).toBe(false);
  });

  it('when a node answers one endpoint badly, then it is a node that did not answer', async () => {
    const broken = reconHandler(healthy());
    const n = await nodes([
      (req, res) => (req.url === '/recon/unmounted' ? sendJson(res, 500, '"oops"') : broken(req, res)),
    ]);
    const safety = await checkStepSafety(input(n));
    expect(check(safety, 'nodes').detail).toContain(`127.0.0.1:${n[0]!.port} (HTTP 500 from GET /recon/unmounted)`);
    expect(safety.checks.filter((c) => c.name !== 'nodes').map((c) => c.detail)).toEqual(
      Array(4).fill('Not checked: no node answered recon, so this could not be checked — see the nodes check.'),
    );
  });

  it('when many nodes are behind, then the detail lists five and counts the rest, once per node', async () => {
    const behind = { ...healthy(), rings: { '/etc/swift/object.ring.gz': OTHER_MD5 } };
    const n = await nodes(Array.from({ length: 7 }, () => behind));
    const safety = await checkStepSafety(input([...n, n[0]!]));
    expect(check(safety, 'ring_md5').detail).toMatch(/ still runs .* and 2 more \(expected a1b2c3d4…\)/);
    expect(check(safety, 'ring_md5').detail.match(/still runs/g)).toHaveLength(5);
    expect(check(safety, 'nodes').detail).toBe('All 7 storage nodes of object.ring.gz answered recon within 10000 ms.');
  });

  it('when concurrency is 2, then at most 2 nodes are read at once (4 requests each)', async () => {
    const traffic = newTraffic();
    const slow: Handler = (req, res) => setTimeout(() => reconHandler(healthy())(req, res), 30);
    const n = await nodes(
      Array.from({ length: 6 }, () => slow),
      traffic,
    );
    const safety = await checkStepSafety(input(n), { concurrency: 2 });
    expect(safety.safe).toBe(true);
    expect(traffic.requests).toBe(24);
    expect(traffic.maxInFlight).toBe(8);
  });

  it('when no nodes are given, then nodes fails and nothing is called safe', async () => {
    const safety = await checkStepSafety(input([]));
    expect(safety.safe).toBe(false);
    expect(check(safety, 'nodes').detail).toBe(
      "No storage nodes were given for object.ring.gz, so nothing could be checked — pass the nodes of the ring's devices.",
    );
  });

  it.each([
    [{ ring: 'objects' }, /not a ring name/],
    [{ expectedMd5: 'abc' }, /expectedMd5 must be 32 hex digits/],
    [{ ringWrittenAt: new Date('nope') }, /ringWrittenAt must be a valid date/],
    [{ fillLimitPct: 0 }, /fillLimitPct must be above 0 and at most 100/],
  ])('when the input is %j, then it throws a RangeError saying what is wrong', async (bad, message) => {
    await expect(checkStepSafety(input([], bad))).rejects.toThrow(message);
  });
});
