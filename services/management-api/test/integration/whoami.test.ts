import { ADMIN, ADMIN_AUTH, createCluster, createOperator, startTestApp, type TestApp } from '../support/harness';

describe('GET /api/v1/whoami/', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp('postgres');
  });
  afterAll(() => app.close());

  it('when an admin asks, then it sees its own name, role and no cluster limit', async () => {
    const res = await app.http().get('/api/v1/whoami/').set('Authorization', ADMIN_AUTH);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      clusters: [],
      id: expect.any(Number),
      key_uri: expect.stringMatching(/^\/api\/v1\/operators\/\d+\/keys\/\d+\/$/),
      name: ADMIN.name,
      resource_uri: expect.stringMatching(/^\/api\/v1\/operators\/\d+\/$/),
      role: 'admin',
    });
    expect(res.text).not.toContain(ADMIN.key);
  });

  it('when an operator has two keys, then key_uri names the one the request used, and revoking it there stops exactly that key', async () => {
    const first = await createOperator(app, 'two-keys', 'reader');
    const me = await app.http().get('/api/v1/whoami/').set('Authorization', first);
    const added = await app.http().post(`/api/v1/operators/${me.body.id}/keys/`).set('Authorization', ADMIN_AUTH);
    expect(added.status).toBe(201);
    const second = `ApiKey two-keys:${added.body.key as string}`;
    const viaSecond = await app.http().get('/api/v1/whoami/').set('Authorization', second);
    expect(viaSecond.body.key_uri).toBe(added.body.resource_uri);
    expect(me.body.key_uri).not.toBe(added.body.resource_uri);
    expect(me.body.key_uri).toMatch(new RegExp(`^/api/v1/operators/${me.body.id}/keys/\\d+/$`));
    expect((await app.http().delete(me.body.key_uri).set('Authorization', ADMIN_AUTH)).status).toBe(204);
    expect((await app.http().get('/api/v1/whoami/').set('Authorization', first)).status).toBe(401);
    expect((await app.http().get('/api/v1/whoami/').set('Authorization', second)).body.key_uri).toBe(
      added.body.resource_uri,
    );
  });

  it('when a reader limited to a cluster asks, then it sees its role and limit (it may not read /operators/)', async () => {
    const east = await createCluster(app, 'east-whoami');
    const auth = await createOperator(app, 'watcher', 'reader', [east.resource_uri as string]);
    const res = await app.http().get('/api/v1/whoami/').set('Authorization', auth);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'watcher', role: 'reader', clusters: [east.resource_uri] });
    expect(res.body).not.toHaveProperty('api_key');
    expect((await app.http().get('/api/v1/operators/').set('Authorization', auth)).status).toBe(403);
  });

  it('when the key is wrong or missing, then 401; when the method is not GET, then 405', async () => {
    expect((await app.http().get('/api/v1/whoami/')).status).toBe(401);
    expect(
      (await app.http().get('/api/v1/whoami/').set('Authorization', `ApiKey ${ADMIN.name}:wrong-key`)).status,
    ).toBe(401);
    const post = await app.http().post('/api/v1/whoami/').set('Authorization', ADMIN_AUTH);
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET');
  });
});
