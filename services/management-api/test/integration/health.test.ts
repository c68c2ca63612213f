import { createApiMetrics } from '../../src/http/metrics';
import { ADMIN_AUTH, DB_KINDS, createCluster, createOperator, startTestApp, type TestApp } from '../support/harness';
import { RING, TB, healthyNode } from '../support/health-rounds';

const MIN = 60_000;
const HOUR = 60 * MIN;

describe.each(DB_KINDS)('cluster health on %s', (kind) => {
  let app: TestApp;
  let cluster: Record<string, unknown>;
  // Rounds are in the past and move forward, one per call.
  let clock = Date.now() - 10 * HOUR;
  const nextAt = (stepMs = 5 * MIN) => new Date((clock += stepMs));
  const as = (auth: string) => ({
    get: (path: string) => app.http().get(path).set('Authorization', auth),
    post: (path: string, body: unknown) =>
      app
        .http()
        .post(path)
        .set('Authorization', auth)
        .send(body as object),
    put: (path: string, body: unknown) =>
      app
        .http()
        .put(path)
        .set('Authorization', auth)
        .send(body as object),
  });
  const admin = () => as(ADMIN_AUTH);
  const base = () => `/api/v1/clusters/${cluster.id}/health/`;
  const post = (at: Date, nodes: unknown[], ring: Record<string, string> = RING) =>
    admin().post(`${base()}rounds/`, { collected_at: at.toISOString(), ring_md5: ring, nodes });
  const openCodes = async () =>
    ((await admin().get(base())).body.findings as Array<{ code: string; node: string | null; device: string | null }>)
      .map((f) => `${f.code} ${f.node ?? '-'} ${f.device ?? '-'}`)
      .sort();

  beforeAll(async () => {
    app = await startTestApp(kind);
    cluster = await createCluster(app, 'health-east');
  });
  afterAll(() => app.close());

  it('when no round came yet, then health is unknown in the cluster and the clusters list', async () => {
    const res = await admin().get(base());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'unknown', collected_at: null, findings: [], nodes: [] });
    expect((await admin().get(`/api/v1/clusters/${cluster.id}/`)).body.health).toBe('unknown');
  });

  it('when a round has an unmounted device, then a finding opens; a round its node is silent in keeps it; a clean round closes it; history shows both times', async () => {
    const first = nextAt();
    const unmounted = healthyNode('10.0.0.3:6200', first, {
      unmounted: [{ device: 'sdc1', mounted: false }],
      diskusage: [{ device: 'sdc1', mounted: false, size: '', used: '', avail: '' }],
    });
    // The object replicator writes its pass length in minutes: 2.5 min for 1536 partitions.
    const passEnd = Math.floor(first.getTime() / 1000) - 900;
    const measured = healthyNode('10.0.0.4:6200', first, {
      'replication/object': {
        replication_time: 2.5,
        replication_stats: { attempted: 1536, success: 3072, failure: 0 },
        replication_last: passEnd,
        object_replication_time: 2.5,
        object_replication_last: passEnd,
      },
    });
    const res = await post(first, [unmounted, measured]);
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: expect.any(Number), open_findings: 1 });
    const health = await admin().get(base());
    expect(health.body.status).toBe('warning');
    expect(health.body.findings).toEqual([
      expect.objectContaining({
        code: 'drive_unmounted',
        severity: 'warning',
        node: '10.0.0.3:6200',
        device: 'sdc1',
        open: true,
        opened_at: first.toISOString(),
        closed_at: null,
        sentence: expect.stringContaining('sdc1 on 10.0.0.3:6200 is not mounted'),
      }),
    ]);
    expect(health.body.nodes[0]).toMatchObject({
      node: '10.0.0.3:6200',
      answered: true,
      last_seen: first.toISOString(),
      devices: [{ device: 'sdc1', mounted: false, fill_pct: null }],
      replication: { object: new Date(first.getTime() - 600_000).toISOString() },
      // healthyNode's passes say nothing of their partitions (replication_stats: {}).
      replication_passes: {
        object: { ended_at: new Date(first.getTime() - 600_000).toISOString(), seconds: 72, partitions: null },
        container: { ended_at: new Date(first.getTime() - 600_000).toISOString(), seconds: 1.2, partitions: null },
      },
    });
    expect(health.body.nodes[1].replication_passes.object).toEqual({
      ended_at: new Date(passEnd * 1000).toISOString(),
      seconds: 150,
      partitions: 1536,
    });
    const xml = await admin().get(`${base()}?format=xml`);
    expect(xml.status).toBe(200);
    expect(xml.text).toContain('<code>drive_unmounted</code>');
    expect(
      (await admin().get('/api/v1/clusters/')).body.objects.find((c: { id: number }) => c.id === cluster.id).health,
    ).toBe('warning');

    // Still unmounted: the same finding stays open (opened once).
    const second = nextAt();
    await post(second, [
      healthyNode('10.0.0.3:6200', second, { unmounted: [{ device: 'sdc1', mounted: false }] }),
      healthyNode('10.0.0.4:6200', second),
    ]);
    // Silent: nothing is known of its drive, so the finding stays open as it was, beside node_silent.
    const silent = nextAt();
    const silentRound = await post(silent, [
      healthyNode('10.0.0.3:6200', silent, {}, { answered: false, error: 'connection refused', recon: {} }),
      healthyNode('10.0.0.4:6200', silent),
    ]);
    expect(silentRound.body.open_findings).toBe(2);
    expect(await openCodes()).toEqual(['drive_unmounted 10.0.0.3:6200 sdc1', 'node_silent 10.0.0.3:6200 -']);
    const clean = nextAt();
    expect(
      (await post(clean, [healthyNode('10.0.0.3:6200', clean), healthyNode('10.0.0.4:6200', clean)])).body
        .open_findings,
    ).toBe(0);
    expect((await admin().get(base())).body).toMatchObject({ status: 'ok', findings: [] });
    const history = await admin().get(`${base()}history/?code=drive_unmounted`);
    expect(history.body.meta.total_count).toBe(1);
    expect(history.body.objects[0]).toMatchObject({
      open: false,
      opened_at: first.toISOString(),
      last_seen_at: second.toISOString(), // the silent round left it as it was
      closed_at: clean.toISOString(),
    });
    expect((await admin().get(`${base()}history/?open=true`)).body.objects).toEqual([]);
    expect((await admin().get(`${base()}history/?open=false`)).body.meta.total_count).toBe(2);
    expect((await admin().get(`/api/v1/clusters/${cluster.id}/`)).body.health).toBe('ok');
  });

  it('when nodes are full, erroring, stale, backed up, on an old ring, skewed or silent, then each rule opens its finding', async () => {
    const at = nextAt();
    const now = at.getTime() / 1000;
    const res = await post(at, [
      healthyNode('10.0.1.1:6200', at, {
        diskusage: [{ device: 'sdb1', mounted: true, size: 100 * TB, used: 96 * TB, avail: 4 * TB }],
        driveaudit: { drive_audit_errors: 3 },
      }),
      healthyNode('10.0.1.2:6200', at, {
        'replication/object': { object_replication_last: now - 25 * 3600, replication_last: now - 25 * 3600 },
        async: { async_pending: 20_000, async_pending_last: now },
      }),
      healthyNode('10.0.1.3:6200', at, {
        ringmd5: { '/etc/swift/object.ring.gz': 'f'.repeat(32) },
        time: now - 5,
      }),
      healthyNode('10.0.1.4:6200', at, {}, { answered: false, error: 'connection refused', recon: {} }),
    ]);
    expect(res.status).toBe(201);
    expect(await openCodes()).toEqual([
      'async_pending_high 10.0.1.2:6200 -',
      'clock_skew 10.0.1.3:6200 -',
      'device_full 10.0.1.1:6200 sdb1',
      'drive_errors 10.0.1.1:6200 -',
      'node_silent 10.0.1.4:6200 -',
      'object_replication_stale 10.0.1.2:6200 -',
      'ring_mismatch 10.0.1.3:6200 -',
    ]);
    expect((await admin().get(base())).body.status).toBe('critical');
  });

  it('when quarantine counts rise, async pendings grow for an hour and a ring set fills, then those findings open too', async () => {
    // Eight days of a ring set growing 2 TB a day with 20 TB left: full in about 10 days.
    const hours = 24 * 7;
    const start = Math.floor(clock / HOUR) * HOUR - hours * HOUR;
    await app.db('capacity_history').insert(
      Array.from({ length: hours }, (_, h) => ({
        cluster_id: cluster.id,
        ring_set: 'gold',
        hour: new Date(start + h * HOUR),
        total_raw_tb: 100,
        total_used_tb: 80 - (2 * (hours - h)) / 24,
        total_free_tb: 20 + (2 * (hours - h)) / 24,
        total_used_pct: 80,
        reported_at: new Date(start + h * HOUR),
      })),
    );
    let last = 0;
    for (let i = 0; i <= 4; i++) {
      const at = nextAt(20 * MIN);
      last = (
        await post(at, [
          healthyNode('10.0.2.1:6200', at, {
            async: { async_pending: 100 + i * 10, async_pending_last: at.getTime() / 1000 },
            quarantined: { objects: i === 4 ? 7 : 1, containers: 0, accounts: 0, policies: {} },
          }),
        ])
      ).status;
    }
    expect(last).toBe(201);
    expect(await openCodes()).toEqual([
      'async_pending_growing 10.0.2.1:6200 -',
      'quarantined_rising 10.0.2.1:6200 -',
      'ring_set_filling - -',
    ]);
    const filling = (await admin().get(`${base()}history/?code=ring_set_filling&open=true`)).body.objects[0];
    expect(filling).toMatchObject({ ring_set: 'gold', severity: 'warning' });
    expect(filling.sentence).toMatch(/full in 10\.\d day/);
    // Nodes no longer in the round leave, and their findings close.
    expect((await admin().get(base())).body.nodes.map((n: { node: string }) => n.node)).toEqual(['10.0.2.1:6200']);
  });

  it('when the metrics are scraped, then open findings are counted per cluster, severity and code', async () => {
    const text = await createApiMetrics(app.db, { cacheMs: 0 }).registry.metrics();
    expect(text).toMatch(
      /^cairn_health_findings_open\{cluster="health-east",severity="warning",code="quarantined_rising"[^}]*\} 1$/m,
    );
    expect(text).toMatch(/^cairn_collector_last_success_timestamp_seconds\{cluster="health-east",collector="health"/m);
  });

  describe('bad rounds', () => {
    const bad = async (body: unknown) => {
      const res = await admin().post(`${base()}rounds/`, body);
      expect(res.status).toBe(400);
      return res.body.error as string;
    };
    const at = () => new Date(clock + MIN).toISOString();

    it('when fields are missing or of the wrong type, then 400 naming them', async () => {
      expect(await bad({ ring_md5: RING })).toMatch(/collected_at.*no data|nodes.*no data/);
      expect(await bad({ collected_at: 'yesterday', ring_md5: RING, nodes: [] })).toContain('ISO 8601');
      expect(await bad({ collected_at: at(), ring_md5: { 'object.ring.gz': 'xyz' }, nodes: [] })).toContain('md5 sum');
      expect(
        await bad({
          collected_at: at(),
          ring_md5: RING,
          nodes: [{ node: 'n:1', server_types: ['proxy'], answered: true, elapsed_ms: 1 }],
        }),
      ).toContain('server_types');
    });

    it('when a node appears twice, a recon key is unknown or a document is over 64 KiB, then 400', async () => {
      const n = healthyNode('10.0.9.1:6200', new Date(clock));
      expect(await bad({ collected_at: at(), ring_md5: RING, nodes: [n, n] })).toContain('appears twice');
      expect(
        await bad({ collected_at: at(), ring_md5: RING, nodes: [{ ...n, recon: { ...n.recon, sockstat: {} } }] }),
      ).toContain('sockstat');
      expect(
        await bad({
          collected_at: at(),
          ring_md5: RING,
          nodes: [{ ...n, recon: { load: { x: 'y'.repeat(70_000) } } }],
        }),
      ).toContain('64 KiB');
    });

    it('when a round is older than the latest or is ahead of the clock, then 400 and nothing is written', async () => {
      const before = await app.db('health_rounds').count({ n: '*' });
      expect(await bad({ collected_at: new Date(clock - MIN).toISOString(), ring_md5: RING, nodes: [] })).toContain(
        'older than',
      );
      expect(
        await bad({ collected_at: new Date(Date.now() + HOUR).toISOString(), ring_md5: RING, nodes: [] }),
      ).toContain('ahead');
      expect(await app.db('health_rounds').count({ n: '*' })).toEqual(before);
    });
  });

  it('when the latest round is posted again, then it is answered as the first time and nothing changes', async () => {
    const at = nextAt();
    const nodes = [healthyNode('10.0.3.1:6200', at, { unmounted: [{ device: 'sdq1', mounted: false }] })];
    const first = await post(at, nodes);
    const again = await post(at, []);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    // The ring set seeded above is still filling; the empty repost closed nothing.
    expect(await openCodes()).toEqual(['drive_unmounted 10.0.3.1:6200 sdq1', 'ring_set_filling - -']);
    expect(first.body.open_findings).toBe(2);
  });

  describe('thresholds and permissions', () => {
    it('when thresholds are set, then they apply to the next round, are audited, and a bad one is a 400', async () => {
      const path = `${base()}thresholds/`;
      expect((await admin().get(path)).body).toMatchObject({ fill_warning_pct: 90, fill_critical_pct: 95 });
      expect((await admin().put(path, { fill_warning_pct: 97, fill_critical_pct: 96 })).body.error).toContain(
        'fill_critical_pct field must be at least fill_warning_pct',
      );
      expect((await admin().put(path, { fill_warning_pct: 101 })).body.error).toContain('at most 100');
      expect((await admin().put(path, { replication_max_age_hours: 0 })).body.error).toContain(
        "The 'replication_max_age_hours' field must be at least 0.001.",
      );
      const put = await admin().put(path, {
        fill_warning_pct: 50,
        fill_critical_pct: 99,
        quarantine_window_hours: 0.25,
      });
      expect(put.status).toBe(200);
      expect(put.body).toMatchObject({
        fill_warning_pct: 50,
        fill_critical_pct: 99,
        replication_max_age_hours: 24,
        quarantine_window_hours: 0.25,
      });
      expect((await admin().get(path)).body).toMatchObject({ quarantine_window_hours: 0.25 });
      const at = nextAt();
      await post(at, [
        healthyNode('10.0.2.1:6200', at, {
          diskusage: [{ device: 'sdb1', mounted: true, size: 100, used: 60, avail: 40 }],
        }),
      ]);
      expect(await openCodes()).toContain('device_full 10.0.2.1:6200 sdb1');
      const audit = await admin().get(`/api/v1/audit/?action=update&target_type=clusters&order_by=-id&limit=1`);
      expect(audit.body.objects[0]).toMatchObject({
        before: expect.objectContaining({ fill_warning_pct: 90 }),
        after: expect.objectContaining({ fill_warning_pct: 50 }),
      });
      // Rounds are not audited.
      expect((await app.db('audit_log').whereRaw("target_uri LIKE '%/health/rounds/%'")).length).toBe(0);
    });

    it('when a reader or an operator of another cluster asks, then readers read, only writers write, others see nothing', async () => {
      const reader = as(await createOperator(app, `health-reader-${kind}`, 'reader'));
      const other = await createCluster(app, 'health-west');
      const elsewhere = as(
        await createOperator(app, `health-west-admin-${kind}`, 'admin', [other.resource_uri as string]),
      );
      expect((await reader.get(base())).status).toBe(200);
      expect((await reader.get(`${base()}history/`)).status).toBe(200);
      expect(
        (
          await reader.post(`${base()}rounds/`, {
            collected_at: new Date(clock + MIN).toISOString(),
            ring_md5: RING,
            nodes: [],
          })
        ).status,
      ).toBe(403);
      expect((await reader.put(`${base()}thresholds/`, {})).status).toBe(403);
      expect((await elsewhere.get(base())).status).toBe(404);
      expect(
        (
          await elsewhere.post(`${base()}rounds/`, {
            collected_at: new Date(clock + MIN).toISOString(),
            ring_md5: RING,
            nodes: [],
          })
        ).status,
      ).toBe(404);
      expect((await elsewhere.get(`/api/v1/clusters/${other.id}/health/`)).body.status).toBe('unknown');
    });
  });
});
