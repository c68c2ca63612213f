import { randomBytes } from 'node:crypto';
import { S3_CREDENTIAL_CHANGES_CHANNEL, MAX_S3_CREDENTIALS_PER_USER } from '@cairn/contract';
import { openS3Secret, parseS3SecretKeys, type S3SecretKeyring } from '@cairn/domain';
import { LogCapture } from '@cairn/runtime';
import { Client } from 'pg';
import { createLogger } from '../../src/deps';
import { resealAll } from '../../src/services/s3-credentials';
import {
  ADMIN_AUTH,
  DB_KINDS,
  createCluster,
  createOperator,
  createUser,
  cheapHashPassword,
  startTestApp,
  type TestApp,
} from '../support/harness';
import { withStatements } from '../support/statements';

const keyring = (): S3SecretKeyring => {
  const parsed = parseS3SecretKeys(`k1:${randomBytes(32).toString('base64')}`);
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return parsed.keyring;
};

interface Credential {
  id: string;
  access_key: string;
  secret?: string;
  user: string;
  cluster: string;
  created_at: string;
  resource_uri: string;
}

describe.each(DB_KINDS)('S3 credentials on %s', (kind) => {
  let app: TestApp;
  const log = new LogCapture();
  const ring = keyring();
  beforeAll(async () => {
    app = await startTestApp(kind, {
      s3Keyring: ring,
      log: createLogger('trace', log),
      hashPassword: cheapHashPassword,
    });
  });
  afterAll(() => app.close());

  const post = (user: unknown, auth = ADMIN_AUTH) =>
    app.http().post('/api/v1/s3_credentials/').set('Authorization', auth).send({ user });

  it('when an admin creates one for a user, then 201 with the access key and the secret, once, not cached', async () => {
    const user = await createUser(app, 's3-alice');
    const res = await post(user.resource_uri);
    expect(res.status).toBe(201);
    const body = res.body as Credential;
    expect(body).toEqual({
      id: expect.any(String),
      access_key: expect.stringMatching(/^[A-Z0-9]{20}$/),
      secret: expect.stringMatching(/^[A-Za-z0-9+/]{40}$/),
      user: user.resource_uri,
      cluster: '/api/v1/clusters/1/',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      expires_at: null,
      application_credential: null,
      resource_uri: `/api/v1/s3_credentials/${body.id}/`,
    });
    expect(res.headers.location).toBe(body.resource_uri);
    expect(res.headers['cache-control']).toBe('no-store');

    const shown = await app.http().get(body.resource_uri).set('Authorization', ADMIN_AUTH);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual({ ...body, secret: undefined });
    expect(shown.text).not.toContain(body.secret);
    const listed = await app
      .http()
      .get(`/api/v1/s3_credentials/?user=${user.id as string}`)
      .set('Authorization', ADMIN_AUTH);
    expect(listed.status).toBe(200);
    expect(listed.body.meta.total_count).toBe(1);
    expect(listed.text).not.toContain(body.secret);
  });

  it('when an expiry in the future is given, then it is stored, shown, audited and filterable; a past or malformed one is a 400 and nothing is written', async () => {
    const user = await createUser(app, 's3-expiring');
    const at = new Date(Date.now() + 3_600_000);
    const res = await app
      .http()
      .post('/api/v1/s3_credentials/')
      .set('Authorization', ADMIN_AUTH)
      .send({ user: user.resource_uri, expires_at: at.toISOString() });
    expect(res.status).toBe(201);
    const body = res.body as Credential & { expires_at: string | null };
    expect(body.expires_at).toBe(at.toISOString());
    expect((await app.http().get(body.resource_uri).set('Authorization', ADMIN_AUTH)).body.expires_at).toBe(
      at.toISOString(),
    );
    const row = await app.db('s3_credentials').where({ access_key: body.access_key }).first();
    expect(new Date(row.expires_at).getTime()).toBe(at.getTime());
    const audit = await app.db('audit_log').where({ target_type: 's3_credentials', target_id: body.id }).first();
    expect(audit.after).toMatchObject({ expires_at: at.toISOString() });
    // Never-expiring ones (null, or left out) and expiring ones tell apart in a filtered list.
    expect((await post(user.resource_uri)).status).toBe(201);
    const expiring = await app
      .http()
      .get(`/api/v1/s3_credentials/?user=${user.id as string}&expires_at__isnull=false`)
      .set('Authorization', ADMIN_AUTH);
    expect(expiring.body.objects.map((c: Credential) => c.access_key)).toEqual([body.access_key]);

    const other = await createUser(app, 's3-expiry-refused');
    for (const expires_at of ['2001-01-01T00:00:00Z', new Date(Date.now() - 1000).toISOString(), 'next tuesday', 12]) {
      const refused = await app
        .http()
        .post('/api/v1/s3_credentials/')
        .set('Authorization', ADMIN_AUTH)
        .send({ user: other.resource_uri, expires_at });
      expect([expires_at, refused.status]).toEqual([expires_at, 400]);
      expect(refused.body.error).toMatch(/'expires_at' field must be an ISO 8601 date-time in the future/);
    }
    expect(await app.db('s3_credentials').where({ storage_user_id: other.id })).toHaveLength(0);
  });

  it('when a credential is stored, then the row holds the secret sealed under the configured key, and it opens to the secret shown', async () => {
    const user = await createUser(app, 's3-sealed');
    const body = (await post(user.id)).body as Credential;
    const row = await app.db('s3_credentials').where({ access_key: body.access_key }).first();
    expect(JSON.stringify(row)).not.toContain(body.secret);
    expect(row.secret_sealed).toMatch(/^v1:k1:/);
    expect(openS3Secret(ring, body.access_key, row.secret_sealed)).toBe(body.secret);
  });

  it('when credentials are created and deleted, then the audit trail and the logs name the access key but never hold the secret', async () => {
    const user = await createUser(app, 's3-audited');
    const body = (await post(user.resource_uri)).body as Credential;
    expect((await app.http().delete(body.resource_uri).set('Authorization', ADMIN_AUTH)).status).toBe(204);
    const audit = await app.db('audit_log').where({ target_type: 's3_credentials', target_id: body.id }).orderBy('id');
    expect(audit.map((a) => a.action)).toEqual(['create', 'delete']);
    expect(audit[0].target_name).toBe(body.access_key);
    expect(audit[0].after).toMatchObject({ access_key: body.access_key, user: user.resource_uri });
    expect(JSON.stringify(audit)).not.toContain(body.secret);
    expect(log.text).toContain('/api/v1/s3_credentials/');
    expect(log.text).not.toContain(body.secret!);
  });

  it(`when a user holds ${MAX_S3_CREDENTIALS_PER_USER} credentials, then another is refused with 400 and nothing is written`, async () => {
    const user = await createUser(app, 's3-capped');
    for (let i = 0; i < MAX_S3_CREDENTIALS_PER_USER; i++) expect((await post(user.id)).status).toBe(201);
    const refused = await post(user.id);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/already has 2 S3 credentials.*delete one first/);
    expect(
      await app
        .db('s3_credentials')
        .where({ storage_user_id: user.id as string })
        .count({ n: '*' }),
    ).toEqual([{ n: kind === 'postgres' ? '2' : 2 }]);
  });

  it('when concurrent creations race for the last slot, then exactly the cap is reached', async () => {
    const user = await createUser(app, 's3-racing');
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(user.id)));
    expect(answers.filter((r) => r.status === 201)).toHaveLength(MAX_S3_CREDENTIALS_PER_USER);
    expect(answers.filter((r) => r.status === 400)).toHaveLength(6 - MAX_S3_CREDENTIALS_PER_USER);
  });

  it('when the body names no user, an unknown one or the wrong type, then 400 says what is wrong', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [undefined, /'user' field has no data/],
      ['/api/v1/users/999999/', /Could not find the provided users object/],
      ['/api/v1/clusters/1/', /Could not find the provided users object/],
      [{ id: 1 }, /must be a user resource URI/],
    ];
    for (const [user, message] of cases) {
      const res = await app
        .http()
        .post('/api/v1/s3_credentials/')
        .set('Authorization', ADMIN_AUTH)
        .send(user === undefined ? {} : { user });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(message);
    }
    const extra = await app
      .http()
      .post('/api/v1/s3_credentials/')
      .set('Authorization', ADMIN_AUTH)
      .send({ user: 1, secret: 'mine' });
    expect(extra.status).toBe(400);
  });

  it('when the user is deleted, then its credentials go with it, announced to listeners, and the access key is gone', async () => {
    const user = await createUser(app, 's3-doomed');
    const body = (await post(user.id)).body as Credential;
    let heard: Promise<string> | undefined;
    let listener: Client | undefined;
    if (kind === 'postgres') {
      listener = new Client(app.db.client.config.connection as string | object);
      await listener.connect();
      await listener.query(`LISTEN ${S3_CREDENTIAL_CHANGES_CHANNEL}`);
      heard = new Promise((resolve) => listener!.on('notification', (n) => resolve(n.payload ?? '')));
    }
    expect(
      (
        await app
          .http()
          .delete(`/api/v1/users/${user.id as string}/`)
          .set('Authorization', ADMIN_AUTH)
      ).status,
    ).toBe(204);
    expect(await app.db('s3_credentials').where({ access_key: body.access_key }).first()).toBeUndefined();
    expect((await app.http().get(body.resource_uri).set('Authorization', ADMIN_AUTH)).status).toBe(404);
    if (heard) {
      expect(JSON.parse(await heard)).toEqual({ access_key: body.access_key });
      await listener!.end();
    }
    // The trail says so: the credential's own delete record (access key, no secret), then the user's.
    const trail = await app
      .http()
      .get(`/api/v1/audit/?target_type=s3_credentials&target_id=${body.id}&action=delete`)
      .set('Authorization', ADMIN_AUTH);
    expect(trail.body.objects).toHaveLength(1);
    expect(trail.body.objects[0]).toMatchObject({
      action: 'delete',
      target_name: body.access_key,
      after: null,
      before: { access_key: body.access_key, user: `/api/v1/users/${user.id as string}/` },
    });
    expect(JSON.stringify(trail.body)).not.toContain(body.secret);
    const userTrail = await app
      .http()
      .get(`/api/v1/audit/?target_type=users&target_id=${user.id as string}&action=delete`)
      .set('Authorization', ADMIN_AUTH);
    expect(userTrail.body.objects).toHaveLength(1);
    expect(Number(userTrail.body.objects[0].id)).toBeGreaterThan(Number(trail.body.objects[0].id));
  });

  // LISTEN needs a real Postgres connection; PGlite's single connection is the app's.
  (kind === 'postgres' ? it : it.skip)(
    'when the credentials are truncated, then listeners are told to forget them all',
    async () => {
      const listener = new Client(app.db.client.config.connection as string | object);
      await listener.connect();
      await listener.query(`LISTEN ${S3_CREDENTIAL_CHANGES_CHANNEL}`);
      const heard = new Promise<string>((resolve) => listener.on('notification', (n) => resolve(n.payload ?? '')));
      await app.db.raw('TRUNCATE s3_credentials');
      expect(JSON.parse(await heard)).toEqual({ all: true });
      await listener.end();
    },
  );

  it('when a reader or an admin limited to another cluster asks, then reads are filtered and writes refused', async () => {
    const other = await createCluster(app, 's3-other');
    const user = await createUser(app, 's3-readable');
    const body = (await post(user.id)).body as Credential;
    const reader = await createOperator(app, 's3reader', 'reader');
    expect((await app.http().get(body.resource_uri).set('Authorization', reader)).status).toBe(200);
    expect((await post(user.id, reader)).status).toBe(403);
    expect((await app.http().delete(body.resource_uri).set('Authorization', reader)).status).toBe(403);

    const limited = await createOperator(app, 's3limited', 'admin', [other.resource_uri as string]);
    expect((await app.http().get(body.resource_uri).set('Authorization', limited)).status).toBe(404);
    expect((await app.http().delete(body.resource_uri).set('Authorization', limited)).status).toBe(404);
    expect((await post(user.id, limited)).status).toBe(400);
    const list = await app.http().get('/api/v1/s3_credentials/').set('Authorization', limited);
    expect(list.body.meta.total_count).toBe(0);
  });

  it("when the list is filtered by the owner's name or an access key, or asked as XML, then it answers like the other resources", async () => {
    const user = await createUser(app, 's3-filtered');
    const body = (await post(user.id)).body as Credential;
    const byName = await app
      .http()
      .get('/api/v1/s3_credentials/?user__user=s3-filtered')
      .set('Authorization', ADMIN_AUTH);
    expect(byName.body.objects.map((c: Credential) => c.access_key)).toEqual([body.access_key]);
    const byKey = await app
      .http()
      .get(`/api/v1/s3_credentials/?access_key=${body.access_key}`)
      .set('Authorization', ADMIN_AUTH);
    expect(byKey.body.meta.total_count).toBe(1);
    const xml = await app.http().get(`${body.resource_uri}?format=xml`).set('Authorization', ADMIN_AUTH);
    expect(xml.status).toBe(200);
    expect(xml.text).toContain(`<access_key>${body.access_key}</access_key>`);
    const wide = await app.http().get('/api/v1/s3_credentials/?user__cluster=1').set('Authorization', ADMIN_AUTH);
    expect(wide.status).toBe(400);
  });

  it("when the list is filtered on its owners' ids over many users, then the SQL joins them through a subquery, never a list of ids, and answers right", async () => {
    await app.db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash) SELECT 1, 'many-' || g, 'x' FROM generate_series(1, 5000) AS g`,
    );
    await app.db.raw(
      `INSERT INTO s3_credentials (storage_user_id, access_key, secret_sealed)
       SELECT id, 'MANY' || lpad(id::text, 16, '0'), 'x' FROM storage_users WHERE username LIKE 'many-%' AND id % 40 = 0`,
    );
    const naive = async (min: number) =>
      (
        (await app.db.raw(
          'SELECT s.id FROM s3_credentials s JOIN storage_users u ON u.id = s.storage_user_id WHERE u.id >= ? ORDER BY s.id',
          [min],
        )) as { rows: Array<{ id: string | number }> }
      ).rows.map((r) => String(r.id));
    const [{ mid }] = (
      (await app.db.raw(
        "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY id) AS mid FROM storage_users WHERE username LIKE 'many-%'",
      )) as { rows: Array<{ mid: string | number }> }
    ).rows as [{ mid: string | number }];
    const statements = await withStatements(app.db, async () => {
      for (const min of [0, Number(mid)]) {
        const expected = await naive(min);
        expect(expected.length).toBeGreaterThan(50);
        const res = await app
          .http()
          .get(`/api/v1/s3_credentials/?user__id__gte=${min}&limit=0&order_by=id`)
          .set('Authorization', ADMIN_AUTH);
        expect(res.status).toBe(200);
        expect({ min, total: res.body.meta.total_count, ids: res.body.objects.map((c: Credential) => c.id) }).toEqual({
          min,
          total: expected.length,
          ids: expected,
        });
        const page = await app
          .http()
          .get(`/api/v1/s3_credentials/?user__id__gte=${min}&limit=7&offset=11&order_by=-id`)
          .set('Authorization', ADMIN_AUTH);
        expect(page.body.objects.map((c: Credential) => c.id)).toEqual([...expected].reverse().slice(11, 18));
      }
    });
    // No statement carries the owners' ids, 5,000 users or not: a subquery of storage_users does the work.
    expect(Math.max(...statements.map((s) => s.bindings.length))).toBeLessThan(40);
    expect(
      statements.some((s) =>
        /"s"\."storage_user_id" in \(select "u"\."id" from "storage_users" as "u" where "u"\."id" >= (\?|\$\d+)\)/i.test(
          s.sql,
        ),
      ),
    ).toBe(true);
  });

  it.each([
    ['user__user=%00', "The 'user__user' filter takes text without control characters."],
    ['access_key=AKIA%0A', "The 'access_key' filter takes text without control characters."],
    ['user__user__in=a,%7F', "The 'user__user__in' filter takes text without control characters."],
  ])('when the list is filtered with %s, then 400 names the filter and what it takes', async (query, error) => {
    const res = await app.http().get(`/api/v1/s3_credentials/?${query}`).set('Authorization', ADMIN_AUTH);
    expect([res.status, res.body]).toEqual([400, { error }]);
  });
});

describe('S3 credentials without CAIRN_S3_SECRET_KEYS', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp('postgres', { hashPassword: cheapHashPassword });
  });
  afterAll(() => app.close());

  it('when one is asked for, then 503 says what to configure and nothing is stored', async () => {
    const user = await createUser(app, 's3-unconfigured');
    const res = await app
      .http()
      .post('/api/v1/s3_credentials/')
      .set('Authorization', ADMIN_AUTH)
      .send({ user: user.id });
    expect(res.status).toBe(503);
    expect(res.body.error).toMatch(/CAIRN_S3_SECRET_KEYS/);
    expect(await app.db('s3_credentials').count({ n: '*' })).toEqual([{ n: '0' }]);
  });
});

describe('S3 key rotation (resealAll) on postgres', () => {
  let app: TestApp;
  const k1 = randomBytes(32).toString('base64');
  const k2 = randomBytes(32).toString('base64');
  const ring = (spec: string, current?: string): S3SecretKeyring => {
    const parsed = parseS3SecretKeys(spec, current);
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    return parsed.keyring;
  };
  beforeAll(async () => {
    app = await startTestApp('postgres', { s3Keyring: ring(`k1:${k1}`), hashPassword: cheapHashPassword });
  });
  afterAll(() => app.close());

  it('when a new key becomes current, then reseal moves every secret under it, the secrets unchanged, and a second run has nothing to do', async () => {
    const secrets = new Map<string, string>();
    for (const name of ['rot-a', 'rot-b', 'rot-c']) {
      const user = await createUser(app, name);
      const body = (
        await app.http().post('/api/v1/s3_credentials/').set('Authorization', ADMIN_AUTH).send({ user: user.id })
      ).body as Credential;
      secrets.set(body.access_key, body.secret!);
    }
    // One credential whose key was removed too early: left alone and reported, never lost.
    const stray = await createUser(app, 'rot-stray');
    await app.db('s3_credentials').insert({
      storage_user_id: stray.id,
      access_key: 'STRAY000000000000000',
      secret_sealed: 'v1:gone:AAAA:AAAA:AAAA',
    });

    const rotated = ring(`k1:${k1},k2:${k2}`, 'k2');
    const batches: number[] = [];
    const first = await resealAll(app.db, rotated, 2, (p) => batches.push(p.checked));
    expect(first).toEqual({ checked: 4, resealed: 3, unopenable: ['STRAY000000000000000'] });
    expect(batches).toEqual([2, 4]);
    const rows = await app.db('s3_credentials').whereIn('access_key', [...secrets.keys()]);
    for (const row of rows) {
      expect(row.secret_sealed).toMatch(/^v1:k2:/);
      // k1 can go now: k2 alone opens every resealed secret.
      expect(openS3Secret(ring(`k2:${k2}`), row.access_key, row.secret_sealed)).toBe(secrets.get(row.access_key));
    }
    expect(await resealAll(app.db, rotated)).toEqual({ checked: 4, resealed: 0, unopenable: ['STRAY000000000000000'] });
  });
});
