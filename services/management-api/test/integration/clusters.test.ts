import { ADMIN_AUTH, DB_KINDS, countRows, createUser, startTestApp, type TestApp } from '../support/harness';

describe.each(DB_KINDS)('clusters on %s', (kind) => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp(kind);
  });
  afterAll(() => app.close());
  const as = (method: 'get' | 'post' | 'patch' | 'delete', path: string) =>
    app.http()[method](path).set('Authorization', ADMIN_AUTH);

  it('when listing, then the bootstrap default cluster is there with its integer id', async () => {
    const res = await as('get', '/api/v1/clusters/');
    expect(res.status).toBe(200);
    expect(res.body.objects[0]).toMatchObject({
      id: 1,
      name: 'default',
      resource_uri: '/api/v1/clusters/1/',
      region: 'RegionOne',
    });
    expect(res.body.objects[0].uuid).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('when an admin creates a cluster, then 201, Location, and a generated uuid', async () => {
    const res = await as('post', '/api/v1/clusters/').send({
      name: 'east',
      auth_url: 'https://east.example.com/auth',
      storage_url: 'https://swift-east.example.com/v1',
    });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/api/v1/clusters/${res.body.id}/`);
    expect(res.body).toMatchObject({
      name: 'east',
      region: 'RegionOne',
      storage_url: 'https://swift-east.example.com/v1',
    });
    const detail = await as('get', res.headers.location as string);
    expect(detail.body).toEqual(res.body);
  });

  it('when a cluster is created with a given uuid, then it is kept', async () => {
    const uuid = '3f0c4a4e-2a7e-4d55-9a3b-1f2e3d4c5b6a';
    const res = await as('post', '/api/v1/clusters/').send({
      name: 'west',
      uuid,
      auth_url: 'https://w.example.com/auth',
      storage_url: 'https://w.example.com/v1',
      region: 'RegionTwo',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ uuid, region: 'RegionTwo' });
    const dup = await as('post', '/api/v1/clusters/').send({
      name: 'west2',
      uuid,
      auth_url: 'https://w.example.com/auth',
      storage_url: 'https://w.example.com/v1',
    });
    expect(dup.status).toBe(400);
    expect(dup.body.error).toBe(`A cluster with uuid '${uuid}' already exists.`);
  });

  it('when the name is taken or the URL is not http(s), then 400 explains', async () => {
    const dup = await as('post', '/api/v1/clusters/').send({
      name: 'default',
      auth_url: 'https://x/auth',
      storage_url: 'https://x/v1',
    });
    expect(dup.status).toBe(400);
    expect(dup.body.error).toBe("A cluster named 'default' already exists.");
    const bad = await as('post', '/api/v1/clusters/').send({
      name: 'ftp',
      auth_url: 'ftp://x/auth',
      storage_url: 'https://x/v1',
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^The 'auth_url' field must be an http:\/\/ or https:\/\/ URL .*\.$/);
  });

  it('when a cluster URL holds shell syntax, a password or a space, then 400 with a sentence naming the field, and nothing is stored or changed', async () => {
    const before = await countRows(app.db, 'clusters');
    for (const [field, url] of [
      ['auth_url', 'https://auth.example.com/auth$(id)'],
      ['auth_url', 'https://auth.example.com/auth`id`'],
      ['storage_url', 'https://swift.example.com/v1;id'],
      ['storage_url', 'https://ops:secret@swift.example.com/v1'],
      ['auth_url', 'https://auth.example.com/a b'],
    ] as const) {
      const body = {
        name: 'shelly',
        auth_url: 'https://auth.example.com/auth',
        storage_url: 'https://swift.example.com/v1',
        [field]: url,
      };
      const res = await as('post', '/api/v1/clusters/').send(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(
        new RegExp(`^The '${field}' field must be an http:// or https:// URL .*shell characters.*\\.$`),
      );
      expect(res.body.error).not.toContain('secret');
      const patched = await as('patch', '/api/v1/clusters/1/').send({ [field]: url });
      expect(patched.status).toBe(400);
    }
    expect(await countRows(app.db, 'clusters')).toBe(before);
    const one = await as('get', '/api/v1/clusters/1/');
    expect(one.body).toMatchObject({ auth_url: 'http://127.0.0.1:5000/auth', storage_url: 'http://127.0.0.1:8080/v1' });
  });

  it('when a cluster row already holds a URL the API would refuse (written by SQL), then it is still listed and shown as stored, and other fields can be changed', async () => {
    const bad = 'https://auth.example.com/auth$(id)';
    const [row] = (await app
      .db('clusters')
      .insert({
        name: 'legacy-url',
        uuid: '6b1c2d3e-4f50-4a61-8b72-9c8d7e6f5a4b',
        auth_url: bad,
        storage_url: 'https://swift.example.com/v1;id',
      })
      .returning('id')) as Array<{ id: number }>;
    const list = await as('get', '/api/v1/clusters/?limit=0');
    expect(list.status).toBe(200);
    expect(list.body.objects).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'legacy-url', auth_url: bad })]),
    );
    const shown = await as('get', `/api/v1/clusters/${row!.id}/`);
    expect(shown.status).toBe(200);
    expect(shown.body).toMatchObject({ auth_url: bad, storage_url: 'https://swift.example.com/v1;id' });
    const renamed = await as('patch', `/api/v1/clusters/${row!.id}/`).send({ region: 'Legacy' });
    expect(renamed.status).toBe(202);
    const fixed = await as('patch', `/api/v1/clusters/${row!.id}/`).send({
      auth_url: 'https://auth.example.com/auth',
      storage_url: 'https://swift.example.com/v1',
    });
    expect(fixed.status).toBe(202);
  });

  it('when patched, then 202 with the change; uuid and id are read-only', async () => {
    const created = await as('post', '/api/v1/clusters/').send({
      name: 'north',
      auth_url: 'https://n/auth',
      storage_url: 'https://n/v1',
    });
    const res = await as('patch', `/api/v1/clusters/${created.body.id}/`).send({
      storage_url: 'https://n2/v1',
      region: 'North',
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ storage_url: 'https://n2/v1', region: 'North', name: 'north' });
    const ro = await as('patch', `/api/v1/clusters/${created.body.id}/`).send({
      uuid: '3f0c4a4e-2a7e-4d55-9a3b-1f2e3d4c5b6b',
    });
    expect(ro.status).toBe(400);
    expect(ro.body.error).toBe("The 'uuid' field is read-only and cannot be changed.");
  });

  it('when a cluster is sent back as read with one field changed, then 202; a changed id is refused', async () => {
    const created = await as('post', '/api/v1/clusters/').send({
      name: 'roundtrip',
      auth_url: 'https://r/auth',
      storage_url: 'https://r/v1',
    });
    const read = await as('get', `/api/v1/clusters/${created.body.id}/`);
    const res = await as('patch', `/api/v1/clusters/${created.body.id}/`).send({
      ...read.body,
      uuid: String(read.body.uuid).toUpperCase(),
      region: 'West',
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ ...read.body, region: 'West' });
    const moved = await as('patch', `/api/v1/clusters/${created.body.id}/`).send({
      ...read.body,
      id: Number(created.body.id) + 1000,
    });
    expect(moved.status).toBe(400);
    expect(moved.body.error).toBe("The 'id' field is read-only and cannot be changed.");
  });

  it('when a cluster has users, then DELETE is refused with 400 saying why; once empty, 204', async () => {
    const created = await as('post', '/api/v1/clusters/').send({
      name: 'south',
      auth_url: 'https://s/auth',
      storage_url: 'https://s/v1',
    });
    const user = await createUser(app, 'southerner', { cluster: created.body.resource_uri });
    const refused = await as('delete', `/api/v1/clusters/${created.body.id}/`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(
      'The cluster still has 1 storage user(s); delete them before deleting the cluster.',
    );
    expect((await as('delete', `/api/v1/users/${user.id}/`)).status).toBe(204);
    expect((await as('delete', `/api/v1/clusters/${created.body.id}/`)).status).toBe(204);
    expect((await as('get', `/api/v1/clusters/${created.body.id}/`)).status).toBe(404);
  });

  it('when operators are limited to a cluster, then DELETE is refused naming them, and they stay limited', async () => {
    const temp = await as('post', '/api/v1/clusters/').send({
      name: 'temp',
      auth_url: 'https://t/auth',
      storage_url: 'https://t/v1',
    });
    const other = await as('post', '/api/v1/clusters/').send({
      name: 'temp-other',
      auth_url: 'https://to/auth',
      storage_url: 'https://to/v1',
    });
    const only = await as('post', '/api/v1/operators/').send({
      name: 'temp-admin',
      role: 'admin',
      clusters: [temp.body.id],
    });
    const both = await as('post', '/api/v1/operators/').send({
      name: 'temp-reader',
      role: 'reader',
      clusters: [temp.body.id, other.body.id],
    });
    expect([only.status, both.status]).toEqual([201, 201]);

    const refused = await as('delete', `/api/v1/clusters/${temp.body.id}/`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe(
      "Operators 'temp-admin', 'temp-reader' are limited to this cluster; change their clusters (PATCH /api/v1/operators/<id>/) before deleting the cluster.",
    );
    // Still limited: the operator whose only cluster it is reaches no other.
    const limitedAuth = `ApiKey temp-admin:${only.body.api_key}`;
    expect((await app.http().get('/api/v1/operators/').set('Authorization', limitedAuth)).status).toBe(403);
    expect((await app.http().get(`/api/v1/clusters/${other.body.id}/`).set('Authorization', limitedAuth)).status).toBe(
      404,
    );

    expect((await as('patch', `/api/v1/operators/${both.body.id}/`).send({ clusters: [other.body.id] })).status).toBe(
      202,
    );
    const one = await as('delete', `/api/v1/clusters/${temp.body.id}/`);
    expect(one.body.error).toBe(
      "Operator 'temp-admin' is limited to this cluster; change their clusters (PATCH /api/v1/operators/<id>/) before deleting the cluster.",
    );
    expect((await as('delete', `/api/v1/operators/${only.body.id}/`)).status).toBe(204);
    expect((await as('delete', `/api/v1/clusters/${temp.body.id}/`)).status).toBe(204);
    expect((await as('get', `/api/v1/operators/${both.body.id}/`)).body.clusters).toEqual([other.body.resource_uri]);
  });

  it('when the id is unknown or malformed, then 404', async () => {
    for (const id of ['9999', 'x', '4294967296']) {
      const res = await as('get', `/api/v1/clusters/${id}/`);
      expect(res.status).toBe(404);
      expect(res.body.error).toContain('No cluster with id');
    }
  });

  it('when a create is refused, then no row is written', async () => {
    const before = await countRows(app.db, 'clusters');
    await as('post', '/api/v1/clusters/').send({
      name: 'a/b',
      auth_url: 'https://x/auth',
      storage_url: 'https://x/v1',
    });
    await as('post', '/api/v1/clusters/').send({ name: 'ok', auth_url: 'https://x/auth' });
    expect(await countRows(app.db, 'clusters')).toBe(before);
  });
});
