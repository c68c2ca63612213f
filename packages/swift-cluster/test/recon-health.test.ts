import { getEventListeners, getMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { createServer } from 'node:net';
import { HEALTH_ENDPOINTS, HEALTH_READERS, pollNodesHealth, readNodeHealth, type HealthEndpoint } from '../src';
import { fixturePath } from './helpers/ring-bytes';
import { newTraffic, sendJson, startServer, type Handler, type TestServer } from './helpers/recon-server';

/** Against real local HTTP servers answering like Swift 2.30's recon middleware. */

const SAMPLE = JSON.parse(readFileSync(fixturePath('recon-health.json'), 'utf8')) as Record<HealthEndpoint, unknown>;

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const endpointOf = (req: IncomingMessage): string => (req.url ?? '').replace(/^\/recon\//, '');

/** Answers every endpoint with the sample, except those `override` answers itself. */
const recon =
  (override: Partial<Record<string, (res: Parameters<Handler>[1]) => void>> = {}): Handler =>
  (req, res) => {
    const endpoint = endpointOf(req);
    const own = override[endpoint];
    if (own) return own(res);
    if (endpoint in SAMPLE) return sendJson(res, 200, JSON.stringify(SAMPLE[endpoint as HealthEndpoint]));
    sendJson(res, 404, '"Invalid path"');
  };

async function serve(handler: Handler, traffic = newTraffic()): Promise<TestServer> {
  const server = await startServer(handler, traffic);
  servers.push(server);
  return server;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

const node = (server: { port: number }) => ({ ip: '127.0.0.1', port: server.port });

describe('readNodeHealth', () => {
  it('when a node answers every endpoint, then each key holds its answer unchanged and the node answered', async () => {
    const server = await serve(recon());
    const health = await readNodeHealth(node(server), { nodeTimeoutMs: 2000 });
    expect(health.answered).toBe(true);
    expect(health.error).toBeNull();
    expect(Object.keys(health.recon)).toEqual([...HEALTH_ENDPOINTS]);
    expect(health.recon).toEqual(SAMPLE);
    expect(server.requests).toBe(HEALTH_ENDPOINTS.length);
  });

  it('when one endpoint fails or has the wrong shape, then only that key is an error', async () => {
    const server = await serve(
      recon({
        async: (res) => sendJson(res, 500, 'Internal server error.'),
        load: (res) => sendJson(res, 200, JSON.stringify({ ...(SAMPLE.load as object), '1m': 'high' })),
      }),
    );
    const { answered, recon: got } = await readNodeHealth(node(server), { nodeTimeoutMs: 2000 });
    expect(answered).toBe(true);
    expect(got.async).toEqual({ error: 'HTTP 500 from GET /recon/async' });
    expect(got.load).toEqual({ error: `/recon/load: '1m' should be a number, not "high"` });
    expect(got.time).toBe(SAMPLE.time);
    expect(got.diskusage).toEqual(SAMPLE.diskusage);
  });

  it('when nothing listens on the node, then it did not answer and the sentence says why', async () => {
    const health = await readNodeHealth({ ip: '127.0.0.1', port: await closedPort() }, { nodeTimeoutMs: 2000 });
    expect(health.answered).toBe(false);
    expect(health.error).toBe('none of the 14 recon requests was answered: request failed (ECONNREFUSED)');
    expect(Object.values(health.recon).every((v) => 'error' in (v as object))).toBe(true);
  });

  it('when a node hangs, then its time budget ends the node, not the round', async () => {
    const server = await serve(() => undefined);
    const started = Date.now();
    const health = await readNodeHealth(node(server), { nodeTimeoutMs: 300 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(health.answered).toBe(false);
    expect(health.error).toBe(
      "none of the 14 recon requests was answered: no complete answer within the node's 300 ms",
    );
    // The endpoints are read one after the other: a hung node is asked once, not 14 times.
    expect(server.requests).toBe(1);
  });

  it('when a node answers slowly, then what it answered within its budget is kept and the rest are errors', async () => {
    const server = await serve((req, res) => setTimeout(() => recon()(req, res), 100));
    const health = await readNodeHealth(node(server), { nodeTimeoutMs: 550 });
    expect(health.answered).toBe(true);
    expect(health.recon.diskusage).toEqual(SAMPLE.diskusage);
    expect(health.recon.load).toEqual({ error: "no complete answer within the node's 550 ms" });
    expect(health.elapsedMs).toBeLessThan(1500);
  });

  it('when the server has no recon middleware (404 everywhere), then the sentence says so', async () => {
    const server = await serve((_req, res) => sendJson(res, 404, 'Not Found'));
    const health = await readNodeHealth(node(server), { nodeTimeoutMs: 2000 });
    expect(health.answered).toBe(false);
    expect(health.error).toMatch(/answered 404: is the recon middleware in this server's pipeline\?/);
  });

  it('when an answer is larger than the API keeps, then that key is an error saying its size', async () => {
    const huge = Object.fromEntries([...Array(2000).keys()].map((i) => [`/etc/swift/object-${i}.ring.gz`, null]));
    const server = await serve(recon({ ringmd5: (res) => sendJson(res, 200, JSON.stringify(huge)) }));
    const { recon: got } = await readNodeHealth(node(server), { nodeTimeoutMs: 2000 });
    expect((got.ringmd5 as { error: string }).error).toMatch(
      /^the answer of \/recon\/ringmd5 is \d+ bytes, more than the 65536 kept$/,
    );
  });

  it('when the round is stopped before a node, then the node is not asked', async () => {
    const server = await serve(recon());
    const controller = new AbortController();
    controller.abort();
    const health = await readNodeHealth(node(server), { nodeTimeoutMs: 2000, signal: controller.signal });
    expect(server.requests).toBe(0);
    expect(health.error).toBe('none of the 14 recon requests was answered: stopped');
  });
});

describe('HEALTH_READERS', () => {
  it.each<[HealthEndpoint, unknown, RegExp]>([
    ['diskusage', { device: 'sdb1' }, /should be a JSON list/],
    ['diskusage', [{ device: 'sdb1', mounted: true, size: '', used: 1, avail: 1 }], /'size' should be a byte count/],
    ['unmounted', [{ mounted: false }], /entry 0 has no device name/],
    ['driveaudit', { drive_audit_errors: -1 }, /'drive_audit_errors' should be a count/],
    ['async', { async_pending: '3' }, /'async_pending' should be a count/],
    ['quarantined', { objects: 1, containers: 0, accounts: 0 }, /quarantined policies should be a JSON object/],
    ['replication/object', { object_replication_last: 'yesterday' }, /'object_replication_last' should be a number/],
    ['replication/account', { replication_stats: [] }, /'replication_stats' should be an object/],
    ['ringmd5', { '/etc/swift/object.ring.gz': 'nope' }, /should have an md5 or null/],
    ['time', '1795900230', /should be epoch seconds/],
    ['load', { '1m': 1, '5m': 1, '15m': 1, tasks: 3, processes: 1 }, /'tasks' should be a text/],
  ])('when /recon/%s answers %j, then the reader refuses it', (endpoint, body, message) => {
    expect(() => HEALTH_READERS[endpoint](body)).toThrow(message);
  });

  it('when cache keys are null (the daemon has not run yet), then the answers are accepted', () => {
    expect(HEALTH_READERS['replication/object']({ replication_time: null, replication_stats: null })).toEqual({
      replication_time: null,
      replication_stats: null,
    });
    expect(HEALTH_READERS.async({ async_pending: null, async_pending_last: null })).toEqual({
      async_pending: null,
      async_pending_last: null,
    });
  });
});

describe('pollNodesHealth', () => {
  it('when 12 nodes are read with concurrency 3, then 3 requests are in flight at most (one per node) and order is kept', async () => {
    const traffic = newTraffic();
    const slow: Handler = (req, res) => setTimeout(() => recon()(req, res), 20);
    const nodes = await Promise.all([...Array(12).keys()].map(() => serve(slow, traffic)));
    let polled = 0;
    const results = await pollNodesHealth(nodes.map(node), { concurrency: 3, nodeTimeoutMs: 2000 }, () => polled++);
    expect(results.map((r) => r.node.port)).toEqual(nodes.map((n) => n.port));
    expect(results.every((r) => r.answered)).toBe(true);
    expect(traffic.maxInFlight).toBe(3);
    expect(traffic.requests).toBe(12 * HEALTH_ENDPOINTS.length);
    expect(polled).toBe(12);
  });

  it('when more nodes than the 10 listeners an event target allows by default are read at once under one stop signal, then Node has no leak to warn of', async () => {
    // Node warns (MaxListenersExceededWarning) when a target's listeners pass its maximum; jest's
    // sandboxed process does not hear the warning, so the condition itself is read at each request.
    const { signal } = new AbortController();
    const seen: Array<{ listeners: number; max: number }> = [];
    const traffic = newTraffic();
    const slow: Handler = (req, res) => {
      seen.push({ listeners: getEventListeners(signal, 'abort').length, max: getMaxListeners(signal) });
      setTimeout(() => recon()(req, res), 20);
    };
    const nodes = await Promise.all([...Array(16).keys()].map(() => serve(slow, traffic)));
    const results = await pollNodesHealth(nodes.map(node), { concurrency: 16, nodeTimeoutMs: 2000, signal });
    expect(results.every((r) => r.answered)).toBe(true);
    expect(Math.max(...seen.map((s) => s.listeners))).toBe(16);
    expect(seen.filter((s) => s.listeners > s.max)).toEqual([]);
  });
});
