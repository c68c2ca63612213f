/**
 * Cluster health end to end against a real Swift all-in-one: stale replication, a foreign ring on a
 * node, a full device, async pendings, quarantined objects and a silent node are caused for real on
 * the cluster, `cairn health collect` reads recon and posts the rounds to the real management API
 * (on Postgres), and each finding opens in GET …/health/ and closes in …/health/history/ once the
 * cause is gone (docs/health.md, "Verified against real Swift").
 *
 * One cluster for all, to keep the file short: the account, container and object servers are three
 * nodes (ip:port) on one host, so, as on a real node, they share the devices (each a small tmpfs)
 * and the recon cache, and each reports the devices' fill, the async pendings and the quarantine
 * count. Each server reads its rings from its own directory, so one of them can hold another ring.
 * The replicators do not run by themselves: single passes (`runOnce`) stand for them, as the
 * updater, the auditor and swift-recon-cron run once where the conditions need them.
 *
 * The two time limits are shortened to seconds (fractions of an hour), and their waits overlap the
 * other conditions' steps: the object replicator's pass before round 1 grows older than
 * replication_max_age_hours while round 2's causes are made; round 2's quarantines pass their
 * window while round 3's causes are removed.
 *
 * Rounds: 1 before any cause, right after one object replicator pass (the account and container
 * replicators never completed one); 2 with every cause at once (the object replicator's pass past
 * its limit, a foreign ring on the account node, a device past the lowered fill limit, the
 * container server stopped while objects are uploaded, an object corrupted on disk and quarantined
 * by the auditor); 3 after every cause is removed; 4 once the quarantine window has passed.
 */
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_AUTH, ADMIN_AUTH_NAME, ADMIN_KEY, startStack, type Stack } from '../support/stack';
import { cairn } from '../support/processes';
import { startSwiftCluster, swiftRingBuilderSteps, type SwiftCluster } from './swift-cluster';

interface Finding {
  code: string;
  severity: string;
  node: string | null;
  device: string | null;
  sentence: string;
  opened_at: string;
  closed_at: string | null;
}

const TMPFS_MIB = 16;
const FILLER_MIB = 10; // 62.5 % of a device: past the 50 % set below, short of 90 %
/**
 * replication_max_age_hours: 28.8 s, short to wait for and still longer than a collect right after a
 * pass takes on a busy machine (with two test files at a time, 14.4 s was not).
 */
const REPLICATION_HOURS = 0.008;
/** quarantine_window_hours: 7.2 s. */
const QUARANTINE_HOURS = 0.002;
const HOUR_MS = 3_600_000;
/** Waits until `ms` past `from`, and a little more: the rules compare to the millisecond. */
const sleepUntil = async (from: Date | string, ms: number) => {
  const left = new Date(from).getTime() + ms + 300 - Date.now();
  if (left > 0) await new Promise((r) => setTimeout(r, left));
};

