import express, { type Express } from 'express';
import { CounterFamily, createRegistry, HttpMetrics, metricsEndpoint, UNMATCHED_ROUTE } from '../src';
import { sample, serve } from './serve';

/** A small app shaped like the services: a mounted API router, a route that fails, a 404 fallback. */
function buildApp(): { app: Express; metrics: HttpMetrics; registry: ReturnType<typeof createRegistry> } {
  const registry = createRegistry('test-service');
  const metrics = new HttpMetrics(registry);
  const app = express();
  app.use(metrics.middleware);
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/metrics', metricsEndpoint(registry));
  const api = express.Router();
  api.get('/users/:id/', (req, res) => void res.json({ id: req.params.id }));
  api.get('/slow/', (_req, res) => void setTimeout(() => res.json({}), 30));
  api.get('/fails/:name/', () => {
    throw Object.assign(new Error('no such thing'), { status: 404 });
  });
  app.use('/api/v1', metrics.mount, api);
  app.use((_req, res) => void res.status(404).json({ error: 'not found' }));
  app.use((err: { status?: number }, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    res.status(err.status ?? 500).json({ error: 'failed' });
  });
  return { app, metrics, registry };
}

describe('HttpMetrics', () => {
  let server: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    server = await serve(buildApp().app);
  });
  afterAll(() => server.close());
  const page = async () => (await fetch(`${server.url}/metrics`)).text();

  it('when requests hit a route with ids in its path, then they are counted under the route template and status, never the raw path', async () => {
    for (const id of ['1', '22', 'alice']) expect((await fetch(`${server.url}/api/v1/users/${id}/`)).status).toBe(200);
    const text = await page();
    expect(
      sample(text, 'http_requests_total', {
        method: 'GET',
        route: '/api/v1/users/:id/',
        status: '200',
        service: 'test-service',
      }),
    ).toBe(3);
    expect(text).not.toMatch(/route="\/api\/v1\/users\/(1|22|alice)\/"/);
  });

  it('when a route fails and the app-level error handler answers, then the route label keeps its mount path', async () => {
    expect((await fetch(`${server.url}/api/v1/fails/secret-name/`)).status).toBe(404);
    const text = await page();
    expect(sample(text, 'http_requests_total', { route: '/api/v1/fails/:name/', status: '404' })).toBe(1);
    expect(text).not.toContain('secret-name');
  });

  it('when no route matches, then the request is counted under one fixed label', async () => {
    for (const path of ['/nope', '/api/v1/zzz/123', '/wp-admin.php']) await fetch(`${server.url}${path}`);
    const text = await page();
    expect(sample(text, 'http_requests_total', { route: UNMATCHED_ROUTE, status: '404' })).toBe(3);
    expect(text).not.toMatch(/wp-admin|zzz/);
  });

  it('when rare methods are used, then they share the OTHER label instead of adding series each', async () => {
    for (const method of ['PROPFIND', 'MKCOL', 'PURGE', 'LOCK']) await fetch(`${server.url}/nope`, { method });
    const text = await page();
    expect(sample(text, 'http_requests_total', { method: 'OTHER', route: UNMATCHED_ROUTE, status: '404' })).toBe(4);
    expect(text).not.toMatch(/method="(PROPFIND|MKCOL|PURGE|LOCK)"/);
  });

  it('when a request takes 30 ms, then the latency histogram counts it above the 25 ms bucket, with matching count and sum', async () => {
    await fetch(`${server.url}/api/v1/slow/`);
    const text = await page();
    const labels = { route: '/api/v1/slow/', status: '200' };
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...labels, le: '0.025' })).toBe(0);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...labels, le: '10' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_count', labels)).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_sum', labels)).toBeGreaterThanOrEqual(0.025);
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE http_requests_total counter');
  });

  it('when the page is scraped, then it carries the default process metrics', async () => {
    const text = await page();
    expect(text).toMatch(/^process_cpu_user_seconds_total\{service="test-service"\} \d/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds/m);
  });
});

describe('registries', () => {
  it('when two apps are built in one process, then each has its own registry and counts only its own requests', async () => {
    const a = buildApp();
    const b = buildApp();
    const sa = await serve(a.app);
    const sb = await serve(b.app);
    try {
      await fetch(`${sa.url}/healthz`);
      await fetch(`${sa.url}/healthz`);
      await fetch(`${sb.url}/healthz`);
      expect(sample(await a.registry.metrics(), 'http_requests_total', { route: '/healthz' })).toBe(2);
      expect(sample(await b.registry.metrics(), 'http_requests_total', { route: '/healthz' })).toBe(1);
    } finally {
      await sa.close();
      await sb.close();
    }
  });

  it('when a CounterFamily child is incremented, then its labelled sample shows the count and other children stay at 0', async () => {
    const registry = createRegistry('x');
    const family = new CounterFamily<'version'>('things_total', 'Things.', registry);
    const v1 = family.labels({ version: 'v1' });
    family.labels({ version: 'v2' });
    v1.inc();
    v1.inc(2);
    expect(family.labels({ version: 'v1' })).toBe(v1);
    const text = await registry.metrics();
    expect(sample(text, 'things_total', { version: 'v1' })).toBe(3);
    expect(sample(text, 'things_total', { version: 'v2' })).toBe(0);
  });
});
