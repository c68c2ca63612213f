import { putSwiftInfo } from '../../src/repositories/quotas';
import { ADMIN_AUTH, DB_KINDS, createUser, cheapHashPassword, startTestApp, type TestApp } from '../support/harness';

/** Quotas in the API: the desired state the reconciler applies (see quota-reconciler.test.ts). */
describe.each(DB_KINDS)('quotas on %s', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
    // The cluster's policies, as the capacity collector reports them.
    const put = await app
      .http()
      .put('/api/v1/clusters/1/devices/')
      .set('Authorization', ADMIN_AUTH)
      .send({
        policies: [
          { index: 0, name: 'gold', default: true },
          { index: 1, name: 'Silver' },
        ],
        devices: [],
      });
    expect(put.status).toBe(204);
  });
  afterAll(() => app.close());

  const http = () => app.http();
  const patch = (id: unknown, body: Record<string, unknown>) =>
    http()
      .patch(`/api/v1/users/${String(id)}/`)
      .set('Authorization', ADMIN_AUTH)
      .send(body);
  const get = (path: string) => http().get(path).set('Authorization', ADMIN_AUTH);

  it('when a quota is set, then the user shows it as a number, pending, and the audit trail has before and after', async () => {
    const alice = await createUser(app, 'alice');
    expect(alice).toMatchObject({
      quota_bytes: null,
      quota_count: null,
      quota_bytes_policy: null,
      quota_count_policy: null,
      quota_status: null,
    });
    const res = await patch(alice.id, { quota_bytes: 10240 });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      quota_bytes: 10240,
      quota_status: 'pending',
      quota_error: null,
      quota_applied_at: null,
    });
    expect((await get(`/api/v1/users/${String(alice.id)}/`)).body).toMatchObject({
      quota_bytes: 10240,
      quota_status: 'pending',
    });
    const audit = await get(`/api/v1/audit/?target_type=users&target_id=${String(alice.id)}&action=update`);
    expect(audit.body.objects).toHaveLength(1);
    expect(audit.body.objects[0].before).toMatchObject({ quota_bytes: null });
    expect(audit.body.objects[0].after).toMatchObject({ quota_bytes: 10240 });
    // Audit snapshots record what an operator set, not the reconciler's progress.
    expect(audit.body.objects[0].after).not.toHaveProperty('quota_status');

    const cleared = await patch(alice.id, { quota_bytes: null });
    expect(cleared.body).toMatchObject({ quota_bytes: null, quota_status: 'pending' });
  });

  it('when a quota is above 2^53, then it is a decimal string both ways; 2^63 - 1 is the largest', async () => {
    const u = await createUser(app, 'big', { quota_bytes: '9223372036854775807', quota_count: 9007199254740991 });
    expect(u).toMatchObject({
      quota_bytes: '9223372036854775807',
      quota_count: 9007199254740991,
      quota_status: 'pending',
    });
    const text = (await get(`/api/v1/users/${String(u.id)}/`)).text;
    expect(text).toContain('"quota_bytes": "9223372036854775807"');
    for (const bad of ['9223372036854775808', -1, 1.5, 'ten', true]) {
      const res = await patch(u.id, { quota_bytes: bad });
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
      expect(res.body.error).toBe(
        "The 'quota_bytes' field must be null (no quota) or a whole number from 0 to 9223372036854775807.",
      );
    }
  });

  it('when an integer above 2^53 is sent as a JSON number, then it is taken exactly, and one past 2^63 - 1 is refused with the true range', async () => {
    const u = await createUser(app, 'big-number');
    const raw = (body: string) =>
      http()
        .patch(`/api/v1/users/${String(u.id)}/`)
        .set('Authorization', ADMIN_AUTH)
        .set('Content-Type', 'application/json')
        .send(body);
    // As JSON.parse reads them, these would be …808 (out of range) and …992 (one off).
    const exact = await raw(
      '{"quota_bytes": 9223372036854775807, "quota_count": 9007199254740993, "quota_bytes_policy": {"gold": 18014398509481985}}',
    );
    expect(exact.status).toBe(202);
    expect(exact.body).toMatchObject({
      quota_bytes: '9223372036854775807',
      quota_count: '9007199254740993',
      quota_bytes_policy: { gold: '18014398509481985' },
    });
    // A repeated key keeps its last value, as everywhere else.
    const repeated = await raw('{"quota_count": 1, "quota_count": 9007199254740995}');
    expect(repeated.body).toMatchObject({ quota_count: '9007199254740995' });
    const past = await raw('{"quota_bytes": 9223372036854775808}');
    expect(past.status).toBe(400);
    expect(past.body.error).toBe(
      "The 'quota_bytes' field must be null (no quota) or a whole number from 0 to 9223372036854775807.",
    );
    expect((await raw('{"quota_bytes": 92233720368547758070000}')).status).toBe(400);
    expect((await raw('{"quota_bytes": 9223372036854775807')).body.error).toBe('Request is not valid JSON.');
  });

  it('when a per-policy quota names a policy the cluster does not report, then 400 names it; known names take the cluster spelling', async () => {
    const u = await createUser(app, 'policies');
    const bad = await patch(u.id, { quota_bytes_policy: { gold: 1, bronze: 2 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(
      "The cluster 'default' reports no storage policy named 'bronze': its policies are 'gold', 'Silver'.",
    );
    const ok = await patch(u.id, {
      quota_bytes_policy: { GOLD: 1000, silver: '2000' },
      quota_count_policy: { gold: 5 },
    });
    expect(ok.status).toBe(202);
    expect(ok.body).toMatchObject({
      quota_bytes_policy: { gold: 1000, Silver: 2000 },
      quota_count_policy: { gold: 5 },
    });
    // A PATCH replaces the map whole; null (or only nulls) removes it.
    expect((await patch(u.id, { quota_bytes_policy: { gold: null } })).body).toMatchObject({
      quota_bytes_policy: null,
    });
    const notMap = await patch(u.id, { quota_count_policy: [1] });
    expect(notMap.status).toBe(400);
    expect(notMap.body.error).toMatch(
      /^The 'quota_count_policy' field must be null or an object from storage policy name to quota/,
    );
  });

  it("when the cluster's Swift is known to be 2.30, then an object-count quota is refused naming 2.34; once it is 2.34, accepted", async () => {
    const u = await createUser(app, 'older-swift');
    await putSwiftInfo(app.db, 1, { version: '2.30.1', accountQuotas: true, policies: ['gold', 'Silver'] });
    try {
      const cluster = await get('/api/v1/clusters/1/');
      expect(cluster.body.quota_support).toMatchObject({ swift_version: '2.30.1', fields: ['quota_bytes'] });
      const refused = await patch(u.id, { quota_count: 100, quota_bytes_policy: { gold: 1 } });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe(
        "The cluster's Swift 2.30.1 cannot enforce 'quota_count': object-count quotas need Swift 2.34 or later. " +
          "The cluster's Swift 2.30.1 cannot enforce 'quota_bytes_policy': byte quotas per storage policy need Swift 2.32 or later.",
      );
      // What it can enforce, and clearing anything, are accepted.
      expect((await patch(u.id, { quota_bytes: 5, quota_count: null })).status).toBe(202);
      const defaults = await http()
        .patch('/api/v1/clusters/1/')
        .set('Authorization', ADMIN_AUTH)
        .send({ default_quota_count: 10 });
      expect(defaults.status).toBe(400);
      expect(defaults.body.error).toContain("cannot enforce 'default_quota_count'");

      await putSwiftInfo(app.db, 1, { version: '2.30.1', accountQuotas: false, policies: [] });
      const none = await patch(u.id, { quota_bytes: 6 });
      expect(none.status).toBe(400);
      expect(none.body.error).toMatch(/^The cluster's Swift does not run the account_quotas middleware/);

      await putSwiftInfo(app.db, 1, { version: '2.34.1', accountQuotas: true, policies: ['gold', 'Silver'] });
      const accepted = await patch(u.id, { quota_count: 100, quota_bytes_policy: { gold: 1 } });
      expect(accepted.status).toBe(202);
      expect((await get('/api/v1/clusters/1/')).body.quota_support.fields).toEqual([
        'quota_bytes',
        'quota_bytes_policy',
        'quota_count',
        'quota_count_policy',
      ]);
    } finally {
      await app.db('cluster_swift_info').delete();
    }
  });

  it("when a cluster has default quotas, then a new user gets those it does not set itself, and the cluster's audit shows them", async () => {
    const res = await http()
      .patch('/api/v1/clusters/1/')
      .set('Authorization', ADMIN_AUTH)
      .send({ default_quota_bytes: 1048576, default_quota_bytes_policy: { silver: 4096 } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      default_quota_bytes: 1048576,
      default_quota_bytes_policy: { Silver: 4096 },
      default_quota_count: null,
    });
    try {
      expect(await createUser(app, 'defaulted')).toMatchObject({
        quota_bytes: 1048576,
        quota_bytes_policy: { Silver: 4096 },
        quota_status: 'pending',
      });
      expect(await createUser(app, 'own', { quota_bytes: 7, quota_bytes_policy: null })).toMatchObject({
        quota_bytes: 7,
        quota_bytes_policy: null,
      });
      const audit = await get('/api/v1/audit/?target_type=clusters&action=update&order_by=-id&limit=1');
      expect(audit.body.objects[0].before).toMatchObject({ default_quota_bytes: null });
      expect(audit.body.objects[0].after).toMatchObject({ default_quota_bytes: 1048576 });
    } finally {
      await http()
        .patch('/api/v1/clusters/1/')
        .set('Authorization', ADMIN_AUTH)
        .send({ default_quota_bytes: null, default_quota_bytes_policy: null });
    }
  });

  it('when users are listed by quota, then filters and ordering work, and XML and /schema/ show the fields', async () => {
    await createUser(app, 'q-small', { quota_bytes: 100 });
    await createUser(app, 'q-large', { quota_bytes: 1_000_000_000_000 });
    const over = await get('/api/v1/users/?quota_bytes__gte=100&order_by=-quota_bytes&limit=3');
    expect(over.status).toBe(200);
    const bytes = (over.body.objects as Array<{ quota_bytes: number | string }>).map((o) => BigInt(o.quota_bytes));
    expect(bytes).toEqual([...bytes].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    expect(bytes[0]).toBe(9223372036854775807n);
    const none = await get('/api/v1/users/?quota_bytes__isnull=true&user=alice');
    expect(none.body.objects.map((o: { user: string }) => o.user)).toEqual(['alice']);
    const xml = await get('/api/v1/users/?user=q-small&format=xml');
    expect(xml.text).toContain('<quota_bytes type="integer">100</quota_bytes>');
    expect(xml.text).toContain('<quota_status>pending</quota_status>');
    const schema = await get('/api/v1/users/schema/');
    expect(schema.body.fields.quota_bytes).toMatchObject({ nullable: true, readonly: false, type: 'integer' });
    expect(schema.body.fields.quota_status).toMatchObject({ nullable: true, readonly: true });
    expect(schema.body.filtering.quota_bytes).toContain('gt');
    expect(schema.body.ordering).toContain('quota_count');
    const openapi = await http().get('/api/v1/openapi.json');
    expect(openapi.body.components.schemas.users.properties.quota_bytes.type).toEqual(['integer', 'string', 'null']);
  });

  it('when a user is sent back as it was read, then its reported quota state is ignored rather than refused', async () => {
    const u = await createUser(app, 'roundtrip', { quota_bytes: 1 });
    const read = (await get(`/api/v1/users/${String(u.id)}/`)).body as Record<string, unknown>;
    const res = await patch(u.id, { ...read, quota_status: 'applied', quota_bytes: 2 });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ quota_bytes: 2, quota_status: 'pending' });
  });
});
