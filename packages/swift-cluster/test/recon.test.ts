import { getEventListeners, getMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { fetchDiskUsage, pollNodes, ReconError } from '../src';
import { fixturePath } from './helpers/ring-bytes';
import { newTraffic, sendJson, startServer, type Handler, type TestServer } from './helpers/recon-server';

/** Against real local HTTP servers answering like Swift's recon middleware (sample captured from Swift 2.30.1). */

const SAMPLE = readFileSync(fixturePath('recon-diskusage.json'), 'utf8');
const UNMOUNTED = readFileSync(fixturePath('recon-diskusage-unmounted.json'), 'utf8');

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function serve(handler: Handler, traffic = newTraffic()): Promise<TestServer> {
  const server = await startServer(handler, traffic);
  servers.push(server);
  return server;
}

const onPath =
  (body: string, status = 200): Handler =>
  (req, res) => {
    if (req.url?.endsWith('/recon/diskusage')) sendJson(res, status, body);
    else sendJson(res, 404, '"not found"');
  };
const hang: Handler = () => undefined;
const after =
  (ms: number, handler: Handler): Handler =>
  (req, res) => {
    setTimeout(() => handler(req, res), ms);
  };

async function reconFailure(baseUrl: string, timeoutMs = 2000): Promise<ReconError> {
  const error = await fetchDiskUsage(baseUrl, { timeoutMs }).then(
    () => new Error('fetchDiskUsage succeeded'),
    (e: unknown) => e,
  );
  if (!(error instanceof ReconError)) throw error;
  return error;
}

describe('fetchDiskUsage', () => {
  it('when recon answers with the captured sample, then every device is mounted with its byte counts', async () => {
    const server = await serve(onPath(SAMPLE));
    const devices = await fetchDiskUsage(server.baseUrl, { timeoutMs: 2000 });
    expect(devices).toEqual(
      ['sdb4', 'sdb2', 'sdb1', 'sdb3'].map((device) => ({
        device,
        mounted: true,
        size: 270553174016,
        used: 187830935552,
        avail: 82722238464,
      })),
    );
  });

  it('when a device is not mounted (size/used/avail are ""), then it is unmounted with nulls', async () => {
    const server = await serve(onPath(UNMOUNTED));
    const devices = await fetchDiskUsage(`${server.baseUrl}/`, { timeoutMs: 2000 });
    expect(devices[0]).toEqual({ device: 'sdb4', mounted: false, size: null, used: null, avail: null });
    expect(devices.slice(1).every((d) => d.mounted && d.size === 270553174016)).toBe(true);
  });

  it('when mounted is anything but true, then the device is unmounted; any string is kept as the error text', async () => {
    const body = JSON.stringify([
      { device: 'sdb1', mounted: '[Errno 5] Input/output error', size: '', used: '', avail: '' },
      { device: 'sdb2', mounted: 'true', size: 1, used: 1, avail: 0 },
      { device: 'sdb3', mounted: 1, size: 1, used: 1, avail: 0 },
      { device: 'sdb4' },
    ]);
    const server = await serve(onPath(body));
    expect(await fetchDiskUsage(server.baseUrl, { timeoutMs: 2000 })).toEqual([
      {
        device: 'sdb1',
        mounted: false,
        size: null,
        used: null,
        avail: null,
        mountError: '[Errno 5] Input/output error',
      },
      { device: 'sdb2', mounted: false, size: null, used: null, avail: null, mountError: 'true' },
      { device: 'sdb3', mounted: false, size: null, used: null, avail: null },
      { device: 'sdb4', mounted: false, size: null, used: null, avail: null },
    ]);
  });

  it('when recon answers 500 (a broken disk), then the node is named with the status', async () => {
    const server = await serve(onPath('{"error": "boom"}', 500));
    const error = await reconFailure(server.baseUrl);
    expect(error.node).toBe(`127.0.0.1:${server.port}`);
    expect(error.message).toBe(`recon 127.0.0.1:${server.port}: HTTP 500 from GET /recon/diskusage`);
  });

  it('when the node does not answer in time, then it times out after timeoutMs', async () => {
    const server = await serve(hang);
    const started = Date.now();
    const error = await reconFailure(server.baseUrl, 200);
    expect(error.reason).toBe('no complete answer within 200 ms');
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it('when the headers arrive but the body stalls, then the timeout still applies', async () => {
    const server = await serve((_req, res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[{"device": "sdb1", ');
    });
    expect((await reconFailure(server.baseUrl, 200)).reason).toBe('no complete answer within 200 ms');
  });

  it('when nothing listens on the port, then the connection error is named', async () => {
    const server = await serve(hang);
    const baseUrl = server.baseUrl;
    await servers.splice(0)[0]?.close();
    const error = await reconFailure(baseUrl);
    expect(error.reason).toBe('request failed (ECONNREFUSED)');
  });

  it.each([
    ['invalid JSON', '[{"device": "sdb1",', 'response is not valid JSON'],
    ['an object instead of a list', '{"sdb1": {}}', 'expected a JSON list from /recon/diskusage, got object'],
    ['null', 'null', 'expected a JSON list from /recon/diskusage, got null'],
    ['an entry that is not an object', '["sdb1"]', 'entry 0 is not an object'],
    ['an entry without a device', '[{"mounted": false}]', 'entry 0 has no device name'],
    [
      'a mounted device without sizes',
      '[{"device": "sdb1", "mounted": true, "size": "", "used": "", "avail": ""}]',
      `device sdb1: 'size' must be a byte count (got "")`,
    ],
    [
      'a negative size',
      '[{"device": "sdb1", "mounted": true, "size": 10, "used": 20, "avail": -10}]',
      "device sdb1: 'avail' must be a byte count (got -10)",
    ],
    [
      'a device listed twice',
      '[{"device": "sdb1", "mounted": false}, {"device": "sdb1", "mounted": false}]',
      'device sdb1 is listed twice',
    ],
  ])('when recon answers %s, then the node is reported with the reason', async (_what, body, reason) => {
    const server = await serve(onPath(body));
    const error = await reconFailure(server.baseUrl);
    expect(error.reason).toBe(reason);
    expect(error.node).toBe(`127.0.0.1:${server.port}`);
  });

  it('when the base URL is not a URL, then that is the reason', async () => {
    expect((await reconFailure('10.0.0.1:6200')).reason).toBe('not a valid URL');
  });

  it('when a fetch function is injected, then it is used for GET <base>/recon/diskusage', async () => {
    const urls: string[] = [];
    const fakeFetch = async (input: string | URL | Request): Promise<Response> => {
      urls.push(String(input));
      return new Response(SAMPLE, { status: 200 });
    };
    const devices = await fetchDiskUsage('http://10.0.0.1:6200', { timeoutMs: 1000, fetch: fakeFetch as typeof fetch });
    expect(urls).toEqual(['http://10.0.0.1:6200/recon/diskusage']);
    expect(devices).toHaveLength(4);
  });
});

describe('pollNodes', () => {
  it('when 5 nodes are polled with concurrency 2 and 2 of them fail, then 3 succeed, 2 report errors and at most 2 requests overlap', async () => {
    const traffic = newTraffic();
    const slowOk = after(80, onPath(SAMPLE));
    const nodes = await Promise.all(
      [slowOk, after(80, onPath('{}', 500)), slowOk, hang, slowOk].map((handler) => serve(handler, traffic)),
    );
    const results = await pollNodes(
      nodes.map((s) => ({ ip: '127.0.0.1', port: s.port })),
      { concurrency: 2, timeoutMs: 300 },
    );
    expect(results.map((r) => r.ok)).toEqual([true, false, true, false, true]);
    expect(results.map((r) => r.node.port)).toEqual(nodes.map((s) => s.port));
    const failures = results.flatMap((r) => (r.ok ? [] : [r.error]));
    expect(failures.map((e) => e.reason)).toEqual([
      'HTTP 500 from GET /recon/diskusage',
      'no complete answer within 300 ms',
    ]);
    expect(failures.every((e) => e instanceof ReconError)).toBe(true);
    for (const r of results) if (r.ok) expect(r.devices).toHaveLength(4);
    expect(traffic.requests).toBe(5);
    expect(traffic.maxInFlight).toBeLessThanOrEqual(2);
    expect(traffic.maxInFlight).toBe(2);
  });

  it('when the signal aborts mid-poll, then the requests in flight are abandoned at once and the nodes not yet polled fail as stopped', async () => {
    const traffic = newTraffic();
    const nodes = await Promise.all([0, 1, 2, 3, 4].map(() => serve(hang, traffic)));
    const controller = new AbortController();
    // Aborted once the first two requests hang at their nodes (mid-poll), however long that takes.
    void (async () => {
      while (traffic.requests < 2) await new Promise((r) => setTimeout(r, 5));
      controller.abort();
    })();
    const started = Date.now();
    const results = await pollNodes(
      nodes.map((s) => ({ ip: '127.0.0.1', port: s.port })),
      { concurrency: 2, timeoutMs: 10_000, signal: controller.signal },
    );
    // Well before the 10 s timeout of the two hanging requests.
    expect(Date.now() - started).toBeLessThan(1000);
    expect(results.map((r) => (r.ok ? 'ok' : r.error.reason))).toEqual(Array(5).fill('stopped'));
    // The three nodes behind the first two were never asked.
    expect(traffic.requests).toBe(2);
  });

  it('when a node is unreachable, then pollNodes still resolves with that node as failed', async () => {
    const server = await serve(onPath(SAMPLE));
    const results = await pollNodes(
      [
        { ip: '127.0.0.1', port: server.port },
        { ip: '127.0.0.1', port: 1 },
      ],
      { concurrency: 4, timeoutMs: 1000 },
    );
    expect(results[0]?.ok).toBe(true);
    expect(results[1]).toMatchObject({ ok: false, node: { ip: '127.0.0.1', port: 1 } });
  });

  it('when more nodes than the 10 listeners an event target allows by default are polled at once under one stop signal, then Node has no leak to warn of', async () => {
    // The condition of Node's MaxListenersExceededWarning, read at each request (jest's process does not hear it).
    const { signal } = new AbortController();
    const seen: Array<{ listeners: number; max: number }> = [];
    const note: Handler = (req, res) => {
      seen.push({ listeners: getEventListeners(signal, 'abort').length, max: getMaxListeners(signal) });
      after(20, onPath(SAMPLE))(req, res);
    };
    const nodes = await Promise.all([...Array(16).keys()].map(() => serve(note)));
    const results = await pollNodes(
      nodes.map((n) => ({ ip: '127.0.0.1', port: n.port })),
      { concurrency: 16, timeoutMs: 2000, signal },
    );
    expect(results.every((r) => r.ok)).toBe(true);
    expect(Math.max(...seen.map((s) => s.listeners))).toBe(16);
    expect(seen.filter((s) => s.listeners > s.max)).toEqual([]);
  });

  it('when there are no nodes, then the result is empty', async () => {
    expect(await pollNodes([], { concurrency: 2, timeoutMs: 100 })).toEqual([]);
  });

  it('when concurrency is not a positive integer, then that is a programming error', async () => {
    await expect(pollNodes([{ ip: '127.0.0.1', port: 1 }], { concurrency: 0, timeoutMs: 100 })).rejects.toThrow(
      RangeError,
    );
  });

  it('when a node has an IPv6 address, then the URL brackets it', async () => {
    const urls: string[] = [];
    const fakeFetch = async (input: string | URL | Request): Promise<Response> => {
      urls.push(String(input));
      return new Response('[]');
    };
    await pollNodes([{ ip: 'fd00::1', port: 6200 }], {
      concurrency: 1,
      timeoutMs: 100,
      fetch: fakeFetch as typeof fetch,
    });
    expect(urls).toEqual(['http://[fd00::1]:6200/recon/diskusage']);
  });
});
