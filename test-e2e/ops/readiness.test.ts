import * as api from '@cairn/management-api';
import { hashPassword } from '@cairn/domain';
import { listen } from '@cairn/runtime';
import type { Server } from 'node:http';
import { startStack, type Stack } from '../support/stack';
import { sample, TcpRelay } from './support';

/** /readyz, timed: every answer must come within 3 s whatever the dependencies do. */
async function readyz(url: string): Promise<{ status: number; body: unknown; ms: number }> {
  const started = Date.now();
  const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.json(), ms: Date.now() - started };
}

async function eventually(check: () => Promise<boolean>, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('gateway /readyz with Redis behind a relay the test controls', () => {
  let relay: TcpRelay;
  let stack: Stack;
  beforeAll(async () => {
    relay = await TcpRelay.to(6379);
    await relay.start();
    stack = await startStack({ database: 'postgres', gateway: { redisUrl: `redis://127.0.0.1:${relay.port}` } });
  });
  afterAll(async () => {
    await stack.close();
    await relay.stop();
  });

  it('when Postgres and Redis answer, then it is 200 and names both ok', async () => {
    const r = await readyz(stack.gatewayUrl);
    expect(r).toMatchObject({ status: 200, body: { status: 'ok', postgres: 'ok', redis: 'ok' } });
    const page = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    expect(sample(page, 'cairn_redis_connected')).toBe(1);
    expect(sample(page, 'cairn_dependency_up', { dependency: 'redis' })).toBe(1);
    expect(sample(page, 'cairn_dependency_up', { dependency: 'postgres' })).toBe(1);
  });

  it('when Redis goes away (its port closed), then it is 503 naming redis, answered in under 3 s, and ready again once Redis is back', async () => {
    await relay.stop();
    const down = await readyz(stack.gatewayUrl);
    expect(down).toMatchObject({ status: 503, body: { status: 'unavailable', postgres: 'ok', redis: 'unreachable' } });
    expect(down.ms).toBeLessThan(3000);
    const page = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
    expect(sample(page, 'cairn_redis_connected')).toBe(0);
    expect(page).toMatch(/^cairn_dependency_up\{dependency="redis",service="auth-gateway"\} 0$/m);
    expect(sample(page, 'cairn_dependency_up', { dependency: 'postgres' })).toBe(1);
    await relay.start();
    await eventually(async () => (await readyz(stack.gatewayUrl)).status === 200, 15_000);
  });

  it('when Redis hangs (connection open, no answers), then it is 503 naming redis within 3 s, not a hung probe', async () => {
    await eventually(async () => (await readyz(stack.gatewayUrl)).status === 200, 15_000);
    relay.blackHole();
    const hung = await readyz(stack.gatewayUrl);
    expect(hung).toMatchObject({ status: 503, body: { status: 'unavailable', postgres: 'ok', redis: 'unreachable' } });
    expect(hung.ms).toBeGreaterThanOrEqual(1500);
    expect(hung.ms).toBeLessThan(3000);
    await relay.stop();
    await relay.start();
    await eventually(async () => (await readyz(stack.gatewayUrl)).status === 200, 20_000);
  });
});

describe('gateway /readyz without REDIS_URL', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
  });
  afterAll(() => stack.close());

  it('when tokens live in process, then it is ready and says Redis is not configured', async () => {
    expect(await readyz(stack.gatewayUrl)).toMatchObject({
      status: 200,
      body: { status: 'ok', postgres: 'ok', redis: 'not configured (in-process store)' },
    });
    expect(await (await fetch(`${stack.gatewayUrl}/metrics`)).text()).not.toMatch(
      /cairn_dependency_up\{dependency="redis"/,
    );
  });
});

describe('management-api /readyz with Postgres behind a relay the test controls', () => {
  let relay: TcpRelay;
  let server: Server;
  let url: string;
  let db: ReturnType<typeof api.createDatabase>;
  beforeAll(async () => {
    relay = await TcpRelay.to(5432);
    await relay.start();
    db = api.createDatabase({ url: `postgres://postgres@127.0.0.1:${relay.port}/postgres`, poolMax: 2 });
    const app = api.createApp({
      db,
      log: api.createLogger('silent'),
      hashPassword: (p) => hashPassword(p),
      apiKeyCacheMs: 0,
    });
    const listening = await listen(app, 0, '127.0.0.1');
    server = listening.server;
    url = `http://127.0.0.1:${listening.port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await relay.stop();
    await db.destroy();
  });

  it('when Postgres answers, then it is 200 and reports only Postgres (the API has no Redis)', async () => {
    expect(await readyz(url)).toMatchObject({ status: 200, body: { status: 'ok', postgres: 'ok' } });
    expect(((await readyz(url)).body as Record<string, string>).redis).toBeUndefined();
  });

  it('when Postgres goes away, then it is 503 naming postgres in under 3 s, and 200 again once it is back', async () => {
    await relay.stop();
    const down = await readyz(url);
    expect(down).toMatchObject({ status: 503, body: { status: 'unavailable', postgres: 'unreachable' } });
    expect(down.ms).toBeLessThan(3000);
    // /metrics still answers while Postgres is down, and says so.
    const metrics = await fetch(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^cairn_dependency_up\{dependency="postgres",service="management-api"\} 0$/m);
    await relay.start();
    await eventually(async () => (await readyz(url)).status === 200, 10_000);
    expect(
      sample(await (await fetch(`${url}/metrics`)).text(), 'cairn_dependency_up', { dependency: 'postgres' }),
    ).toBe(1);
  });

  it('when Postgres hangs (accepts connections, never answers), then it is 503 within 3 s', async () => {
    await eventually(async () => (await readyz(url)).status === 200, 10_000);
    relay.blackHole(); // the pooled connection now stalls, as would a new one
    const hung = await readyz(url);
    expect(hung).toMatchObject({ status: 503, body: { status: 'unavailable', postgres: 'unreachable' } });
    expect(hung.ms).toBeGreaterThanOrEqual(1500);
    expect(hung.ms).toBeLessThan(3000);
    await relay.stop();
    await relay.start();
    await eventually(async () => (await readyz(url)).status === 200, 15_000);
  });
});
