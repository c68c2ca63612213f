import * as api from '@cairn/management-api';
import { hashPassword } from '@cairn/domain';
import { listen, LogCapture } from '@cairn/runtime';
import type { Server } from 'node:http';
import { ADMIN_AUTH, ADMIN_KEY, startStack, type Stack } from '../support/stack';
import { TcpRelay } from './support';

type Line = { msg?: string; level?: number; req?: { id?: string; url?: string } };
const linesOf = (capture: LogCapture): Line[] => capture.lines.map((l) => JSON.parse(l) as Line);
const PASSWORD = 'request-id-password-0123456789';

describe('gateway request ids', () => {
  let relay: TcpRelay;
  let stack: Stack;
  beforeAll(async () => {
    relay = await TcpRelay.to(6379);
    await relay.start();
    stack = await startStack({
      database: 'postgres',
      gateway: { redisUrl: `redis://127.0.0.1:${relay.port}` },
    });
    await stack.createUser('rid-alice', PASSWORD);
  });
  afterAll(async () => {
    await stack.close();
    await relay.stop();
  });

  it('when a caller sends X-Request-Id, then it comes back in X-Request-Id and X-Openstack-Request-Id and is on the log line', async () => {
    const res = await fetch(`${stack.gatewayUrl}/auth/v3`, { headers: { 'X-Request-Id': 'lb-7f3a.42' } });
    expect(res.headers.get('x-request-id')).toBe('lb-7f3a.42');
    expect(res.headers.get('x-openstack-request-id')).toBe('lb-7f3a.42');
    expect(
      linesOf(stack.gatewayLogs)
        .filter((l) => l.req?.id === 'lb-7f3a.42')
        .map((l) => l.req?.url),
    ).toEqual(['/auth/v3']);
  });

  it('when a Swift client sends X-Trans-Id to V1, then its V1 answer carries it in X-Trans-Id as well', async () => {
    const res = await fetch(`${stack.gatewayUrl}/auth/v1.0`, {
      headers: { 'X-Auth-User': 'rid-alice', 'X-Auth-Key': PASSWORD, 'X-Trans-Id': 'tx-from-proxy-1' },
    });
    expect(res.status).toBe(200);
    for (const h of ['x-trans-id', 'x-request-id', 'x-openstack-request-id'])
      expect(res.headers.get(h)).toBe('tx-from-proxy-1');
  });

  it('when no id is sent, then V1 answers get one new Swift-shaped id and Keystone answers a req-<uuid>, the same in every header and the log', async () => {
    const v1 = await fetch(`${stack.gatewayUrl}/auth/v1.0`, {
      headers: { 'X-Auth-User': 'rid-alice', 'X-Auth-Key': PASSWORD },
    });
    const id = v1.headers.get('x-trans-id')!;
    expect(id).toMatch(/^tx[0-9a-f]{21}-[0-9a-f]{10}$/);
    expect(v1.headers.get('x-request-id')).toBe(id);
    expect(v1.headers.get('x-openstack-request-id')).toBe(id);
    expect(linesOf(stack.gatewayLogs).some((l) => l.req?.id === id)).toBe(true);
    const v3 = await fetch(`${stack.gatewayUrl}/auth/v3`);
    expect(v3.headers.get('x-request-id')).toMatch(/^req-[0-9a-f-]{36}$/);
    expect(v3.headers.get('x-trans-id')).toBeNull();
  });

  it('when a request fails because Redis is down, then the error line and the request line both carry its id, and no secret is logged', async () => {
    await relay.stop();
    try {
      const res = await fetch(`${stack.gatewayUrl}/auth/v1.0`, {
        headers: { 'X-Auth-User': 'rid-alice', 'X-Auth-Key': PASSWORD, 'X-Request-Id': 'outage-req-1' },
        signal: AbortSignal.timeout(15_000),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('x-request-id')).toBe('outage-req-1');
      const mine = linesOf(stack.gatewayLogs).filter((l) => l.req?.id === 'outage-req-1');
      expect(mine.map((l) => l.msg)).toEqual(expect.arrayContaining(['dependency unavailable']));
      expect(mine.length).toBeGreaterThanOrEqual(2);
      expect(stack.gatewayLogs.text).not.toContain(PASSWORD);
    } finally {
      await relay.start();
    }
  });
});

describe('management-api request ids and redaction', () => {
  let stack: Stack;
  let server: Server;
  let url: string;
  const logs = new LogCapture();
  beforeAll(async () => {
    // The stack's database with an API of our own that logs at info into `logs`.
    stack = await startStack({ database: 'postgres' });
    const app = api.createApp({
      db: stack.db,
      log: api.createLogger('info', logs),
      hashPassword: (p) => hashPassword(p),
      apiKeyCacheMs: 0,
    });
    const listening = await listen(app, 0, '127.0.0.1');
    server = listening.server;
    url = `http://127.0.0.1:${listening.port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await stack.close();
  });

  it('when a caller sends X-Request-Id, then it is echoed and on the log line of the request', async () => {
    const res = await fetch(`${url}/api/v1/clusters/`, {
      headers: { Authorization: ADMIN_AUTH, 'X-Request-Id': 'ops-abc-1' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('ops-abc-1');
    expect(
      linesOf(logs)
        .filter((l) => l.req?.id === 'ops-abc-1')
        .map((l) => l.req?.url),
    ).toEqual(['/api/v1/clusters/']);
  });

  it('when a caller sends only X-Trans-Id, then that id is used; when it sends none or a malformed one, then a new UUID is', async () => {
    expect((await fetch(`${url}/healthz`, { headers: { 'X-Trans-Id': 'tx-abc' } })).headers.get('x-request-id')).toBe(
      'tx-abc',
    );
    expect((await fetch(`${url}/healthz`)).headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(
      (await fetch(`${url}/healthz`, { headers: { 'X-Request-Id': 'bad id with spaces' } })).headers.get(
        'x-request-id',
      ),
    ).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('when requests carry API keys, passwords and tokens, then no log line contains them', async () => {
    await fetch(`${url}/api/v1/users/?password=secret-in-query`, {
      method: 'POST',
      headers: {
        Authorization: ADMIN_AUTH,
        'Content-Type': 'application/json',
        'X-Auth-Token': 'secret-token',
        'X-Storage-Pass': 'secret-pass',
      },
      body: JSON.stringify({ cluster: '/api/v1/clusters/1/', user: 'rid-bob', password: 'secret-password-0123456789' }),
    });
    await fetch(`${url}/api/v1/users/`, {
      headers: { Authorization: 'ApiKey root:secret-wrong-key-0123456789abcdefghij' },
    });
    expect(logs.text).toContain('"url":"/api/v1/users/"');
    expect(logs.text).not.toMatch(/secret|authorization|root:/i);
    expect(logs.text).not.toContain(ADMIN_KEY);
  });
});
