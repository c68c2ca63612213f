import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HEALTH_ENDPOINTS } from '@cairn/swift-cluster';
import { readCliSettings } from '../src/config';
import { collectHealthOnce } from '../src/health/collect';
import type { HealthRoundBody } from '../src/health/round';
import { startRoundReceiver, type RoundReceiver } from './helpers/round-receiver';
import { writeRing } from './helpers/ring-file';

/**
 * The health collector's round, in process, against a stub of 1,000 storage nodes (helpers/recon-stub.js:
 * one HTTP server in its own process that each node reaches by its own loopback address 127.1.x.y,
 * answering like Swift 2.30's recon with the samples of
 * packages/swift-cluster/test/fixtures/recon-health.json), and a stand-in for the API's round ingest.
 * The settings are the defaults a collector runs with.
 */

const SAMPLE_FILE = join(__dirname, '..', '..', 'swift-cluster', 'test', 'fixtures', 'recon-health.json');
const SAMPLE = JSON.parse(readFileSync(SAMPLE_FILE, 'utf8')) as Record<string, unknown>;

const NODES = 1000;
/** How long each answer takes: one node at a time would need 14,000 of them, over two minutes. */
const ANSWER_MS = 10;
/** Nodes whose connections the stub drops at once: silent, without waiting out a timeout. */
const SILENT = new Set(['127.1.0.5', '127.1.2.100', '127.1.3.250']);
const ipOf = (i: number) => `127.1.${Math.floor(i / 250)}.${(i % 250) + 1}`;

interface Stub {
  port: number;
  /** Requests per node address so far. */
  asked(): Promise<Record<string, number>>;
  close(): void;
}

