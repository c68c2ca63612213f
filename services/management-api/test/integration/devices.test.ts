import { parseStringPromise } from 'xml2js';
import {
  ADMIN_AUTH,
  DB_KINDS,
  countRows,
  createCluster,
  createOperator,
  startTestApp,
  type TestApp,
} from '../support/harness';

const TB = 1e12;
const POLICIES = [
  { index: 0, name: 'gold', default: true },
  { index: 1, name: 'silver' },
];
/** gold = sdb1..sdb3, silver = sdb2..sdb4 (overlapping rings), sdb5 unmounted in gold. */
const DEVICES = [
  {
    node: '10.0.0.1:6200',
    device: 'sdb1',
    policies: ['gold'],
    used_bytes: 1 * TB,
    avail_bytes: 3 * TB,
    size_bytes: 4.2 * TB,
  },
  { node: '10.0.0.1:6200', device: 'sdb2', policies: ['silver', 'gold'], used_bytes: 2 * TB, avail_bytes: 2 * TB },
  { node: '10.0.0.2:6200', device: 'sdb3', policies: ['gold', 'silver'], used_bytes: 3 * TB, avail_bytes: 1 * TB },
  { node: '10.0.0.2:6200', device: 'sdb4', policies: ['silver'], used_bytes: 0.5 * TB, avail_bytes: 1.5 * TB },
  { node: '10.0.0.3:6200', device: 'sdb5', policies: ['gold'], mounted: false },
];

