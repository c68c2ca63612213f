/**
 * Proves the Swift test harness (./swift-cluster.ts) with Swift's own tempauth and the real `swift`
 * CLI (gateway.test.ts drives the keystonemiddleware pipeline). Run with test-e2e/jest.interop.config.js
 * after ./install-swift.sh (`pnpm test:interop`); the ordinary e2e config ignores this folder.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSwiftCluster, swiftCli, type SwiftCluster } from './swift-cluster';

/** Runs a test body; on failure prints the cluster's logs before rethrowing. */
async function withLogs(cluster: () => SwiftCluster | undefined, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (e) {
    cluster()?.dumpLogs(300);
    throw e;
  }
}

/** Every `.data` file under <devicesDir>/<device>/<dataDir> (objects = policy 0, objects-N = policy N). */
function dataFiles(devicesDir: string, device: string, dataDir: string): string[] {
  const root = join(devicesDir, device, dataDir);
  if (!existsSync(root)) return [];
  return (readdirSync(root, { recursive: true }) as string[]).filter((p) => p.endsWith('.data'));
}

async function eventually(check: () => void, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      check();
      return;
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('Swift test cluster with tempauth, driven by the real swift CLI', () => {
  let cluster: SwiftCluster | undefined;
  let work: string;
  let creds: string[];

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'cairn-swift-cli-'));
    cluster = await startSwiftCluster({
      pipeline: 'tempauth',
      tempauthUsers: [{ account: 'test', user: 'tester', key: 'testing', groups: ['.admin'] }],
    });
    creds = ['-A', cluster.authUrl!, '-U', 'test:tester', '-K', 'testing'];
    if (process.env.CAIRN_INTEROP_VERBOSE) console.log(`tempauth cluster started in ${cluster.startedInMs} ms`);
  });

  afterAll(async () => {
    await cluster?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('when the swift CLI authenticates with tempauth V1, then it prints the storage URL of AUTH_test and a token', () =>
    withLogs(
      () => cluster,
      async () => {
        const res = await swiftCli([...creds, 'auth']);
        expect(res.stderr).toBe('');
        expect(res.code).toBe(0);
        expect(res.stdout).toContain(`export OS_STORAGE_URL=${cluster!.proxyUrl}/v1/AUTH_test\n`);
        expect(res.stdout).toMatch(/^export OS_AUTH_TOKEN=AUTH_tk[0-9a-f]+$/m);
        expect(cluster!.storageUrl('test')).toBe(`${cluster!.proxyUrl}/v1/AUTH_test`);
      },
    ));

  it('when a wrong key is given, then the swift CLI reports the 401', () =>
    withLogs(
      () => cluster,
      async () => {
        const res = await swiftCli(['-A', cluster!.authUrl!, '-U', 'test:tester', '-K', 'wrong', 'auth']);
        expect(res.code).toBe(1);
        expect(res.stderr).toContain('401 Unauthorized');
      },
    ));

  it('when files are uploaded to a gold and a silver container, then they list, download identical, and sit on their policy devices', () =>
    withLogs(
      () => cluster,
      async () => {
        const c = cluster!;
        const gold = randomBytes(64 * 1024);
        const silver = randomBytes(10 * 1024);
        writeFileSync(join(work, 'gold.bin'), gold);
        writeFileSync(join(work, 'silver.bin'), silver);

        // Each `swift` run is mostly Python starting: the runs that do not depend on each other go
        // at once. gold is the default policy: a plain upload creates the container with it.
        const [up1, [post, up2]] = await Promise.all([
          swiftCli([...creds, 'upload', 'box-gold', 'gold.bin'], {}, { cwd: work }),
          swiftCli([...creds, 'post', '-H', 'X-Storage-Policy: silver', 'box-silver']).then(
            async (posted) =>
              [posted, await swiftCli([...creds, 'upload', 'box-silver', 'silver.bin'], {}, { cwd: work })] as const,
          ),
        ]);
        expect(up1).toMatchObject({ code: 0, stdout: 'gold.bin\n' });
        expect(post).toMatchObject({ code: 0, stderr: '' });
        expect(up2).toMatchObject({ code: 0, stdout: 'silver.bin\n' });

        // Three at a time: more Python processes at once on a busy machine can each outlast
        // swiftCli's 60 s limit.
        const [statGold, statSilver, containers] = await Promise.all([
          swiftCli([...creds, 'stat', 'box-gold']),
          swiftCli([...creds, 'stat', 'box-silver']),
          swiftCli([...creds, 'list']),
        ]);
        const [listGold, listSilver] = await Promise.all([
          swiftCli([...creds, 'list', 'box-gold']),
          swiftCli([...creds, 'list', 'box-silver']),
        ]);
        const [d1, d2] = await Promise.all([
          swiftCli([...creds, 'download', 'box-gold', 'gold.bin', '-o', join(work, 'gold.out')]),
          swiftCli([...creds, 'download', 'box-silver', 'silver.bin', '-o', join(work, 'silver.out')]),
        ]);
        expect(statGold.code).toBe(0);
        expect(statGold.stdout).toMatch(/X-Storage-Policy: gold$/m);
        expect(statSilver.stdout).toMatch(/X-Storage-Policy: silver$/m);
        expect(containers.stdout).toBe('box-gold\nbox-silver\n');
        expect(listGold.stdout).toBe('gold.bin\n');
        expect(listSilver.stdout).toBe('silver.bin\n');
        expect(d1.code).toBe(0);
        expect(readFileSync(join(work, 'gold.out')).equals(gold)).toBe(true);
        expect(d2.code).toBe(0);
        expect(readFileSync(join(work, 'silver.out')).equals(silver)).toBe(true);

        // 3 replicas over 3 devices: one copy on each device of the policy, none elsewhere.
        await eventually(() => {
          const placement = Object.fromEntries(
            c.devices.map((d) => [
              d,
              {
                gold: dataFiles(c.devicesDir, d, 'objects').length,
                silver: dataFiles(c.devicesDir, d, 'objects-1').length,
              },
            ]),
          );
          expect(placement).toEqual({
            d1: { gold: 1, silver: 0 },
            d2: { gold: 1, silver: 1 },
            d3: { gold: 1, silver: 1 },
            d4: { gold: 0, silver: 1 },
          });
        });
      },
    ));

  it('when recon diskusage is read from the object node, then every device is mounted with sizes', () =>
    withLogs(
      () => cluster,
      async () => {
        const c = cluster!;
        const res = await fetch(`http://127.0.0.1:${c.nodes.object.port}/recon/diskusage`);
        expect(res.status).toBe(200);
        const body = (await res.json()) as Array<{
          device: string;
          mounted: unknown;
          size: unknown;
          used: unknown;
          avail: unknown;
        }>;
        expect(body.map((d) => d.device).sort()).toEqual(['d1', 'd2', 'd3', 'd4']);
        for (const d of body) {
          expect(d.mounted).toBe(true);
          expect(typeof d.size).toBe('number');
          expect(d.size as number).toBeGreaterThan(0);
          expect((d.used as number) + (d.avail as number)).toBe(d.size);
        }
        // The account and container nodes serve recon too.
        for (const node of [c.nodes.account, c.nodes.container]) {
          expect((await fetch(`${node.reconUrl}/diskusage`)).status).toBe(200);
        }
      },
    ));
});
