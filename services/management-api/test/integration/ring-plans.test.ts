import { ADMIN_AUTH, DB_KINDS, createCluster, createOperator, startTestApp, type TestApp } from '../support/harness';

/**
 * A plan as `cairn rings plan -o json` prints it (packages/rings' Plan), with `devices` devices: the
 * API checks its shape and keeps it whole, so a synthetic one of the real shape is enough here
 * (test-e2e/cli/rings-plan.test.ts stores one Swift computed).
 */
function planOf(devices: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ring: 'object',
    seed: 42,
    swift_version: '2.35.1',
    computed_at: '2026-11-28T10:00:00.000Z',
    builder_md5: '0123456789abcdef0123456789abcdef',
    ring_md5: 'fedcba9876543210fedcba9876543210',
    part_power: 18,
    replicas: 3,
    parts_total: 262144,
    parts_moved: 12345,
    parts_moved_pct: 4.71,
    replicas_moved: 13000,
    bytes_to_move: 5_000_000_000_000,
    balance: 0.8,
    dispersion: 0,
    balance_before: 1.2,
    dispersion_before: 0,
    overload: 0,
    required_overload: null,
    min_part_hours: 1,
    min_part_seconds_left: 0,
    max_move_pct: 5,
    usage_source: 'recon',
    notes: [],
    devices: Array.from({ length: devices }, (_, id) => ({
      id,
      region: 1,
      zone: 1 + (id % 5),
      ip: `10.0.${Math.floor(id / 250)}.${id % 250}`,
      port: 6200,
      device: `sd${id}`,
      weight: 4000,
      weight_after: 4000,
      parts: 786,
      parts_after: 780,
      used_bytes: 1_000_000_000_000,
      size_bytes: 4_000_000_000_000,
      projected_used_bytes: 992_000_000_000,
      projected_used_pct: 24.8,
    })),
    steps: [
      {
        step: 1,
        fraction: 0.5,
        parts_moved: 6000,
        parts_moved_pct: 2.29,
        replicas_moved: 6100,
        balance: 1,
        dispersion: 0,
        add: [],
        weights: [{ id: 0, weight: 2000 }],
        remove: [],
        parts_after: { '0': 700 },
      },
    ],
    steps_estimated: 2,
    change: { start: [[0, 4000]], targets: [[0, 0]], add: [], remove: [] },
    applied: [],
    ...extra,
  };
}

describe.each(DB_KINDS)('ring plans on %s', (kind) => {
  let app: TestApp;
  let cluster: Record<string, unknown>;
  const base = () => `/api/v1/clusters/${cluster.id}/ring_plans/`;
  const store = (body: unknown, auth = ADMIN_AUTH) =>
    app
      .http()
      .post(base())
      .set('Authorization', auth)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body));
  const list = (auth = ADMIN_AUTH, query = '') => app.http().get(`${base()}${query}`).set('Authorization', auth);

  beforeAll(async () => {
    app = await startTestApp(kind);
    cluster = await createCluster(app, 'plans-east');
  });
  afterAll(() => app.close());

  it('when a plan of 2,000 devices is stored, then 201 with its figures and the whole plan, listed newest first, and audited without its devices', async () => {
    const plan = planOf(2000);
    const res = await store({ name: 'grow-z5', plan });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'grow-z5',
      ring: 'object',
      seed: 42,
      swift_version: '2.35.1',
      computed_at: '2026-11-28T10:00:00.000Z',
      parts_total: 262144,
      parts_moved: 12345,
      parts_moved_pct: 4.71,
      replicas_moved: 13000,
      bytes_to_move: 5_000_000_000_000,
      device_count: 2000,
      steps_computed: 1,
      steps_estimated: 2,
      created_by: 'root',
    });
    expect(res.body.plan).toEqual(plan);
    expect(res.headers.location).toBe(`${base()}${res.body.id}/`);
    expect(res.body.resource_uri).toBe(res.headers.location);

    const detail = await app.http().get(res.headers.location!).set('Authorization', ADMIN_AUTH);
    expect(detail.status).toBe(200);
    expect(detail.body).toEqual(res.body);

    const second = await store({ plan: planOf(3, { seed: 7, computed_at: undefined }) });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ name: null, seed: 7, computed_at: null, device_count: 3 });
    const listed = await list();
    expect((listed.body.objects as Array<{ id: string }>).map((p) => p.id)).toEqual([second.body.id, res.body.id]);
    const named = await list(ADMIN_AUTH, '?name=grow-z5');
    expect((named.body.objects as Array<{ id: string }>).map((p) => p.id)).toEqual([res.body.id]);

    const [record] = (
      await app.http().get('/api/v1/audit/?target_type=ring_plans&order_by=id').set('Authorization', ADMIN_AUTH)
    ).body.objects as Array<Record<string, unknown>>;
    expect(record).toMatchObject({
      action: 'create',
      target_type: 'ring_plans',
      target_name: 'plans-east/object/grow-z5',
      before: null,
      after: {
        name: 'grow-z5',
        ring: 'object',
        seed: 42,
        swift_version: '2.35.1',
        parts_moved: 12345,
        bytes_to_move: 5_000_000_000_000,
        device_count: 2000,
        steps_computed: 1,
      },
    });
    expect(JSON.stringify(record)).not.toContain('10.0.0.1');
  });

  it('when a plan is malformed, then 400 naming each problem and nothing is stored', async () => {
    const before = (await list()).body.meta.total_count as number;
    const bad = await store({
      name: 'has space',
      plan: planOf(2, { ring: 'objects', seed: -1, steps: [], devices: [{ id: 0 }] }),
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain("'name' must be 1 to 255 printable characters without spaces.");
    expect(bad.body.error).toContain("'plan.ring' must be 'account', 'container', 'object' or 'object-<n>'.");
    expect(bad.body.error).toContain('plan.seed');
    expect(bad.body.error).toContain('plan.steps');
    expect(bad.body.error).toContain('plan.devices[0].region');
    expect((await store({})).body.error).toContain("The 'plan' field has no data");
    expect((await store({ plan: planOf(1), extra: 1 })).status).toBe(400);
    expect((await list()).body.meta.total_count).toBe(before);
    expect((await app.http().get(`${base()}999999/`).set('Authorization', ADMIN_AUTH)).status).toBe(404);
    expect((await app.http().get(`${base()}x/`).set('Authorization', ADMIN_AUTH)).status).toBe(404);
  });

  it('when a reader stores a plan, then 403; it reads; an operator limited elsewhere gets 404', async () => {
    const reader = await createOperator(app, `plan-reader-${kind}`, 'reader');
    expect((await list(reader)).status).toBe(200);
    expect((await store({ plan: planOf(1) }, reader)).status).toBe(403);
    const limited = await createOperator(app, `plan-limited-${kind}`, 'admin', ['/api/v1/clusters/1/']);
    expect((await list(limited)).status).toBe(404);
    expect((await store({ plan: planOf(1) }, limited)).status).toBe(404);
    expect((await app.db('ring_plans').where({ cluster_id: cluster.id as number })).length).toBe(2);
  });
});
