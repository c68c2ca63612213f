import {
  ADMIN_AUTH,
  DB_KINDS,
  PASSWORD,
  cheapHashPassword,
  createCluster,
  startTestApp,
  type TestApp,
} from '../support/harness';
import { withStatements } from '../support/statements';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** What quotas are read against: each user's latest storage sample, and a cluster's byte quotas added up. */
describe.each(DB_KINDS)('quota usage on %s', (kind) => {
  let app: TestApp;
  let clusterUri: string;
  let clusterPath: string;
  const hour = Math.floor(Date.now() / HOUR) * HOUR;
  const get = (path: string) => app.http().get(path).set('Authorization', ADMIN_AUTH);
  const makeUser = async (user: string, extra: Record<string, unknown> = {}) => {
    const res = await app
      .http()
      .post('/api/v1/users/')
      .set('Authorization', ADMIN_AUTH)
      .send({ cluster: clusterUri, user, password: PASSWORD, ...extra });
    expect(res.status).toBe(201);
    return res.body as Record<string, unknown>;
  };
  const sample = async (at: number, samples: Array<{ account: string; bytes_used: number; object_count: number }>) => {
    const res = await app
      .http()
      .post(`${clusterPath}utilization/storage/`)
      .set('Authorization', ADMIN_AUTH)
      .send({
        interval: 3600,
        sampled_at: iso(at),
        samples: samples.map((s) => ({ ...s, container_count: 1, policies: [] })),
      });
    expect(res.status).toBe(200);
  };

  beforeAll(async () => {
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
    const cluster = await createCluster(app, 'usage-east');
    clusterUri = String(cluster.resource_uri);
    clusterPath = clusterUri;
  });
  afterAll(() => app.close());

  it('when a user has storage samples, then the user shows the latest one beside its quota, in a list, a detail and XML', async () => {
    const carol = await makeUser('carol', { quota_bytes: 10_000 });
    const dave = await makeUser('dave');
    expect(carol).toMatchObject({ bytes_used: null, object_count: null, usage_sampled_at: null });
    await sample(hour - 2 * HOUR + 60_000, [{ account: 'AUTH_carol', bytes_used: 1000, object_count: 3 }]);
    await sample(hour - HOUR + 60_000, [{ account: 'AUTH_carol', bytes_used: 2500, object_count: 7 }]);
    // Another account, and carol's name in another cluster, are not carol's.
    await sample(hour - HOUR + 60_000, [{ account: 'AUTH_carolyn', bytes_used: 9, object_count: 9 }]);
    await app
      .http()
      .post('/api/v1/clusters/1/utilization/storage/')
      .set('Authorization', ADMIN_AUTH)
      .send({
        interval: 3600,
        sampled_at: iso(hour),
        samples: [{ account: 'AUTH_carol', bytes_used: 77, object_count: 77, container_count: 1, policies: [] }],
      });

    const detail = await get(`/api/v1/users/${String(carol.id)}/`);
    expect(detail.body).toMatchObject({
      quota_bytes: 10_000,
      bytes_used: 2500,
      object_count: 7,
      usage_sampled_at: iso(hour - HOUR),
    });
    const list = await get(`/api/v1/users/?cluster=${encodeURIComponent(clusterUri)}&order_by=user`);
    const shown = (list.body.objects as Array<Record<string, unknown>>).map((o) => [
      o.user,
      o.bytes_used,
      o.object_count,
      o.usage_sampled_at,
    ]);
    expect(shown).toEqual([
      ['carol', 2500, 7, iso(hour - HOUR)],
      ['dave', null, null, null],
    ]);
    // The list's JSON is written directly: the same text as the detail's.
    expect(list.text).toContain(`"bytes_used": 2500, "cluster": "${clusterUri}"`);
    const xml = await get(`/api/v1/users/${String(dave.id)}/?format=xml`);
    expect(xml.text).toContain('<bytes_used type="null"/>');
  });

  it('when a user with usage is sent back as it was read, then the usage is ignored rather than refused', async () => {
    const read = (await get(`/api/v1/users/?user=carol&cluster=${encodeURIComponent(clusterUri)}`)).body
      .objects[0] as Record<string, unknown>;
    const res = await app
      .http()
      .patch(String(read.resource_uri))
      .set('Authorization', ADMIN_AUTH)
      .send({ ...read, bytes_used: 1, quota_bytes: 20_000 });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ quota_bytes: 20_000, bytes_used: 2500 });
  });

  it('when users have byte quotas, then the cluster shows their sum, past 2^63 as a decimal string, and null when none has one', async () => {
    const empty = await createCluster(app, 'usage-empty');
    expect((await get(String(empty.resource_uri))).body.quota_bytes_total).toBeNull();
    // carol's 20 000 from above, dave none.
    expect((await get(clusterPath)).body.quota_bytes_total).toBe(20_000);
    await makeUser('erin', { quota_bytes: '9223372036854775807' });
    await makeUser('frank', { quota_bytes: 1 });
    const big = await get(clusterPath);
    expect(big.body.quota_bytes_total).toBe('9223372036854795808');
    expect(big.text).toContain('"quota_bytes_total": "9223372036854795808"');
    const listed = (await get('/api/v1/clusters/?name=usage-east')).body.objects[0] as Record<string, unknown>;
    expect(listed.quota_bytes_total).toBe('9223372036854795808');
    // Read-only: sent back, it is ignored.
    const patched = await app
      .http()
      .patch(clusterPath)
      .set('Authorization', ADMIN_AUTH)
      .send({ ...big.body, region: 'east' });
    expect(patched.status).toBe(202);
    expect(patched.body).toMatchObject({ region: 'east', quota_bytes_total: '9223372036854795808' });
  });

  it('when users have per-policy byte quotas, then the cluster shows their sums by policy, and null when none has one', async () => {
    const cluster = await createCluster(app, 'usage-policies');
    const path = String(cluster.resource_uri);
    expect((await get(path)).body.quota_bytes_policy_total).toBeNull();
    const report = await app
      .http()
      .put(`${path}devices/`)
      .set('Authorization', ADMIN_AUTH)
      .send({
        policies: [
          { index: 0, name: 'gold', default: true },
          { index: 1, name: 'silver' },
        ],
        devices: [
          { node: '10.0.0.1:6200', device: 'sdb1', policies: ['gold', 'silver'], used_bytes: 1, avail_bytes: 1 },
        ],
      });
    expect(report.status).toBe(204);
    const user = async (name: string, quotas: Record<string, unknown>) => {
      const res = await app
        .http()
        .post('/api/v1/users/')
        .set('Authorization', ADMIN_AUTH)
        .send({ cluster: path, user: name, password: PASSWORD, ...quotas });
      expect(res.status).toBe(201);
    };
    await user('pia', { quota_bytes_policy: { gold: 1000, silver: 5 } });
    await user('quinn', { quota_bytes_policy: { gold: '9223372036854775807' } });
    await user('rob', { quota_bytes: 7 });
    const shown = await get(path);
    expect(shown.body.quota_bytes_policy_total).toEqual({ gold: '9223372036854776807', silver: 5 });
    expect(shown.body.quota_bytes_total).toBe(7);
    const listed = (await get('/api/v1/clusters/?name=usage-policies')).body.objects[0] as Record<string, unknown>;
    expect(listed.quota_bytes_policy_total).toEqual({ gold: '9223372036854776807', silver: 5 });
    // Read-only: sent back, it is ignored.
    const patched = await app
      .http()
      .patch(path)
      .set('Authorization', ADMIN_AUTH)
      .send({ ...shown.body, region: 'policies' });
    expect(patched.status).toBe(202);
    expect(patched.body).toMatchObject({ region: 'policies', quota_bytes_policy_total: { silver: 5 } });
  });

  it('when a page of users or one user is read, then it is one statement with the quota state and the usage, each account found through the index', async () => {
    const carol = (await get(`/api/v1/users/?user=carol&cluster=${encodeURIComponent(clusterUri)}`)).body
      .objects[0] as Record<string, unknown>;
    for (const path of [`/api/v1/users/?cluster=${encodeURIComponent(clusterUri)}`, String(carol.resource_uri)]) {
      const seen = (
        await withStatements(app.db, async () => {
          const res = await get(path);
          expect(res.status).toBe(200);
          expect(res.text).toContain('"bytes_used": 2500');
        })
      ).filter((q) => /storage_users|quota_applications|utilization_storage/.test(q.sql));
      // The users, their quota states and their usage: one round trip, no probe of the hourly samples.
      expect(seen).toHaveLength(1);
      const [statement] = seen;
      expect(statement!.sql).toMatch(/quota_applications/);
      expect(statement!.sql).toMatch(/utilization_storage_latest/);
      expect(statement!.sql).not.toMatch(/utilization_storage_hourly/);
      // The driver's text has numbered placeholders; knex's raw takes question marks.
      const plan = (await app.db.raw(
        `EXPLAIN ${statement!.sql.replace(/\$\d+/g, '?')}`,
        statement!.bindings as never,
      )) as {
        rows: Array<Record<string, string>>;
      };
      const text = plan.rows.map((r) => Object.values(r)[0]).join('\n');
      // The account is part of the index condition (a collation mismatch would make it a filter).
      expect(text).toMatch(/utilization_storage_latest_pkey.*\n\s*Index Cond: \(.*account\)?(::text)? = /);
      expect(text).not.toMatch(/Filter: .*account/);
    }
  });

  it('when the schema and OpenAPI are read, then they declare the usage and the quota total as read-only', async () => {
    const users = await get('/api/v1/users/schema/');
    expect(users.body.fields.bytes_used).toMatchObject({ nullable: true, readonly: true, type: 'integer' });
    expect(users.body.fields.usage_sampled_at).toMatchObject({ nullable: true, readonly: true, type: 'datetime' });
    const clusters = await get('/api/v1/clusters/schema/');
    expect(clusters.body.fields.quota_bytes_total).toMatchObject({ nullable: true, readonly: true, type: 'integer' });
    expect(clusters.body.fields.quota_bytes_policy_total).toMatchObject({
      nullable: true,
      readonly: true,
      type: 'dict',
    });
    const openapi = await app.http().get('/api/v1/openapi.json');
    expect(openapi.body.components.schemas.users.properties.bytes_used.type).toEqual(['integer', 'string', 'null']);
    expect(openapi.body.components.schemas.clusters.properties.quota_bytes_total.type).toEqual([
      'integer',
      'string',
      'null',
    ]);
  });
});
