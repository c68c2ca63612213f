import {
  ADMIN,
  ADMIN_AUTH,
  DB_KINDS,
  createCluster,
  createOperator,
  createUser,
  cheapHashPassword,
  startTestApp,
  type TestApp,
} from '../support/harness';

describe.each(DB_KINDS)('operators and API keys on %s', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind, { hashPassword: cheapHashPassword });
  });
  afterAll(() => app.close());

  describe('authentication', () => {
    it.each([
      ['no header', undefined],
      ['a wrong key', 'ApiKey root:wrong-key-wrong-key-wrong-key-wrong'],
      ['an unknown operator', 'ApiKey nobody:test-admin-key-0123456789abcdefghijklmnop'],
      ['a malformed header', 'Bearer abc'],
      ['a header without a colon', 'ApiKey root'],
    ])('when the request has %s, then 401 with a JSON error', async (_what, header) => {
      const req = app.http().get('/api/v1/users/');
      if (header) req.set('Authorization', header);
      const res = await req;
      expect(res.status).toBe(401);
      expect(res.body.error).toBeTruthy();
      expect(res.headers['www-authenticate']).toBe('ApiKey');
    });

    it('when the key is in the query string, tastypie style, then 401 saying to send it in the header', async () => {
      const res = await app.http().get(`/api/v1/users/?username=${ADMIN.name}&api_key=${ADMIN.key}`);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({
        error: 'API keys are not accepted in the query string; send "Authorization: ApiKey <operator>:<key>" instead.',
      });
      expect(res.headers['www-authenticate']).toBe('ApiKey');
      // With a header, the query keys are ignored and the header decides.
      expect(
        (await app.http().get('/api/v1/users/?username=x&api_key=y').set('Authorization', ADMIN_AUTH)).status,
      ).toBe(200);
      expect(
        (await app.http().get('/api/v1/users/?username=root').set('Authorization', 'ApiKey root:wrong')).body.error,
      ).toBe('Invalid operator name or API key.');
    });

    it('when the scheme word has any case, then the key is accepted', async () => {
      for (const scheme of ['apikey', 'APIKEY', 'ApiKey']) {
        const res = await app
          .http()
          .get('/api/v1/clusters/')
          .set('Authorization', ADMIN_AUTH.replace('ApiKey', scheme));
        expect(res.status).toBe(200);
      }
    });

    it('when the key is stored, then only its hash is in the database', async () => {
      const rows = await app.db('api_keys').select('key_hash');
      for (const r of rows) expect(Buffer.from(r.key_hash).toString('utf8')).not.toContain('test-admin-key');
    });
  });

  describe('roles', () => {
    it('when a reader or a limited admin reads operators or the audit trail, then 403 says only an admin with access to every cluster may', async () => {
      const reader = await createOperator(app, 'reader-ro', 'reader');
      const limited = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .send({ name: 'limited-ro', role: 'admin', clusters: [1] });
      const limitedAuth = `ApiKey limited-ro:${limited.body.api_key as string}`;
      for (const [path, what] of [
        ['/api/v1/operators/', 'the operators'],
        [`/api/v1/operators/${limited.body.id as string}/keys/`, 'the operators'],
        ['/api/v1/audit/', 'the audit trail'],
      ] as const) {
        const asReader = await app.http().get(path).set('Authorization', reader);
        expect([asReader.status, asReader.body.error]).toEqual([
          403,
          `Operator 'reader-ro' is a reader; only an admin with access to every cluster may read ${what}.`,
        ]);
        const asLimited = await app.http().get(path).set('Authorization', limitedAuth);
        expect([asLimited.status, asLimited.body.error]).toEqual([
          403,
          `Operator 'limited-ro' is limited to some clusters; only an admin with access to every cluster may read ${what}.`,
        ]);
      }
    });

    it('when a reader reads, then 200; when it writes, then 403 and nothing changes', async () => {
      const reader = await createOperator(app, 'reader1', 'reader');
      expect((await app.http().get('/api/v1/users/').set('Authorization', reader)).status).toBe(200);
      const post = await app
        .http()
        .post('/api/v1/users/')
        .set('Authorization', reader)
        .send({ cluster: 1, user: 'x', password: 'x'.repeat(20) });
      expect(post.status).toBe(403);
      expect(post.body.error).toBe("Operator 'reader1' has the reader role and may only read.");
      const user = await createUser(app, 'victim');
      expect(
        (await app.http().patch(`/api/v1/users/${user.id}/`).set('Authorization', reader).send({ enabled: false }))
          .status,
      ).toBe(403);
      expect((await app.http().delete(`/api/v1/users/${user.id}`).set('Authorization', reader)).status).toBe(403);
      expect((await app.http().post('/api/v1/clusters/').set('Authorization', reader).send({})).status).toBe(403);
      expect((await app.http().get('/api/v1/operators/').set('Authorization', reader)).status).toBe(403);
      const row = await app
        .db('storage_users')
        .where({ id: user.id as string })
        .first();
      expect(row.enabled).toBe(true);
    });

    it('when an admin is limited to one cluster, then it sees and changes only that cluster', async () => {
      const mine = await createCluster(app, 'mine');
      const limited = await createOperator(app, 'limited', 'admin', [mine.resource_uri as string]);
      const elsewhere = await createUser(app, 'elsewhere');
      const post = await app
        .http()
        .post('/api/v1/users/')
        .set('Authorization', limited)
        .send({ cluster: mine.resource_uri, user: 'local', password: 'y'.repeat(20) });
      expect(post.status).toBe(201);
      const list = await app.http().get('/api/v1/users/?limit=0').set('Authorization', limited);
      expect(list.body.objects.map((o: { user: string }) => o.user)).toEqual(['local']);
      expect((await app.http().get(`/api/v1/users/${elsewhere.id}/`).set('Authorization', limited)).status).toBe(404);
      expect((await app.http().delete(`/api/v1/users/${elsewhere.id}/`).set('Authorization', limited)).status).toBe(
        404,
      );
      const foreign = await app
        .http()
        .post('/api/v1/users/')
        .set('Authorization', limited)
        .send({ cluster: 1, user: 'sneaky', password: 'y'.repeat(20) });
      expect(foreign.status).toBe(400);
      const clusters = await app.http().get('/api/v1/clusters/').set('Authorization', limited);
      expect(clusters.body.objects.map((c: { name: string }) => c.name)).toEqual(['mine']);
      expect((await app.http().post('/api/v1/clusters/').set('Authorization', limited).send({})).status).toBe(403);
    });
  });

  describe('managing operators and keys', () => {
    it('when an operator is created, then its key is shown once and works; listing never shows keys', async () => {
      const res = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .send({ name: 'ops-bot', role: 'reader' });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ name: 'ops-bot', role: 'reader', clusters: [] });
      expect(res.body.api_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(res.headers.location).toBe(res.body.resource_uri);
      // The only answer with the key: no cache may keep it.
      expect(res.headers['cache-control']).toBe('no-store');
      expect(
        (await app.http().get('/api/v1/clusters/').set('Authorization', `ApiKey ops-bot:${res.body.api_key}`)).status,
      ).toBe(200);
      const detail = await app.http().get(res.body.resource_uri).set('Authorization', ADMIN_AUTH);
      expect(detail.body).not.toHaveProperty('api_key');
      const keys = await app.http().get(`${res.body.resource_uri}keys/`).set('Authorization', ADMIN_AUTH);
      expect(keys.body.objects).toHaveLength(1);
      expect(keys.body.objects[0]).not.toHaveProperty('key');
    });

    it('when a second key is issued and the first revoked, then only the second works', async () => {
      const op = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .send({ name: 'rotator', role: 'admin' });
      const first = `ApiKey rotator:${op.body.api_key}`;
      const issued = await app.http().post(`${op.body.resource_uri}keys/`).set('Authorization', ADMIN_AUTH).send({});
      expect(issued.status).toBe(201);
      expect(issued.headers['cache-control']).toBe('no-store');
      const second = `ApiKey rotator:${issued.body.key}`;
      const keys = await app.http().get(`${op.body.resource_uri}keys/`).set('Authorization', ADMIN_AUTH);
      const firstId = keys.body.objects[0].id;
      expect(
        (await app.http().delete(`${op.body.resource_uri}keys/${firstId}/`).set('Authorization', ADMIN_AUTH)).status,
      ).toBe(204);
      expect((await app.http().get('/api/v1/clusters/').set('Authorization', first)).status).toBe(401);
      expect((await app.http().get('/api/v1/clusters/').set('Authorization', second)).status).toBe(200);
    });

    it('when an operator has more keys than a page, then limit and offset page them and meta tells the truth', async () => {
      const op = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .send({ name: 'many-keys', role: 'reader' });
      const keysUri = `${op.body.resource_uri}keys/`;
      for (let i = 0; i < 6; i++)
        expect((await app.http().post(keysUri).set('Authorization', ADMIN_AUTH)).status).toBe(201);
      const all = await app.http().get(keysUri).set('Authorization', ADMIN_AUTH);
      expect(all.body.meta).toEqual({ limit: 20, next: null, offset: 0, previous: null, total_count: 7 });
      const ids = all.body.objects.map((k: { id: string }) => k.id);
      expect(ids).toHaveLength(7);

      const page = await app.http().get(`${keysUri}?limit=1&offset=5`).set('Authorization', ADMIN_AUTH);
      expect(page.status).toBe(200);
      expect(page.body.meta).toEqual({
        limit: 1,
        next: `${keysUri}?limit=1&offset=6`,
        offset: 5,
        previous: `${keysUri}?limit=1&offset=4`,
        total_count: 7,
      });
      expect(page.body.objects.map((k: { id: string }) => k.id)).toEqual([ids[5]]);

      // Following next from the first page visits every key once.
      const seen: string[] = [];
      for (let next: string | null = `${keysUri}?limit=3`; next;) {
        const body: { meta: { next: string | null }; objects: Array<{ id: string }> } = (
          await app.http().get(next).set('Authorization', ADMIN_AUTH)
        ).body;
        seen.push(...body.objects.map((k) => k.id));
        next = body.meta.next;
      }
      expect(seen).toEqual(ids);

      const past = await app.http().get(`${keysUri}?offset=50`).set('Authorization', ADMIN_AUTH);
      expect(past.body).toEqual({
        meta: { limit: 20, next: null, offset: 50, previous: `${keysUri}?limit=20&offset=30`, total_count: 7 },
        objects: [],
      });
      expect((await app.http().get(`${keysUri}?limit=abc`).set('Authorization', ADMIN_AUTH)).body.error).toBe(
        "Invalid limit 'abc' provided. Please provide a positive integer.",
      );
    });

    it('when an operator is demoted or deleted, then its rights change at once', async () => {
      const op = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .send({ name: 'temp', role: 'admin' });
      const auth = `ApiKey temp:${op.body.api_key}`;
      const patched = await app
        .http()
        .patch(op.body.resource_uri)
        .set('Authorization', ADMIN_AUTH)
        .send({ role: 'reader' });
      expect(patched.status).toBe(202);
      expect(patched.body.role).toBe('reader');
      expect((await app.http().post('/api/v1/clusters/').set('Authorization', auth).send({})).status).toBe(403);
      expect((await app.http().delete(op.body.resource_uri).set('Authorization', ADMIN_AUTH)).status).toBe(204);
      expect((await app.http().get('/api/v1/clusters/').set('Authorization', auth)).status).toBe(401);
    });

    it('when an operator is sent back as read with its role changed, then 202; a changed name is refused', async () => {
      const op = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .send({ name: 'roundtrip', role: 'admin', clusters: ['/api/v1/clusters/1/'] });
      const read = await app.http().get(op.body.resource_uri).set('Authorization', ADMIN_AUTH);
      const patched = await app
        .http()
        .patch(op.body.resource_uri)
        .set('Authorization', ADMIN_AUTH)
        .send({ ...read.body, role: 'reader' });
      expect(patched.status).toBe(202);
      expect(patched.body).toEqual({ ...read.body, role: 'reader' });
      const renamed = await app
        .http()
        .patch(op.body.resource_uri)
        .set('Authorization', ADMIN_AUTH)
        .send({ ...read.body, name: 'other' });
      expect(renamed.status).toBe(400);
      expect(renamed.body.error).toBe("The 'name' field is read-only and cannot be changed.");
      expect((await app.http().get(op.body.resource_uri).set('Authorization', ADMIN_AUTH)).body.role).toBe('reader');
    });

    it('when the last global admin would be removed, then 400 and it stays', async () => {
      const list = await app.http().get('/api/v1/operators/?role=admin&limit=0').set('Authorization', ADMIN_AUTH);
      // Leave only root as a global admin, then try to delete it.
      for (const o of list.body.objects as Array<{ name: string; clusters: string[]; resource_uri: string }>) {
        if (o.name !== 'root' && o.clusters.length === 0)
          await app.http().delete(o.resource_uri).set('Authorization', ADMIN_AUTH);
      }
      const root = (list.body.objects as Array<{ name: string; resource_uri: string }>).find((o) => o.name === 'root')!;
      const res = await app.http().delete(root.resource_uri).set('Authorization', ADMIN_AUTH);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/last admin/);
      expect((await app.http().get('/api/v1/clusters/').set('Authorization', ADMIN_AUTH)).status).toBe(200);
    });

    it('when the last key of the last global admin would be revoked, then 400 and the key still works; with a second key, 204', async () => {
      const list = await app.http().get('/api/v1/operators/?role=admin&limit=0').set('Authorization', ADMIN_AUTH);
      for (const o of list.body.objects as Array<{ name: string; clusters: string[]; resource_uri: string }>) {
        if (o.name !== 'root' && o.clusters.length === 0)
          await app.http().delete(o.resource_uri).set('Authorization', ADMIN_AUTH);
      }
      const root = (list.body.objects as Array<{ name: string; resource_uri: string }>).find((o) => o.name === 'root')!;
      // An admin limited to no cluster but holding no key cannot sign in, so it does not count.
      const keyless = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .send({ name: 'keyless', role: 'admin' });
      const keys = await app.http().get(`${keyless.body.resource_uri}keys/`).set('Authorization', ADMIN_AUTH);
      for (const k of keys.body.objects as Array<{ resource_uri: string }>) {
        expect((await app.http().delete(k.resource_uri).set('Authorization', ADMIN_AUTH)).status).toBe(204);
      }
      const rootKeys = await app.http().get(`${root.resource_uri}keys/`).set('Authorization', ADMIN_AUTH);
      expect(rootKeys.body.objects).toHaveLength(1);
      const only = rootKeys.body.objects[0].resource_uri as string;
      const refused = await app.http().delete(only).set('Authorization', ADMIN_AUTH);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe(
        'This is the last API key of the last admin operator with access to every cluster; add another key (POST /api/v1/operators/<id>/keys/) first.',
      );
      expect((await app.http().get('/api/v1/clusters/').set('Authorization', ADMIN_AUTH)).status).toBe(200);
      // Deleting root is refused too: the keyless admin could not take over.
      expect((await app.http().delete(root.resource_uri).set('Authorization', ADMIN_AUTH)).status).toBe(400);

      const added = await app.http().post(`${root.resource_uri}keys/`).set('Authorization', ADMIN_AUTH);
      expect(added.status).toBe(201);
      // Two keys: either may go (the one this suite signs in with stays).
      expect((await app.http().delete(added.body.resource_uri).set('Authorization', ADMIN_AUTH)).status).toBe(204);
      expect(
        (await app.http().get('/api/v1/clusters/').set('Authorization', `ApiKey root:${added.body.api_key}`)).status,
      ).toBe(401);
      expect((await app.http().delete(keyless.body.resource_uri).set('Authorization', ADMIN_AUTH)).status).toBe(204);
    });

    it('when a form body gives clusters once, then it is a list of one cluster, on create and on PATCH', async () => {
      const second = await createCluster(app, 'form-second');
      const created = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .type('form')
        .send('name=form-one&role=reader&clusters=1');
      expect(created.status).toBe(201);
      expect(created.body.clusters).toEqual(['/api/v1/clusters/1/']);
      const patched = await app
        .http()
        .patch(created.body.resource_uri)
        .set('Authorization', ADMIN_AUTH)
        .type('form')
        .send(`clusters=${encodeURIComponent(second.resource_uri as string)}`);
      expect(patched.status).toBe(202);
      expect(patched.body.clusters).toEqual([second.resource_uri]);
      const both = await app
        .http()
        .patch(created.body.resource_uri)
        .set('Authorization', ADMIN_AUTH)
        .type('form')
        .send(`clusters=1&clusters=${second.id}`);
      expect(both.body.clusters).toEqual(['/api/v1/clusters/1/', second.resource_uri]);
    });

    it('when an operator name is taken or invalid, then 400', async () => {
      const dup = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .send({ name: 'root', role: 'admin' });
      expect(dup.status).toBe(400);
      expect(dup.body.error).toBe("An operator named 'root' already exists.");
      const bad = await app
        .http()
        .post('/api/v1/operators/')
        .set('Authorization', ADMIN_AUTH)
        .send({ name: 'a:b', role: 'boss' });
      expect(bad.status).toBe(400);
      expect(bad.body.error).toContain("'role' field must be one of: admin, reader");
    });
  });
});