async function startReconStub(): Promise<Stub> {
  const child = spawn(
    process.execPath,
    [join(__dirname, 'helpers', 'recon-stub.js'), SAMPLE_FILE, [...SILENT].join(','), String(ANSWER_MS)],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = createInterface({ input: child.stdout! });
  const next = () => new Promise<string>((resolve) => lines.once('line', resolve));
  const { port } = JSON.parse(await next()) as { port: number };
  return {
    port,
    asked: async () => {
      const answer = next();
      child.stdin!.write('counts\n');
      return JSON.parse(await answer) as Record<string, number>;
    },
    close: () => child.stdin!.end(),
  };
}

describe('cairn health collect, one round', () => {
  let stub: Stub;
  let receiver: RoundReceiver;
  let swiftDir: string;

  beforeAll(async () => {
    stub = await startReconStub();
    receiver = await startRoundReceiver();
    swiftDir = mkdtempSync(join(tmpdir(), 'cairn-health-'));
    const devices = [...Array(NODES).keys()].flatMap((i) =>
      ['sdb1', 'sdb2'].map((device) => ({ ip: ipOf(i), port: stub.port, device })),
    );
    writeRing(join(swiftDir, 'object.ring.gz'), devices, 10);
    // The account and container servers of the first 10 nodes share their ip:port with the object server.
    writeRing(join(swiftDir, 'account.ring.gz'), devices.slice(0, 20));
    writeRing(join(swiftDir, 'container.ring.gz'), devices.slice(0, 10));
  });
  afterAll(async () => {
    stub.close();
    await receiver.close();
    rmSync(swiftDir, { recursive: true, force: true });
  });

  it('when 1,000 storage nodes are read with the default settings, then one round posts them all in well under a minute', async () => {
    const config = readCliSettings({ CAIRN_API_URL: receiver.apiUrl, CAIRN_API_KEY: 'collector:k3y' });
    expect(config.healthConcurrency).toBe(32);
    const warnings: string[] = [];
    const started = Date.now();
    const cpuBefore = process.cpuUsage();
    const result = await collectHealthOnce({
      cluster: 'east',
      swiftDir,
      config: { ...config, apiUrl: receiver.apiUrl },
      warn: (l) => warnings.push(l),
    });
    const seconds = (Date.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    // What the round cost this process, for whoever reads the test's output on a loaded machine.
    process.stderr.write(
      `1,000 nodes: ${seconds.toFixed(1)} s, ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s of CPU\n`,
    );
    // The target is 30 s (docs/health.md measures it on a quiet machine); here jest runs another
    // test file on the other core, so the bound leaves room. Each answer takes ANSWER_MS, so the
    // bound holds only with the nodes read in parallel (32 at once: 4.4 s of waiting in all). The
    // CPU is printed, not bounded: a loopback write carries the receiver's kernel work too, so it
    // measures the machine's load (6.5 s quiet, 16 s seen in a full CI run) more than the code.
    expect(seconds).toBeLessThan(45);
    expect(result).toEqual({
      clusterId: 7,
      nodes: NODES,
      answered: NODES - SILENT.size,
      endpointErrors: 0,
      roundId: 1,
      openFindings: 0,
    });
    expect(warnings).toEqual([]);
    expect(receiver.authorizations.filter((a) => a !== 'ApiKey collector:k3y')).toEqual([]);

    // Every node was asked every endpoint once (the silent ones too: each request was dropped).
    const asked = await stub.asked();
    expect(Object.keys(asked)).toHaveLength(NODES);
    expect(Object.entries(asked).filter(([, n]) => n !== HEALTH_ENDPOINTS.length)).toEqual([]);

    expect(receiver.rounds).toHaveLength(1);
    const round = receiver.rounds[0] as HealthRoundBody;
    expect(Date.parse(round.collected_at)).toBeGreaterThanOrEqual(started - 1000);
    const md5 = (f: string) =>
      createHash('md5')
        .update(readFileSync(join(swiftDir, f)))
        .digest('hex');
    expect(round.ring_md5).toEqual({
      'account.ring.gz': md5('account.ring.gz'),
      'container.ring.gz': md5('container.ring.gz'),
      'object.ring.gz': md5('object.ring.gz'),
    });
    expect(round.nodes.map((n) => n.node)).toEqual([...Array(NODES).keys()].map((i) => `${ipOf(i)}:${stub.port}`));
    expect(round.nodes[0]!.server_types).toEqual(['account', 'container', 'object']);
    expect(round.nodes[7]!.server_types).toEqual(['account', 'object']);
    expect(round.nodes[999]!.server_types).toEqual(['object']);

    const silent = round.nodes.filter((n) => !n.answered);
    expect(silent.map((n) => n.node.split(':')[0])).toEqual([...SILENT]);
    for (const n of silent) expect(n.error).toMatch(/^none of the 14 recon requests was answered: request failed \(/);
    const node = round.nodes[0]!;
    expect(node.error).toBeNull();
    const { time, ...rest } = node.recon;
    expect(rest).toEqual(Object.fromEntries(Object.entries(SAMPLE).filter(([k]) => k !== 'time')));
    expect(Math.abs((time as number) - started / 1000)).toBeLessThan(60);
  }, 60_000);

  it('when the round is stopped part way (SIGTERM with --interval), then nothing is sent', async () => {
    const config = readCliSettings({ CAIRN_API_URL: receiver.apiUrl, CAIRN_API_KEY: 'collector:k3y' });
    const sent = receiver.rounds.length;
    const controller = new AbortController();
    const result = await collectHealthOnce({
      cluster: '7',
      swiftDir,
      config: { ...config, apiUrl: receiver.apiUrl },
      warn: () => undefined,
      signal: controller.signal,
      progress: (_step, done) => {
        if (done === 100) controller.abort();
      },
    });
    expect(result.stopped).toBe(true);
    expect(result.answered).toBeGreaterThanOrEqual(90);
    expect(result.answered).toBeLessThan(NODES - SILENT.size);
    expect(receiver.rounds).toHaveLength(sent);
  });
});
