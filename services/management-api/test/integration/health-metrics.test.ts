import { createApiMetrics } from '../../src/http/metrics';
import { HEALTH_SERIES_PER_CLUSTER } from '../../src/services/health-figures';
import { ADMIN_AUTH, createCluster, startTestApp, type TestApp } from '../support/harness';
import { healthyNode, RING, TB } from '../support/health-rounds';

const HOUR_MS = 3_600_000;

/**
 * The health series on /metrics: computed at scrape from each cluster's latest stored round, and
 * bounded per cluster (services/health-figures.ts). One database kind: the SQL is the health
 * repository's, which health.test.ts runs on both.
 */
describe('health metrics', () => {
  let app: TestApp;
  const collectedAt = new Date(Date.now() - HOUR_MS);
  const scrapeAt = new Date(collectedAt.getTime() + 2 * HOUR_MS);
  const post = (clusterId: unknown, nodes: unknown[], at = collectedAt) =>
    app
      .http()
      .post(`/api/v1/clusters/${clusterId}/health/rounds/`)
      .set('Authorization', ADMIN_AUTH)
      .send({ collected_at: at.toISOString(), ring_md5: RING, nodes });
  const scrape = () => createApiMetrics(app.db, { cacheMs: 0, now: () => scrapeAt }).registry.metrics();
  /** The value of the one sample of `metric` whose labels include all of `labels`. */
  const sample = (text: string, metric: string, labels: Record<string, string>): string | undefined => {
    const lines = text
      .split('\n')
      .filter((l) => l.startsWith(`${metric}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
    if (lines.length > 1) throw new Error(`${lines.length} samples of ${metric} match ${JSON.stringify(labels)}`);
    return lines[0]?.split(' ').pop();
  };
  const count = (text: string, metric: string, cluster: string) =>
    text.split('\n').filter((l) => l.startsWith(`${metric}{`) && l.includes(`cluster="${cluster}"`)).length;

  beforeAll(async () => {
    app = await startTestApp('postgres');
  });
  afterAll(() => app.close());

  it('when a round is stored, then each node, device and server type shows its figure from it', async () => {
    const cluster = await createCluster(app, 'figures-east');
    const at = collectedAt.getTime() / 1000;
    expect(
      (
        await app
          .http()
          .put(`/api/v1/clusters/${cluster.id}/health/thresholds/`)
          .set('Authorization', ADMIN_AUTH)
          .send({ fill_warning_pct: 80 })
      ).status,
    ).toBe(200);
    const res = await post(cluster.id, [
      healthyNode('10.0.5.1:6200', collectedAt, {
        diskusage: [
          { device: 'sdb1', mounted: true, size: 4 * TB, used: 3.88 * TB, avail: 0.12 * TB },
          { device: 'sdc1', mounted: false, size: '', used: '', avail: '' },
        ],
        async: { async_pending: 500, async_pending_last: at },
        quarantined: { objects: 7, containers: 1, accounts: 1, policies: {} },
        'replication/object': { object_replication_last: at - 30 * 3600, replication_last: at - 30 * 3600 },
        time: at - 30,
      }),
      healthyNode('10.0.5.2:6200', collectedAt, {
        'replication/container': { replication_time: null, replication_stats: null, replication_last: null },
      }),
      healthyNode('10.0.5.3:6200', collectedAt, {}, { answered: false, error: 'connection refused', recon: {} }),
    ]);
    expect(res.status).toBe(201);

    const text = await scrape();
    const c = { cluster: 'figures-east' };
    expect(sample(text, 'cairn_health_nodes', { ...c, state: 'answered' })).toBe('2');
    expect(sample(text, 'cairn_health_nodes', { ...c, state: 'silent' })).toBe('1');
    expect(sample(text, 'cairn_health_node_answered', { ...c, node: '10.0.5.3:6200' })).toBe('0');
    expect(sample(text, 'cairn_health_node_answered', { ...c, node: '10.0.5.1:6200' })).toBe('1');
    expect(sample(text, 'cairn_health_device_fill_ratio', { ...c, node: '10.0.5.1:6200', device: 'sdb1' })).toBe(
      '0.97',
    );
    // Unmounted devices have no size to fill: no series rather than a made-up 0.
    expect(sample(text, 'cairn_health_device_fill_ratio', { ...c, device: 'sdc1' })).toBeUndefined();
    expect(sample(text, 'cairn_health_device_fill_ratio', { ...c, node: '10.0.5.2:6200', device: 'sdb1' })).toBe(
      '0.25',
    );
    expect(sample(text, 'cairn_health_node_async_pending', { ...c, node: '10.0.5.1:6200' })).toBe('500');
    expect(sample(text, 'cairn_health_node_quarantined', { ...c, node: '10.0.5.1:6200' })).toBe('9');
    expect(sample(text, 'cairn_health_node_clock_skew_seconds', { ...c, node: '10.0.5.1:6200' })).toBe('-30');
    expect(sample(text, 'cairn_health_node_clock_skew_seconds', { ...c, node: '10.0.5.2:6200' })).toBe('0');
    // A silent node has no recon figures, only its answered 0.
    expect(sample(text, 'cairn_health_node_async_pending', { ...c, node: '10.0.5.3:6200' })).toBeUndefined();
    // The oldest pass per type, at the scrape (two hours after the round): 30 h + 2 h for objects;
    // a node whose container replicator never completed a pass makes its type +Inf.
    expect(sample(text, 'cairn_health_replication_age_seconds', { ...c, server_type: 'object' })).toBe(
      String(32 * 3600),
    );
    expect(sample(text, 'cairn_health_replication_age_seconds', { ...c, server_type: 'container' })).toBe('+Inf');
    expect(sample(text, 'cairn_health_replication_age_seconds', { ...c, server_type: 'account' })).toBe(
      String(2 * 3600 + 600),
    );
    expect(sample(text, 'cairn_health_threshold', { ...c, name: 'fill_warning_pct' })).toBe('80');
    expect(sample(text, 'cairn_health_threshold', { ...c, name: 'replication_max_age_hours' })).toBe('24');
  });

  it('when a cluster has more nodes and devices than the bound, then only the worst of them have series', async () => {
    const cluster = await createCluster(app, 'figures-big');
    const nodes = Array.from({ length: 2 * HEALTH_SERIES_PER_CLUSTER }, (_, i) => {
      const node = `10.1.${Math.floor(i / 250)}.${i % 250}:6200`;
      // Node i's devices fill i/200 and i/200 + 0.001; every tenth node is silent.
      if (i % 10 === 9) return healthyNode(node, collectedAt, {}, { answered: false, error: 'timeout', recon: {} });
      return healthyNode(node, collectedAt, {
        diskusage: ['sdb1', 'sdc1'].map((device, d) => ({
          device,
          mounted: true,
          size: 1000,
          used: 5 * i + d,
          avail: 1000 - 5 * i - d,
        })),
        async: { async_pending: i, async_pending_last: collectedAt.getTime() / 1000 },
      });
    });
    expect((await post(cluster.id, nodes)).status).toBe(201);

    const text = await scrape();
    const c = 'figures-big';
    for (const metric of [
      'cairn_health_node_answered',
      'cairn_health_node_async_pending',
      'cairn_health_node_quarantined',
      'cairn_health_node_clock_skew_seconds',
      'cairn_health_device_fill_ratio',
    ])
      expect({ metric, series: count(text, metric, c) }).toEqual({ metric, series: HEALTH_SERIES_PER_CLUSTER });
    expect(sample(text, 'cairn_health_nodes', { cluster: c, state: 'answered' })).toBe('90');
    // Every silent node is among the kept ones; the fullest device is kept, the emptiest is not.
    expect(count(text, 'cairn_health_node_answered', c)).toBe(HEALTH_SERIES_PER_CLUSTER);
    expect(
      text.split('\n').filter((l) => l.startsWith(`cairn_health_node_answered{cluster="${c}"`) && l.endsWith(' 0')),
    ).toHaveLength(10);
    expect(sample(text, 'cairn_health_device_fill_ratio', { cluster: c, node: '10.1.0.98:6200', device: 'sdc1' })).toBe(
      '0.491',
    );
    expect(
      sample(text, 'cairn_health_device_fill_ratio', { cluster: c, node: '10.1.0.0:6200', device: 'sdb1' }),
    ).toBeUndefined();
    expect(sample(text, 'cairn_health_node_async_pending', { cluster: c, node: '10.1.0.1:6200' })).toBeUndefined();
    // The other cluster's series are unaffected by this one's size.
    expect(sample(text, 'cairn_health_node_answered', { cluster: 'figures-east', node: '10.0.5.1:6200' })).toBe('1');
  });

  it("when a cluster's collector has posted a second round, then the interval between its last two shows", async () => {
    const cluster = await createCluster(app, 'figures-west');
    const earlier = new Date(collectedAt.getTime() - 20 * 60_000);
    expect((await post(cluster.id, [healthyNode('10.2.0.1:6200', earlier)], earlier)).status).toBe(201);
    expect(sample(await scrape(), 'cairn_health_round_interval_seconds', { cluster: 'figures-west' })).toBeUndefined();
    expect((await post(cluster.id, [healthyNode('10.2.0.1:6200', collectedAt)])).status).toBe(201);
    expect(sample(await scrape(), 'cairn_health_round_interval_seconds', { cluster: 'figures-west' })).toBe('1200');
  });
});
