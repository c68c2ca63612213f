import { ADMIN_AUTH, DB_KINDS, createCluster, startTestApp, type TestApp } from '../support/harness';
import { createApiMetrics } from '../../src/http/metrics';

const TB = 1e12;
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** The value of one series of a Prometheus text page, or undefined when it is absent. */
function series(page: string, name: string, labels: Record<string, string>): number | undefined {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of page.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const have = line.slice(name.length + 1, line.lastIndexOf('}')).split(/,(?=[a-zA-Z_]+=")/);
    if (want.every((w) => have.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe.each(DB_KINDS)('collector and capacity metrics on %s', (kind) => {
  let app: TestApp;
  let cluster: Record<string, unknown>;
  const path = (rest: string) => `/api/v1/clusters/${cluster.id}/${rest}`;
  const put = (p: string, body: object) => app.http().put(p).set('Authorization', ADMIN_AUTH).send(body);
  const post = (p: string, body: object) => app.http().post(p).set('Authorization', ADMIN_AUTH).send(body);
  /** What a replica that never saw the posts reads from Postgres now (no cache). */
  const fresh = (now?: Date) =>
    createApiMetrics(app.db, { cacheMs: 0, ...(now ? { now: () => now } : {}) }).registry.metrics();
  const storage = (sampledAt: number) =>
    post(path('utilization/storage/'), {
      interval: 1800,
      sampled_at: iso(sampledAt),
      samples: [{ account: 'AUTH_a', bytes_used: 1, object_count: 1, container_count: 1, policies: [] }],
    });

  beforeAll(async () => {
    app = await startTestApp(kind);
    cluster = await createCluster(app, 'metrics-east');
  });
  afterAll(() => app.close());

  it('when no collector has posted, then /metrics answers without collector, capacity or incomplete-hour series for the cluster', async () => {
    const res = await fetch(`${app.baseUrl}/metrics`);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('# TYPE cairn_collector_last_success_timestamp_seconds gauge');
    expect(page).not.toContain('cluster="metrics-east"');
  });

  it("when a device report is accepted, then the capacity collector's last success is its time and each ring set's used ratio is exported, on any replica", async () => {
    const before = Date.now() / 1000;
    const report = {
      policies: [
        { index: 0, name: 'gold', default: true },
        { index: 1, name: 'silver' },
      ],
      devices: [
        { node: '10.0.0.1:6200', device: 'sdb1', policies: ['gold'], used_bytes: 3.4 * TB, avail_bytes: 0.6 * TB },
        { node: '10.0.0.2:6200', device: 'sdb2', policies: ['silver'], used_bytes: 1 * TB, avail_bytes: 3 * TB },
      ],
    };
    expect((await put(path('devices/'), report)).status).toBe(204);
    const after = Date.now() / 1000;
    const page = await fresh();
    const last = series(page, 'cairn_collector_last_success_timestamp_seconds', {
      cluster: 'metrics-east',
      collector: 'capacity',
    })!;
    expect(last).toBeGreaterThanOrEqual(Math.floor(before) - 1);
    expect(last).toBeLessThanOrEqual(after + 1);
    expect(series(page, 'cairn_capacity_used_ratio', { cluster: 'metrics-east', ring_set: 'gold' })).toBeCloseTo(
      0.85,
      6,
    );
    expect(series(page, 'cairn_capacity_used_ratio', { cluster: 'metrics-east', ring_set: 'silver' })).toBeCloseTo(
      0.25,
      6,
    );
    expect(
      series(page, 'cairn_collector_last_success_timestamp_seconds', { cluster: 'metrics-east', collector: 'storage' }),
    ).toBeUndefined();
  });

  it('when the storage collector has posted for some hours, then the hours of the last day it missed a round of count as incomplete, from its first post on', async () => {
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    // Three hours ago: both half-hourly rounds; two hours ago: one of two; the last hour: none.
    for (const at of [hour - 3 * HOUR + 60_000, hour - 3 * HOUR + 31 * 60_000, hour - 2 * HOUR + 60_000])
      expect((await storage(at)).status).toBe(200);
    // Only hours from the collector's first post count: it started three hours ago.
    expect(
      series(await fresh(), 'cairn_utilization_incomplete_hours', { cluster: 'metrics-east', kind: 'storage' }),
    ).toBe(0);
    await app.db.raw("UPDATE collector_runs SET first_success_at = ? WHERE collector = 'storage'", [
      iso(hour - 3 * HOUR),
    ]);
    const page = await fresh(new Date(hour + 60_000));
    expect(series(page, 'cairn_utilization_incomplete_hours', { cluster: 'metrics-east', kind: 'storage' })).toBe(2);
    expect(
      series(page, 'cairn_collector_last_success_timestamp_seconds', { cluster: 'metrics-east', collector: 'storage' }),
    ).toBeGreaterThan(Date.now() / 1000 - 60);
    // The missing round of two hours ago arrives late: one incomplete hour left (the last one).
    expect((await storage(hour - 2 * HOUR + 31 * 60_000)).status).toBe(200);
    expect(
      series(await fresh(new Date(hour + 60_000)), 'cairn_utilization_incomplete_hours', {
        cluster: 'metrics-east',
        kind: 'storage',
      }),
    ).toBe(1);
  });

  it("when access logs were ingested, then transfer hours of the day before yesterday's last 24 not fully covered count as incomplete, and a re-sent batch still counts as a success", async () => {
    const hour = Math.floor(Date.now() / HOUR) * HOUR;
    const batch = (id: string, start: number, end: number) =>
      post(path('utilization/transfer/'), { batch_id: id, covered: { start: iso(start), end: iso(end) }, records: [] });
    // Logs cover 26 h ago in full and the first half of 25 h ago.
    expect((await batch('metrics-batch-1', hour - 26 * HOUR, hour - 24.5 * HOUR)).status).toBe(200);
    await app.db.raw("UPDATE collector_runs SET first_success_at = ? WHERE collector = 'transfer'", [
      iso(hour - 26 * HOUR),
    ]);
    const page = await fresh(new Date(hour + 60_000));
    expect(series(page, 'cairn_utilization_incomplete_hours', { cluster: 'metrics-east', kind: 'transfer' })).toBe(1);
    const first = series(page, 'cairn_collector_last_success_timestamp_seconds', {
      cluster: 'metrics-east',
      collector: 'transfer',
    })!;
    await new Promise((r) => setTimeout(r, 1100));
    const again = await batch('metrics-batch-1', hour - 26 * HOUR, hour - 24.5 * HOUR);
    expect(again.status).toBe(200);
    expect(
      series(await fresh(), 'cairn_collector_last_success_timestamp_seconds', {
        cluster: 'metrics-east',
        collector: 'transfer',
      }),
    ).toBeGreaterThan(first);
  });

  it('when scrapes come within the cache period, then they are served from one read of Postgres', async () => {
    const metrics = createApiMetrics(app.db, { cacheMs: 60_000 });
    const before = await metrics.registry.metrics();
    await app.db.raw("UPDATE collector_runs SET last_success_at = last_success_at - interval '1 day'");
    const cached = series(await metrics.registry.metrics(), 'cairn_collector_last_success_timestamp_seconds', {
      cluster: 'metrics-east',
      collector: 'capacity',
    })!;
    expect(cached).toBe(
      series(before, 'cairn_collector_last_success_timestamp_seconds', {
        cluster: 'metrics-east',
        collector: 'capacity',
      }),
    );
    expect(
      series(await fresh(), 'cairn_collector_last_success_timestamp_seconds', {
        cluster: 'metrics-east',
        collector: 'capacity',
      }),
    ).toBeCloseTo(cached - 86_400, 0);
  });
});
