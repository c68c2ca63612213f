import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { gzipBomb, rssBytes, sendFlood, watchRss, type FloodAnswer, type FloodRequest } from '../support/body-flood';
import { launch, type Launched } from '../support/processes';
import { migratedDataDir } from '../support/data-dir';

const MB = 1024 * 1024;
const ADMIN_KEY = 'body-flood-admin-key-0123456789abcdefghij';
const ADMIN = `ApiKey admin:${ADMIN_KEY}`;

/** Every route that takes a body, with a cluster that exists (1) and one that does not. */
const API_BODY_ROUTES: Array<[string, string]> = [
  ['PUT', '/api/v1/clusters/1/devices/'],
  ['PUT', '/api/v1/clusters/999/devices/'],
  ['POST', '/api/v1/clusters/1/utilization/storage/'],
  ['POST', '/api/v1/clusters/1/utilization/transfer/'],
  ['POST', '/api/v1/users/'],
];

const statuses = (answers: FloodAnswer[]) => answers.map((a) => a.status ?? a.error);
const slowest = (answers: FloodAnswer[]) => Math.max(...answers.map((a) => a.ms));

/**
 * Bodies that cost memory before anything is checked: the embedded start (`cairn start` on
 * PGlite, both services in one process) is sent large and compressed bodies without a key. A
 * refused request must be answered before its body is read, so neither the answer's time nor the
 * process's memory depends on the body.
 */
describe('a flood of large bodies against the embedded process', () => {
  let dataDir: string;
  let running: Launched;
  let bomb: Buffer;
  let reader: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'cairn-body-flood-'));
    running = await launch({
      CAIRN_DATA_DIR: await migratedDataDir(join(dataDir, 'pglite')),
      CAIRN_ADMIN_USER: 'admin',
      CAIRN_ADMIN_KEY: ADMIN_KEY,
    });
    // A flood as once measured: 184 KB of gzip, 190 MB once inflated.
    bomb = await gzipBomb(190 * MB);
    const made = await fetch(`${running.apiUrl}/api/v1/operators/`, {
      method: 'POST',
      headers: { Authorization: ADMIN, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'watcher', role: 'reader' }),
    });
    expect(made.status).toBe(201);
    reader = `ApiKey watcher:${((await made.json()) as { api_key: string }).api_key}`;
  }, 120_000);
  afterAll(async () => {
    if (running?.child.exitCode === null) await running.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const pid = () => running.child.pid!;

  it('when 20 unauthenticated 150 MB bodies and 20 gzip bombs arrive at once, then each is answered 401 within 100 ms of as many 1 KB requests and the process grows by less than 64 MB', async () => {
    const requests: FloodRequest[] = [];
    for (let i = 0; i < 20; i++) {
      const [method, path] = API_BODY_ROUTES[i % API_BODY_ROUTES.length]!;
      requests.push({ base: running.apiUrl, method, path, body: 150 * MB });
      requests.push({ base: running.apiUrl, method, path, body: bomb, headers: { 'Content-Encoding': 'gzip' } });
    }
    // The same 40 requests with 1 KB bodies, at once: what 40 answers take on this machine now
    // (on a busy one, more than the body's share). It also warms the paths.
    const tiny = async () =>
      slowest(await Promise.all(requests.map((r) => sendFlood({ ...r, body: 1024, headers: {} }))));
    const baseline = Math.max(await tiny(), await tiny());
    const before = rssBytes(pid());
    const rss = watchRss(pid());
    const answers = await Promise.all(requests.map(sendFlood));
    // The answers are in; give the process a moment in which a late read would still show.
    await new Promise((r) => setTimeout(r, 300));
    const grown = rss.stop() - before;
    console.log(
      `40 answers with 1 KB bodies: slowest ${baseline.toFixed(0)} ms; with the flood: slowest ${slowest(answers).toFixed(0)} ms, RSS +${(grown / MB).toFixed(1)} MB`,
    );

    expect(statuses(answers)).toEqual(requests.map(() => 401));
    expect(slowest(answers)).toBeLessThan(100 + baseline);
    expect(grown).toBeLessThan(64 * MB);
    // Refused long before the bodies were sent.
    expect(Math.max(...answers.map((a) => a.sentBytes))).toBeLessThan(150 * MB);
    expect((await fetch(`${running.apiUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${running.gatewayUrl}/healthz`)).status).toBe(200);
  });

  it('when a reader sends a body over the write limit, then it gets 403 (not 413) at once', async () => {
    const reads = await Promise.all(
      API_BODY_ROUTES.filter(([, path]) => !path.includes('999')).map(([method, path]) =>
        sendFlood({ base: running.apiUrl, method, path, body: 220 * MB, headers: { Authorization: reader } }),
      ),
    );
    expect(statuses(reads)).toEqual([403, 403, 403, 403]);
    expect(slowest(reads)).toBeLessThan(1000);
  });

  it('when an admin sends a gzip body that inflates past the limit, then 413 with a sentence, as soon as the limit is passed', async () => {
    // 16 MB for utilization writes: the 190 MB bomb is stopped after 16 MB of it is inflated.
    const before = rssBytes(pid());
    const rss = watchRss(pid());
    const res = await fetch(`${running.apiUrl}/api/v1/clusters/1/utilization/storage/`, {
      method: 'POST',
      headers: { Authorization: ADMIN, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: bomb,
    });
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({
      error: 'The request body is too large: this endpoint accepts at most 16 MB (counted after decompression).',
    });
    expect(rss.stop() - before).toBeLessThan(64 * MB);
  });

  it('when an admin sends a device report gzip-compressed, then it is read and stored', async () => {
    const report = {
      policies: [{ index: 0, name: 'gold', default: true }],
      devices: [
        {
          node: '10.0.0.1:6200',
          device: 'sdb1',
          policies: ['gold'],
          size_bytes: 100,
          used_bytes: 40,
          avail_bytes: 60,
          mounted: true,
        },
      ],
    };
    const put = await fetch(`${running.apiUrl}/api/v1/clusters/1/devices/`, {
      method: 'PUT',
      headers: { Authorization: ADMIN, 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' },
      body: gzipSync(JSON.stringify(report)),
    });
    expect(put.status).toBe(204);
    const list = await fetch(`${running.apiUrl}/api/v1/clusters/1/devices/`, { headers: { Authorization: ADMIN } });
    expect(((await list.json()) as { objects: Array<{ device: string }> }).objects.map((d) => d.device)).toEqual([
      'sdb1',
    ]);
  });

  it('when the gateway is sent large chunked bodies without a token, then s3tokens and OS-EC2 answer 401 and the logins 413 at once', async () => {
    const gateway = (path: string): FloodRequest => ({
      base: running.gatewayUrl,
      method: 'POST',
      path,
      body: 50 * MB,
      chunked: true,
    });
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => sendFlood(gateway('/auth/v3/s3tokens'))),
      ...Array.from({ length: 5 }, () => sendFlood(gateway('/auth/v3/users/alice/credentials/OS-EC2'))),
      sendFlood(gateway('/auth/v3/auth/tokens')),
      sendFlood(gateway('/auth/v2.0/tokens')),
    ]);
    expect(statuses(answers)).toEqual([...Array(10).fill(401), 413, 413]);
    expect(slowest(answers)).toBeLessThan(1000);
  });
});