describe.each(DB_KINDS)('devices and capacity on %s', (kind) => {
  let app: TestApp;
  let cluster: Record<string, unknown>;
  const as = (auth: string) => ({
    get: (path: string) => app.http().get(path).set('Authorization', auth),
    put: (path: string, body: unknown) =>
      app
        .http()
        .put(path)
        .set('Authorization', auth)
        .send(body as object),
  });
  const admin = () => as(ADMIN_AUTH);
  const devicesPath = () => `/api/v1/clusters/${cluster.id}/devices/`;
  const capacityPath = () => `/api/v1/clusters/${cluster.id}/capacity/list/`;

  beforeAll(async () => {
    app = await startTestApp(kind);
    cluster = await createCluster(app, 'capacity-east');
  });
  afterAll(() => app.close());

  it('when no devices were reported, then capacity is an empty list', async () => {
    const res = await admin().get(capacityPath());
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ capacity: [] });
  });

  it('when a report is PUT, then 204 and capacity per ring set, sorted, with exact statistics', async () => {
    const put = await admin().put(devicesPath(), { policies: POLICIES, devices: DEVICES });
    expect(put.status).toBe(204);
    const res = await admin().get(capacityPath());
    expect(res.status).toBe(200);
    // gold: sdb1 (25 %), sdb5 unreported; gold,silver: sdb2 (50 %), sdb3 (75 %); silver: sdb4 (25 %).
    expect(res.body.capacity).toEqual([
      {
        ring_set: 'gold',
        total_raw_tb: 4,
        total_used_tb: 1,
        total_free_tb: 3,
        total_used_pct: 25,
        pct_used_stats: { count: 1, min: 25, max: 25, avg: 25, stddev: 0, pct_95: 25 },
      },
      {
        ring_set: 'gold,silver',
        total_raw_tb: 8,
        total_used_tb: 5,
        total_free_tb: 3,
        total_used_pct: 62.5,
        pct_used_stats: { count: 2, min: 50, max: 75, avg: 62.5, stddev: Math.sqrt(312.5), pct_95: 75 },
      },
      {
        ring_set: 'silver',
        total_raw_tb: 2,
        total_used_tb: 0.5,
        total_free_tb: 1.5,
        total_used_pct: 25,
        pct_used_stats: { count: 1, min: 25, max: 25, avg: 25, stddev: 0, pct_95: 25 },
      },
    ]);
  });

  it('when capacity is asked as XML, then tastypie XML with typed numbers', async () => {
    const res = await admin().get(`${capacityPath()}?format=xml`);
    expect(res.text).toContain(
      '<response><capacity type="list"><object type="hash"><pct_used_stats type="hash"><avg type="integer">25</avg>',
    );
    expect(res.text).toContain('<ring_set>gold,silver</ring_set>');
    await expect(parseStringPromise(res.text)).resolves.toBeTruthy();
  });

  it('when devices are listed, then the envelope, policy names and the filters node, device and policy work', async () => {
    const all = await admin().get(devicesPath());
    expect(all.status).toBe(200);
    expect(all.body.meta.total_count).toBe(5);
    const sdb2 = all.body.objects.find((d: { device: string }) => d.device === 'sdb2');
    expect(sdb2).toMatchObject({
      node: '10.0.0.1:6200',
      policies: ['gold', 'silver'],
      used_bytes: 2 * TB,
      avail_bytes: 2 * TB,
      mounted: true,
      size_bytes: null,
    });
    const sdb5 = all.body.objects.find((d: { device: string }) => d.device === 'sdb5');
    expect(sdb5).toMatchObject({ mounted: false, used_bytes: null, avail_bytes: null });
    expect((await admin().get(`${devicesPath()}?policy=silver`)).body.meta.total_count).toBe(3);
    expect((await admin().get(`${devicesPath()}?policy=bronze`)).body.meta.total_count).toBe(0);
    expect((await admin().get(`${devicesPath()}?node=10.0.0.2:6200`)).body.meta.total_count).toBe(2);
    expect(
      (await admin().get(`${devicesPath()}?device__in=sdb1,sdb4&order_by=-device`)).body.objects.map(
        (d: { device: string }) => d.device,
      ),
    ).toEqual(['sdb4', 'sdb1']);
  });

  it('when a report has bad entries, then 400 names every one by index, shape errors before the rest, and nothing changes', async () => {
    const before = await admin().get(capacityPath());
    const bad = [
      { node: 'n1', device: 'sdb1', policies: ['gold'], used_bytes: -1, avail_bytes: 5 },
      { node: 'n1', device: 'sdb2', policies: ['bronze'], used_bytes: 1, avail_bytes: 1.5 },
      { node: 'n1', device: 'sdb3', policies: ['gold'], avail_bytes: 1 },
      { node: 'n1', device: 'sdb3', policies: ['gold'], used_bytes: 1, avail_bytes: 1 },
      { device: 'sdb9', policies: [], used_bytes: 1, avail_bytes: 1 },
    ];
    const res = await admin().put(devicesPath(), { policies: POLICIES, devices: bad });
    expect(res.status).toBe(400);
    const message = res.body.error as string;
    expect(message).toContain('devices[0].used_bytes must not be negative');
    expect(message).toContain('devices[1].avail_bytes must be an integer');
    expect(message).toContain('devices[4].node is required');
    // Two passes, as docs/management-api.md says: how entries fit together is checked only once
    // every entry has its shape, so the unknown policy of devices[1] is not named yet.
    expect(message).not.toContain('unknown policy');
    const second = await admin().put(devicesPath(), {
      policies: POLICIES,
      devices: bad.slice(1, 4).map((d) => ({ ...d, avail_bytes: 1 })),
    });
    expect(second.status).toBe(400);
    expect(second.body.error).toContain("devices[0]: unknown policy 'bronze'");
    expect(second.body.error).toContain('devices[1]: a mounted device needs used_bytes and avail_bytes');
    expect(second.body.error).toContain("devices[2]: duplicate node+device 'n1/sdb3' (also devices[1])");
    expect((await admin().get(capacityPath())).body).toEqual(before.body);
    expect(await countRows(app.db, 'devices')).toBe(5);
  });

  it('when a report or one of its devices has a __proto__ field, then 400 names it as any unknown field', async () => {
    const device = '{"node": "n1", "device": "sdb1", "policies": ["gold"], "used_bytes": 1, "avail_bytes": 1';
    const text = `{"policies": ${JSON.stringify(POLICIES)}, "devices": [${device}}, ${device}, "__proto__": {"mounted": false}}], "__proto__": {}}`;
    const res = await app
      .http()
      .put(devicesPath())
      .set('Authorization', ADMIN_AUTH)
      .set('Content-Type', 'application/json')
      .send(text);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('devices[1].__proto__ is not a known field');
    expect(res.body.error).toMatch(/(: |; )__proto__ is not a known field/);
  });

  it('when policies are malformed, then 400 explains', async () => {
    const dupName = await admin().put(devicesPath(), {
      policies: [
        { index: 0, name: 'a' },
        { index: 1, name: 'a' },
      ],
      devices: [],
    });
    expect(dupName.status).toBe(400);
    expect(dupName.body.error).toContain("the name 'a' appears twice");
    const none = await admin().put(devicesPath(), { policies: [], devices: [] });
    expect(none.body.error).toContain('policies must list at least one storage policy');
  });

  it('when two policy names differ only in case, then 400 names both, as Swift refuses them, and nothing changes', async () => {
    const policiesPath = `/api/v1/clusters/${cluster.id}/utilization/policies/`;
    const before = await admin().get(devicesPath());
    const policiesBefore = await admin().get(policiesPath);
    const res = await admin().put(devicesPath(), {
      policies: [
        { index: 0, name: 'gold', default: true },
        { index: 1, name: 'silver' },
        { index: 2, name: 'GOLD' },
      ],
      devices: [{ node: 'n1', device: 'sdb1', policies: ['GOLD'], used_bytes: 1, avail_bytes: 1 }],
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain("policies[2]: the name 'GOLD' is the name 'gold' of policies[0] in another case");
    expect((await admin().get(devicesPath())).body).toEqual(before.body);
    expect((await admin().get(policiesPath)).body).toEqual(policiesBefore.body);
  });

  it('when a new report arrives, then it replaces the old one entirely', async () => {
    const res = await admin().put(devicesPath(), { policies: [{ index: 0, name: 'gold' }], devices: [DEVICES[0]] });
    expect(res.status).toBe(204);
    expect((await admin().get(devicesPath())).body.meta.total_count).toBe(1);
    expect((await admin().get(capacityPath())).body.capacity.map((c: { ring_set: string }) => c.ring_set)).toEqual([
      'gold',
    ]);
    await admin().put(devicesPath(), { policies: POLICIES, devices: DEVICES });
  });

  it('when a reader writes, then 403; an operator limited elsewhere gets 404; an unknown cluster is 404', async () => {
    const reader = await createOperator(app, `reader-${kind}`, 'reader');
    expect((await as(reader).get(capacityPath())).status).toBe(200);
    expect((await as(reader).put(devicesPath(), { policies: POLICIES, devices: [] })).status).toBe(403);
    const limited = await createOperator(app, `limited-${kind}`, 'admin', ['/api/v1/clusters/1/']);
    expect((await as(limited).get(capacityPath())).status).toBe(404);
    expect((await admin().get('/api/v1/clusters/999/capacity/list/')).status).toBe(404);
    expect((await admin().get('/api/v1/clusters/999/devices/')).status).toBe(404);
  });

  it('when the cluster is deleted, then its devices and capacity go with it', async () => {
    const temp = await createCluster(app, 'short-lived');
    await admin().put(`/api/v1/clusters/${temp.id}/devices/`, { policies: POLICIES, devices: DEVICES });
    expect((await app.http().delete(`/api/v1/clusters/${temp.id}/`).set('Authorization', ADMIN_AUTH)).status).toBe(204);
    expect(
      Number(
        (
          await app
            .db('devices')
            .where({ cluster_id: temp.id as number })
            .count({ n: '*' })
        )[0]!.n,
      ),
    ).toBe(0);
  });
});