describe('cluster health findings from a real Swift, through the management API', () => {
  let swift: SwiftCluster;
  let stack: Stack;
  let env: Record<string, string>;
  let node: { account: string; container: string; object: string };
  let auth: { url: string; token: string };
  let work: string;
  /** The devices the fill condition concerns: d6 alone on its own tmpfs, or all on a shared disk. */
  let fullDevices: string[];
  /** fill_warning_pct before and after the fill condition, and while it holds. */
  let fillLimit: { normal: number; lowered: number };
  const thresholds = (fillWarningPct: number, replicationHours = REPLICATION_HOURS) =>
    api('thresholds/', {
      method: 'PUT',
      body: JSON.stringify({
        fill_warning_pct: fillWarningPct,
        fill_critical_pct: 90,
        async_pending_max: 0,
        replication_max_age_hours: replicationHours,
        quarantine_window_hours: QUARANTINE_HOURS,
      }),
    });
  const rounds: Array<{ collectedAt: string; open: Finding[] }> = [];

  const api = async (path: string, init: RequestInit = {}): Promise<unknown> => {
    const res = await fetch(`${stack.apiUrl}/api/v1/clusters/1/health/${path}`, {
      ...init,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json', ...init.headers },
    });
    const body = (await res.json()) as unknown;
    if (!res.ok) throw new Error(`${init.method ?? 'GET'} health/${path}: ${res.status} ${JSON.stringify(body)}`);
    return body;
  };
  const collect = async (): Promise<Finding[]> => {
    const run = await cairn(['health', 'collect', '--cluster', 'default', '--swift-dir', swift.swiftDir], env);
    if (run.code !== 0) swift.dumpLogs(80);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const health = (await api('')) as { collected_at: string; findings: Finding[] };
    rounds.push({ collectedAt: health.collected_at, open: health.findings });
    return health.findings;
  };
  const key = (f: Pick<Finding, 'code' | 'node' | 'device'>) => `${f.code} ${f.node} ${f.device ?? '-'}`;
  const keys = (fs: Finding[]) => fs.map(key).sort();
  const find = (fs: Finding[], code: string, n: string, device: string | null = null): Finding => {
    const f = fs.find((x) => key(x) === key({ code, node: n, device }));
    if (!f) throw new Error(`no ${key({ code, node: n, device })} among ${JSON.stringify(keys(fs))}`);
    return f;
  };
  const swiftRequest = async (method: string, path: string, body?: string): Promise<number> => {
    const res = await fetch(`${auth.url}${path}`, { method, body, headers: { 'X-Auth-Token': auth.token } });
    await res.arrayBuffer();
    return res.status;
  };

  beforeAll(async () => {
    [swift, stack] = await Promise.all([
      startSwiftCluster({
        pipeline: 'tempauth',
        allInOne: { replicatorsRunning: false, nodeSwiftDirs: true, tmpfsMiB: TMPFS_MIB },
      }),
      startStack({ database: 'postgres' }),
    ]);
    work = mkdtempSync(join(tmpdir(), 'cairn-health-findings-'));
    env = { CAIRN_API_URL: stack.apiUrl, CAIRN_API_KEY: `${ADMIN_AUTH_NAME}:${ADMIN_KEY}` };
    const { account, container, object } = swift.nodes;
    node = {
      account: `127.0.0.1:${account.port}`,
      container: `127.0.0.1:${container.port}`,
      object: `127.0.0.1:${object.port}`,
    };
    // Devices on a shared disk all show its fill: the limit then goes below it, for every device.
    fullDevices = swift.tmpfs.mounted ? ['d6'] : swift.devices;
    fillLimit = swift.tmpfs.mounted ? { normal: 50, lowered: 50 } : { normal: 89, lowered: 1 };
    if (!swift.tmpfs.mounted) console.log(`devices are plain directories (${swift.tmpfs.reason}): limit lowered`);
    await thresholds(fillLimit.normal);
    const res = await fetch(swift.authUrl!, { headers: { 'X-Auth-User': 'test:tester', 'X-Auth-Key': 'testing' } });
    await res.arrayBuffer();
    auth = { url: res.headers.get('x-storage-url')!, token: res.headers.get('x-auth-token')! };
    expect(await swiftRequest('PUT', '/health')).toBe(201);
    expect(await swiftRequest('PUT', '/health/victim', 'the object the test corrupts on disk')).toBe(201);
  });
  afterAll(async () => {
    await stack?.close();
    await swift?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  /** The end of the object replicator's pass before round 1. */
  let objectPass: Date;

  it('when only the object replicator has completed a pass, then the others have a stale finding', async () => {
    await swift.runOnce('object-replicator');
    objectPass = (await swift.replicationPass('object'))!.finishedAt;
    const open = await collect();
    expect(keys(open)).toEqual(
      [`account_replication_stale ${node.account} -`, `container_replication_stale ${node.container} -`].sort(),
    );
    const stale = find(open, 'account_replication_stale', node.account);
    expect(stale.severity).toBe('warning');
    expect(stale.sentence).toContain(
      `The account replicator on ${node.account} has never completed a pass (limit ${REPLICATION_HOURS} h).`,
    );
  });

  it('when every cause is present, then each finding opens with its node, device and sentence', async () => {
    // A node on another version of the object ring: the same ring rebalanced after a weight change.
    copyFileSync(join(swift.swiftDir, 'object.builder'), join(work, 'object.builder'));
    const builder = join(work, 'object.builder');
    const steps = await swiftRingBuilderSteps(
      [
        [builder, 'set_weight', '/d6', '50'],
        [builder, 'pretend_min_part_hours_passed'],
        [builder, 'rebalance', '--seed', '2'],
      ],
      { tmpDir: work },
    );
    expect(steps.map((s) => [s.args[1], s.ok])).toEqual([
      ['set_weight', true],
      ['pretend_min_part_hours_passed', true],
      ['rebalance', true],
    ]);
    swift.installRing(join(work, 'object.ring.gz'), 'object', { node: 'account' });

    // A device past the limit.
    if (swift.tmpfs.mounted) writeFileSync(join(swift.devicesDir, 'd6', 'filler'), Buffer.alloc(FILLER_MIB << 20, 1));
    else await thresholds(fillLimit.lowered);

    // Container updates that cannot be made: uploads while the container server is down become
    // async pendings, which swift-recon-cron counts into the recon cache.
    expect(await swiftRequest('HEAD', '/health')).toBe(204); // the proxy caches the container's info
    await swift.stopProcess('container-server');
    for (const name of ['a', 'b']) expect(await swiftRequest('PUT', `/health/${name}`, name)).toBe(201);

    // One replica of the victim corrupted on disk (same length, other bytes); the auditor
    // quarantines it.
    const victim = dataFiles().filter((f) => readFileSync(f, 'utf8') === 'the object the test corrupts on disk');
    expect(victim).toHaveLength(3);
    writeFileSync(victim[0]!, 'THE OBJECT THE TEST CORRUPTS ON DISK');
    await Promise.all([swift.runOnce('recon-cron'), swift.runOnce('object-auditor')]);
    const asyncPending = (
      (await (await fetch(`${swift.nodes.object.reconUrl}/async`)).json()) as { async_pending: number }
    ).async_pending;
    expect(asyncPending).toBeGreaterThan(0);

    // The object replicator stays stopped past its limit (usually passed by now).
    await sleepUntil(objectPass, REPLICATION_HOURS * HOUR_MS);
    const open = await collect();
    // Nothing new is judged of the silent container node, and nothing of it closes: its stale
    // replicator's finding of round 1 stays open as it was (docs/health.md, while a node is silent).
    const answering = [node.account, node.object];
    expect(keys(open)).toEqual(
      [
        `account_replication_stale ${node.account} -`,
        `container_replication_stale ${node.container} -`,
        `object_replication_stale ${node.object} -`,
        `node_silent ${node.container} -`,
        `ring_mismatch ${node.account} -`,
        ...answering.flatMap((n) => [
          `async_pending_high ${n} -`,
          `quarantined_rising ${n} -`,
          ...fullDevices.map((d) => `device_full ${n} ${d}`),
        ]),
      ].sort(),
    );
    // Open since the first round that found them, not again.
    const sinceRound1 = ['account_replication_stale', 'container_replication_stale'];
    for (const f of open)
      expect([key(f), f.opened_at]).toEqual([key(f), rounds[sinceRound1.includes(f.code) ? 0 : 1]!.collectedAt]);
    const held = find(open, 'container_replication_stale', node.container);
    expect(held).toEqual(find(rounds[0]!.open, 'container_replication_stale', node.container));

    const aged = find(open, 'object_replication_stale', node.object);
    expect(aged.severity).toBe('warning');
    expect(aged.sentence).toContain(
      `The object replicator on ${node.object} has not completed a pass since ${objectPass.toISOString()} (limit ${REPLICATION_HOURS} h).`,
    );

    const silent = find(open, 'node_silent', node.container);
    expect(silent.severity).toBe('warning');
    expect(silent.sentence).toContain(
      `${node.container} did not answer recon (none of the 14 recon requests was answered: request failed (ECONNREFUSED)); it last answered `,
    );
    const ring = find(open, 'ring_mismatch', node.account);
    expect(ring.severity).toBe('critical');
    expect(ring.sentence).toContain(
      `${node.account} holds a different object.ring.gz than the cluster's current ring(s)`,
    );
    const full = find(open, 'device_full', node.object, fullDevices[0]!);
    expect(full.severity).toBe('warning');
    expect(full.sentence).toMatch(
      new RegExp(
        `^Device ${fullDevices[0]} on ${node.object} is \\d+(\\.\\d+)? % full \\(warning at ${fillLimit.lowered} %, critical at 90 %\\)`,
      ),
    );
    const pending = find(open, 'async_pending_high', node.object);
    expect(pending.sentence).toContain(`${node.object} has ${asyncPending} async pending(s) (limit 0).`);
    const quarantined = find(open, 'quarantined_rising', node.object);
    expect(quarantined.sentence).toContain(
      `Quarantined items on ${node.object} rose to 1 at ${rounds[1]!.collectedAt}`,
    );
  });

  it('when every cause is removed and the quarantine window passed, then the findings close', async () => {
    swift.installRing(join(swift.swiftDir, 'object.ring.gz'), 'object', { node: 'account' });
    if (swift.tmpfs.mounted) rmSync(join(swift.devicesDir, 'd6', 'filler'));
    else await thresholds(fillLimit.normal);
    await swift.startProcess('container-server');
    await swift.runOnce('object-updater'); // sends the pendings now that the container server answers
    await Promise.all([
      swift.runOnce('recon-cron'),
      swift.runOnce('object-replicator'),
      swift.runOnce('container-replicator'),
      swift.runOnce('account-replicator'),
    ]);

    // No new quarantine since round 2, for longer than the window (usually passed by now).
    await sleepUntil(rounds[1]!.collectedAt, QUARANTINE_HOURS * HOUR_MS);
    const open = await collect();
    // The container node's count rose too while it was silent: it sees the rise now, and its
    // window starts now.
    expect(keys(open)).toEqual([`quarantined_rising ${node.container} -`]);
    expect(find(open, 'quarantined_rising', node.container).sentence).toContain(
      `Quarantined items on ${node.container} rose to 1 at ${rounds[2]!.collectedAt} (watched for ${QUARANTINE_HOURS} h).`,
    );
    const closed = (await api('history/?open=false&limit=100')) as { objects: Finding[] };
    const closedKeys = closed.objects.map(key).sort();
    for (const f of rounds[1]!.open) expect(closedKeys).toContain(key(f));
    for (const f of closed.objects.filter((x) => rounds[1]!.open.some((o) => key(o) === key(x))))
      expect([key(f), f.closed_at]).toEqual([key(f), rounds[2]!.collectedAt]);
  });

  it('when the quarantine window passes with no new quarantine, then the last finding closes', async () => {
    // The replicators stay stopped: their limit goes back to an hour, so that the wait below does not
    // outlast their passes of round 3.
    await thresholds(fillLimit.normal, 1);
    await sleepUntil(rounds[2]!.collectedAt, QUARANTINE_HOURS * HOUR_MS);
    expect(await collect()).toEqual([]);
    const closed = (await api(`history/?code=quarantined_rising&node=${node.container}`)) as { objects: Finding[] };
    expect(closed.objects.map((f) => [f.opened_at, f.closed_at])).toEqual([
      [rounds[2]!.collectedAt, rounds[3]!.collectedAt],
    ]);
  });

  /** Every object replica's .data file on every device. */
  function dataFiles(): string[] {
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(dir, e.name));
        else if (e.name.endsWith('.data')) files.push(join(dir, e.name));
      }
    };
    for (const d of swift.devices) {
      try {
        walk(join(swift.devicesDir, d, 'objects'));
      } catch {
        // no objects on this device
      }
    }
    return files;
  }
});
