import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type request from 'supertest';
import { ADMIN_AUTH, DB_KINDS, createCluster, createOperator, startTestApp, type TestApp } from '../support/harness';

/**
 * Rings written by Swift's own swift-ring-builder (packages/swift-cluster/test/fixtures/make-rings.sh):
 * object (part power 8, sdb1..sdb3), object-1 (part power 8, sdb2..sdb4), object-2 (part power 10).
 */
const FIXTURES = join(__dirname, '../../../../packages/swift-cluster/test/fixtures/swift');
const ring = (name: string): Buffer => readFileSync(join(FIXTURES, `${name}.ring.gz`));
const V1 = ring('object');
const V2 = ring('object-1');
const OTHER_PART_POWER = ring('object-2');
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');

/** supertest collects an octet-stream answer as a Buffer only when told to; errors stay readable as text. */
const binary = (res: request.Response, done: (err: Error | null, body: unknown) => void) => {
  const stream = res as unknown as NodeJS.ReadableStream;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('end', () => {
    const bytes = Buffer.concat(chunks);
    (res as unknown as { text: string }).text = bytes.toString('utf8');
    done(null, bytes);
  });
};

/**
 * A plan as `cairn rings plan -o json` prints it (packages/rings' Plan), with `devices` devices: the
 * API checks its shape and keeps it whole, so a synthetic one of the real shape is enough here
 * (test-e2e/interop/rings-cli.test.ts stores one Swift computed).
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

describe.each(DB_KINDS)('ring versions on %s', (kind) => {
  let app: TestApp;
  let cluster: Record<string, unknown>;
  const base = () => `/api/v1/clusters/${cluster.id}/rings`;
  const push = (bytes: Buffer, auth = ADMIN_AUTH, name = 'object') =>
    app
      .http()
      .post(`${base()}/${name}/`)
      .set('Authorization', auth)
      .set('Content-Type', 'application/octet-stream')
      .send(bytes);
  const file = (auth = ADMIN_AUTH, etag?: string) => {
    const req = app.http().get(`${base()}/object.ring.gz`).set('Authorization', auth).buffer(true).parse(binary);
    return etag ? req.set('If-None-Match', etag) : req;
  };
  const versions = (auth = ADMIN_AUTH) => app.http().get(`${base()}/?ring=object`).set('Authorization', auth);
  const rollback = (auth = ADMIN_AUTH) => app.http().post(`${base()}/object/rollback/`).set('Authorization', auth);
  const auditOf = async (action: string) =>
    (await app.http().get(`/api/v1/audit/?action=${action}&order_by=-id`).set('Authorization', ADMIN_AUTH)).body
      .objects as Array<Record<string, unknown>>;

  beforeAll(async () => {
    app = await startTestApp(kind);
    cluster = await createCluster(app, 'rings-east');
  });
  afterAll(() => app.close());

  it('when a cluster has no ring yet, then its file is 404 and a rollback is 404', async () => {
    expect((await file()).status).toBe(404);
    expect((await rollback()).status).toBe(404);
    expect((await versions()).body.objects).toEqual([]);
  });

  it('when a ring is pushed, then it is version 1, current, with what the ring says, and audited without its bytes', async () => {
    const res = await push(V1).set('X-Cairn-Plan-Id', 'grow-1').set('X-Cairn-Plan-Step', '0');
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      ring: 'object',
      version: 1,
      current: true,
      md5: md5(V1),
      size_bytes: V1.length,
      part_power: 8,
      replicas: 3,
      device_count: 3,
      plan_id: 'grow-1',
      plan_step: 0,
      created_by: 'root',
      ring_file: `${base()}/object.ring.gz`,
    });
    // make-rings.sh: r1z1-127.0.0.1:6200/sdb1, r1z2-…/sdb2, r1z3-…/sdb3, weight 100 each.
    expect(res.body.devices).toEqual(
      [1, 2, 3].map((n) => ({
        id: n - 1,
        region: 1,
        zone: n,
        ip: '127.0.0.1',
        port: 6200,
        device: `sdb${n}`,
        weight: 100,
      })),
    );
    const [record] = await auditOf('push_ring');
    expect(record).toMatchObject({ target_type: 'rings', target_name: 'rings-east/object', before: null });
    expect(record!.after).toEqual({
      version: 1,
      md5: md5(V1),
      size_bytes: V1.length,
      part_power: 8,
      replicas: 3,
      device_count: 3,
      plan_id: 'grow-1',
      plan_step: 0,
    });
    // Neither the bytes nor any encoding of them.
    const stored = JSON.stringify(await app.db('audit_log').where({ action: 'push_ring' }));
    expect(stored).not.toContain(V1.toString('base64').slice(0, 40));
    expect(stored).not.toContain(V1.toString('hex').slice(0, 40));
  });

  it('when the same bytes are pushed again, then 200 and no new version', async () => {
    const res = await push(V1);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 1, current: true });
    expect((await versions()).body.meta.total_count).toBe(1);
    expect(await auditOf('push_ring')).toHaveLength(1);
  });

  it('when the file is read, then the exact bytes with the md5 as ETag; with that ETag in If-None-Match, then 304', async () => {
    const res = await file();
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/octet-stream');
    expect(res.headers.etag).toBe(`"${md5(V1)}"`);
    expect(Buffer.compare(res.body as Buffer, V1)).toBe(0);
    const again = await file(ADMIN_AUTH, `"${md5(V1)}"`);
    expect(again.status).toBe(304);
    expect(again.headers.etag).toBe(`"${md5(V1)}"`);
    expect((await file(ADMIN_AUTH, `"${md5(V2)}"`)).status).toBe(200);
    // A list of tags, weak ones too, as RFC 9110 allows.
    expect((await file(ADMIN_AUTH, `"${md5(V2)}", W/"${md5(V1)}"`)).status).toBe(304);
  });

  it('when a different ring of the same part power is pushed, then it is version 2 and the file', async () => {
    const res = await push(V2);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ version: 2, current: true, md5: md5(V2) });
    const served = await file();
    expect(served.headers.etag).toBe(`"${md5(V2)}"`);
    expect(Buffer.compare(served.body as Buffer, V2)).toBe(0);
    const list = (await versions()).body.objects as Array<Record<string, unknown>>;
    expect(list.map((v) => [v.version, v.current])).toEqual([
      [1, false],
      [2, true],
    ]);
    // Only the current version lists its devices (object-1: sdb2..sdb4 in zones 2..4).
    expect(list[0]!.devices).toBeNull();
    expect((list[1]!.devices as Array<{ device: string; zone: number }>).map((d) => `z${d.zone} ${d.device}`)).toEqual([
      'z2 sdb2',
      'z3 sdb3',
      'z4 sdb4',
    ]);
    expect(list[0]).not.toHaveProperty('ring_gz');
    const newestFirst = await app
      .http()
      .get(`${base()}/?ring=object&current=false&created_at__gte=2000-01-01&order_by=-version`)
      .set('Authorization', ADMIN_AUTH);
    expect(newestFirst.status).toBe(200);
    expect((newestFirst.body.objects as Array<{ version: number }>).map((v) => v.version)).toEqual([1]);
  });

  it('when a ring of another part power is pushed, then 409 with a sentence and nothing changes', async () => {
    const res = await push(OTHER_PART_POWER);
    expect(res.status).toBe(409);
    expect(res.body.error).toContain('part power 10');
    expect(res.body.error).toContain('has 8');
    expect((await versions()).body.meta.total_count).toBe(2);
    // Another ring name has its own part power.
    expect((await push(OTHER_PART_POWER, ADMIN_AUTH, 'object-2')).status).toBe(201);
  });

  it('when the body is not a ring, not sent as a file, or the name is not a ring, then 4xx with a sentence', async () => {
    const junk = await push(Buffer.from('this is not a ring'));
    expect(junk.status).toBe(400);
    expect(junk.body.error).toMatch(/^The body is not a Swift ring file: /);
    const truncated = await push(V2.subarray(0, V2.length - 20));
    expect(truncated.status).toBe(400);
    const json = await app.http().post(`${base()}/object/`).set('Authorization', ADMIN_AUTH).send({ ring: 'x' });
    expect(json.status).toBe(415);
    const badName = await push(V1, ADMIN_AUTH, 'objects');
    expect(badName.status).toBe(400);
    expect(badName.body.error).toContain("'objects' is not a Swift ring name");
    expect((await versions()).body.meta.total_count).toBe(2);
  });

  it('when rolled back, then the previous version is current and served, audited; with none before, then 409', async () => {
    const res = await rollback();
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ version: 1, current: true, md5: md5(V1) });
    expect((res.body.devices as Array<{ device: string }>).map((d) => d.device)).toEqual(['sdb1', 'sdb2', 'sdb3']);
    expect((await file()).headers.etag).toBe(`"${md5(V1)}"`);
    const list = (await versions()).body.objects as Array<Record<string, unknown>>;
    expect(list.map((v) => [v.version, v.current])).toEqual([
      [1, true],
      [2, false],
    ]);
    const [record] = await auditOf('rollback_ring');
    expect(record).toMatchObject({ before: { version: 2, md5: md5(V2) }, after: { version: 1, md5: md5(V1) } });
    const none = await rollback();
    expect(none.status).toBe(409);
    expect(none.body.error).toContain('there is none before it to roll back to');
    // A push after a rollback is a new version, numbered after the newest.
    const again = await push(V2);
    expect(again.body).toMatchObject({ version: 3, current: true });
  });

  it('when a reader pushes or rolls back, then 403; it reads; an operator limited elsewhere gets 404', async () => {
    const reader = await createOperator(app, `ring-reader-${kind}`, 'reader');
    expect((await versions(reader)).status).toBe(200);
    expect((await file(reader)).status).toBe(200);
    expect((await push(V1, reader)).status).toBe(403);
    expect((await rollback(reader)).status).toBe(403);
    const limited = await createOperator(app, `ring-limited-${kind}`, 'admin', ['/api/v1/clusters/1/']);
    expect((await versions(limited)).status).toBe(404);
    expect((await file(limited)).status).toBe(404);
    expect((await push(V1, limited)).status).toBe(404);
    expect((await app.db('ring_versions').where({ cluster_id: cluster.id as number, ring: 'object' })).length).toBe(3);
  });

  describe('plans', () => {
    const plans = () => `/api/v1/clusters/${cluster.id}/ring_plans/`;
    const store = (body: unknown, auth = ADMIN_AUTH) =>
      app
        .http()
        .post(plans())
        .set('Authorization', auth)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify(body));
    const list = (auth = ADMIN_AUTH, query = '') => app.http().get(`${plans()}${query}`).set('Authorization', auth);

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
      expect(res.headers.location).toBe(`${plans()}${res.body.id}/`);
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
        target_name: 'rings-east/object/grow-z5',
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
      expect((await app.http().get(`${plans()}999999/`).set('Authorization', ADMIN_AUTH)).status).toBe(404);
      expect((await app.http().get(`${plans()}x/`).set('Authorization', ADMIN_AUTH)).status).toBe(404);
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
});
