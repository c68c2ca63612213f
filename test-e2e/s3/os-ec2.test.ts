import request from 'supertest';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { MAX_S3_CREDENTIALS_PER_USER } from '@cairn/contract';
import { parseS3SecretKeys } from '@cairn/domain';
import { S3CredentialStore, S3CredentialUserGone } from '../../services/auth-gateway/src/s3/s3-credential-writes';
import { createEc2, S3_KEYS, signedBody, v3Token, type Ec2Credential } from './s3-client';

const PW = 'pw-0123456789-abcdefgh';

/** Keystone's OS-EC2 credential API as `openstack ec2 credentials …` and s3token's secret cache call it. */
describe('OS-EC2 credentials on the gateway', () => {
  let stack: Stack;
  let carol: string;
  let dave: string;
  let service: string;
  const base = (user: string) => `/auth/v3/users/${encodeURIComponent(user)}/credentials/OS-EC2`;
  const as = (token: string | null) => {
    const agent = request(stack.gatewayUrl);
    const set = <T extends request.Test>(t: T) => (token === null ? t : t.set('X-Auth-Token', token));
    return {
      get: (path: string) => set(agent.get(path)),
      post: (path: string, body: object = {}) => set(agent.post(path)).send(body),
      delete: (path: string) => set(agent.delete(path)),
    };
  };

  beforeAll(async () => {
    stack = await startStack({
      database: 'postgres',
      redis: true,
      s3SecretKeys: S3_KEYS,
      gateway: { s3tokensRequireServiceToken: false },
    });
    await stack.createUser('carol', PW);
    await stack.createUser('dave', PW);
    await stack.createUser('ec2-service', PW, { is_superuser: true });
    [carol, dave, service] = await Promise.all([
      v3Token(stack.gatewayUrl, 'carol', PW),
      v3Token(stack.gatewayUrl, 'dave', PW),
      v3Token(stack.gatewayUrl, 'ec2-service', PW),
    ]);
  });
  afterAll(async () => {
    await stack.close();
  });

  it("when a user creates, lists, shows and deletes its own credential, then the bodies are Keystone's, the secret is shown only at creation and signs S3 requests until the delete", async () => {
    const created = await as(carol).post(base('carol'), { tenant_id: 'carol' });
    expect(created.status).toBe(201);
    const cred = created.body.credential as Ec2Credential & { links: { self: string }; trust_id: null };
    expect(cred).toEqual({
      user_id: 'carol',
      tenant_id: 'carol',
      access: expect.stringMatching(/^[A-Z0-9]{20}$/),
      secret: expect.stringMatching(/^[A-Za-z0-9+/]{40}$/),
      trust_id: null,
      expires_at: null,
      links: { self: `http://127.0.0.1:5000/auth/v3/users/carol/credentials/OS-EC2/${cred.access}` },
    });
    expect(created.headers.location).toBe(cred.links.self);

    // Reads never give the owner the secret again: its token travels with every Swift request.
    const list = await as(carol).get(base('carol'));
    expect(list.status).toBe(200);
    expect(list.body.credentials).toEqual([{ ...cred, secret: null }]);
    expect(list.body.links).toEqual({
      self: 'http://127.0.0.1:5000/auth/v3/users/carol/credentials/OS-EC2',
      previous: null,
      next: null,
    });
    const shown = await as(carol).get(`${base('carol')}/${cred.access}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual({ credential: { ...cred, secret: null } });

    const s3tokens = () =>
      request(stack.gatewayUrl).post('/auth/v3/s3tokens').send(signedBody(cred.access, cred.secret));
    expect((await s3tokens()).status).toBe(200);
    expect((await as(carol).delete(`${base('carol')}/${cred.access}`)).status).toBe(204);
    expect((await s3tokens()).status).toBe(401);
    expect((await as(carol).get(`${base('carol')}/${cred.access}`)).status).toBe(404);
    expect((await as(carol).delete(`${base('carol')}/${cred.access}`)).status).toBe(404);
    expect((await as(carol).get(base('carol'))).body.credentials).toEqual([]);
  });

  it("when a user names another user's path, then 403; another user's access key under its own path is 404; no token is 401", async () => {
    const daves = await createEc2(stack.gatewayUrl, dave, 'dave');
    expect((await as(carol).get(base('dave'))).status).toBe(403);
    expect((await as(carol).get(`${base('dave')}/${daves.access}`)).status).toBe(403);
    expect((await as(carol).post(base('dave'))).status).toBe(403);
    expect((await as(carol).delete(`${base('dave')}/${daves.access}`)).status).toBe(403);
    expect((await as(carol).get(`${base('carol')}/${daves.access}`)).status).toBe(404);
    expect((await as(carol).delete(`${base('carol')}/${daves.access}`)).status).toBe(404);
    expect((await as(null).get(base('carol'))).status).toBe(401);
    expect((await as('garbage').post(base('carol'))).status).toBe(401);
    // Dave's credential survived all of that.
    expect((await as(service).get(`${base('dave')}/${daves.access}`)).body.credential.secret).toBe(daves.secret);
  });

  it("when the service user (a superuser) reads any user's credential, as s3token's secret cache does, then it gets it; it may not create or delete them", async () => {
    const daves = [(await as(dave).get(base('dave'))).body.credentials[0] as Ec2Credential];
    expect(daves[0]!.secret).toBeNull();
    const one = await as(service).get(`${base('dave')}/${daves[0]!.access}`);
    expect(one.status).toBe(200);
    // The secret the credential was created with: it signs for dave.
    expect(one.body.credential.secret).toMatch(/^[A-Za-z0-9+/]{40}$/);
    expect(
      (
        await request(stack.gatewayUrl)
          .post('/auth/v3/s3tokens')
          .send(signedBody(daves[0]!.access, one.body.credential.secret))
      ).status,
    ).toBe(200);
    expect((await as(service).get(base('dave'))).status).toBe(200);
    expect((await as(service).post(base('dave'))).status).toBe(403);
    expect((await as(service).delete(`${base('dave')}/${daves[0]!.access}`)).status).toBe(403);
    expect((await as(service).get(base('nobody-here'))).status).toBe(404);
    // A non-ASCII user, named as s3token's X-User-Id spells it (UTF-8 bytes as latin-1 characters).
    await stack.createUser('zoë', PW);
    const zoe = await createEc2(stack.gatewayUrl, await v3Token(stack.gatewayUrl, 'zoë', PW), 'zoë');
    const wsgi = Buffer.from('zoë', 'utf8').toString('latin1');
    const spelt = await as(service).get(`${base(wsgi)}/${zoe.access}`);
    expect(spelt.status).toBe(200);
    expect(spelt.body.credential.secret).toBe(zoe.secret);
  });

  it('when a user reaches the per-user cap, then the next creation is 409 with a sentence, and nothing was written', async () => {
    await stack.createUser('erin', PW);
    const erin = await v3Token(stack.gatewayUrl, 'erin', PW);
    const results = await Promise.all(Array.from({ length: 6 }, () => as(erin).post(base('erin'))));
    const created = results.filter((r) => r.status === 201).length;
    expect(created).toBe(MAX_S3_CREDENTIALS_PER_USER);
    for (const r of results.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(409);
      expect(r.body.error.message).toMatch(/at most|most one user/);
    }
    expect((await as(erin).get(base('erin'))).body.credentials).toHaveLength(created);
  });

  it("when the management API made the user's credentials up to the cap, then the gateway refuses one more; one deleted there makes room here", async () => {
    const { id } = await stack.createUser('fay', PW);
    const fay = await v3Token(stack.gatewayUrl, 'fay', PW);
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${stack.apiUrl}${path}`, {
        method,
        headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    const made: Array<{ id: string; access_key: string }> = [];
    for (let i = 0; i < MAX_S3_CREDENTIALS_PER_USER; i++) {
      const res = await api('POST', '/api/v1/s3_credentials/', { user: `/api/v1/users/${id}/` });
      expect(res.status).toBe(201);
      made.push((await res.json()) as { id: string; access_key: string });
    }
    expect((await as(fay).get(base('fay'))).body.credentials.map((c: Ec2Credential) => c.access)).toEqual(
      made.map((m) => m.access_key),
    );
    expect((await as(fay).post(base('fay'))).status).toBe(409);
    expect((await api('DELETE', `/api/v1/s3_credentials/${made[0]!.id}/`)).status).toBe(204);
    expect((await as(fay).post(base('fay'))).status).toBe(201);
  });

  it('when a path holds a NUL or another control character, then 404 as for any name or key that does not exist, never 500', async () => {
    for (const key of ['X%00', '%00', 'AAAAAAAAAAAAAAAAAAA%01', 'a'.repeat(300)]) {
      const shown = await as(carol).get(`${base('carol')}/${key}`);
      expect([shown.status, shown.body]).toEqual([
        404,
        { error: { code: 404, title: 'Not Found', message: 'EC2 access key not found.' } },
      ]);
      expect((await as(carol).delete(`${base('carol')}/${key}`)).status).toBe(404);
    }
    for (const user of ['a%00', 'carol%00', '%0D%0A']) {
      const listed = await as(service).get(`/auth/v3/users/${user}/credentials/OS-EC2`);
      expect(listed.status).toBe(404);
      expect(listed.body.error.message).toMatch(/^Could not find user: /);
    }
    // Carol's own path still works after all that.
    expect((await as(carol).get(base('carol'))).status).toBe(200);
  });

  it('when the user is deleted while its credential is being created, then the store says so (the route answers 404), and nothing is written', async () => {
    const parsed = parseS3SecretKeys(S3_KEYS);
    if (!parsed.ok) throw new Error(parsed.problems.join('; '));
    const store = new S3CredentialStore(stack.db, 1);
    const ghost = {
      id: '987654321',
      username: 'ghost',
      passwordHash: '',
      enabled: true,
      isSuperuser: false,
      generation: '1',
    };
    await expect(store.create(parsed.keyring, { user: ghost, requestId: null })).rejects.toBeInstanceOf(
      S3CredentialUserGone,
    );
    expect(
      Number(
        (
          (await stack.db('s3_credentials').where({ storage_user_id: ghost.id }).count({ n: '*' })) as Array<{
            n: string;
          }>
        )[0]!.n,
      ),
    ).toBe(0);
    expect(
      Number(
        ((await stack.db('audit_log').where({ target_name: 'ghost' }).count({ n: '*' })) as Array<{ n: string }>)[0]!.n,
      ),
    ).toBe(0);
  });

  it("when the tenant_id is not the user's own project, or the body is not JSON, then 403 and 400", async () => {
    expect((await as(carol).post(base('carol'), { tenant_id: 'dave' })).status).toBe(403);
    const garbage = await request(stack.gatewayUrl)
      .post(base('carol'))
      .set('X-Auth-Token', carol)
      .set('Content-Type', 'application/json')
      .send('{nope');
    expect(garbage.status).toBe(400);
    const wrongType = await as(carol).post(base('carol'), { tenant_id: 5 });
    expect(wrongType.status).toBe(400);
  });

  it('when a credential is made with an expires_at, then it shows it and s3tokens refuses it once past; a past or bad one is 400', async () => {
    for (const expires_at of ['2001-01-01T00:00:00Z', 'next week']) {
      const refused = await as(carol).post(base('carol'), { expires_at });
      expect([refused.status, refused.body.error?.message]).toEqual([
        400,
        expect.stringMatching(
          /^'expires_at' must be an ISO 8601 date-time in the future, or null for a key that never ends\. /,
        ),
      ]);
    }
    // Long enough for the creation and the first check on a loaded machine.
    const ends = new Date(Date.now() + 3000);
    const created = await as(carol).post(base('carol'), { expires_at: ends.toISOString() });
    expect(created.status).toBe(201);
    const cred = created.body.credential as Ec2Credential & { expires_at: string | null };
    expect(cred.expires_at).toBe(ends.toISOString());
    expect((await as(carol).get(`${base('carol')}/${cred.access}`)).body.credential.expires_at).toBe(
      ends.toISOString(),
    );
    const s3tokens = () =>
      request(stack.gatewayUrl).post('/auth/v3/s3tokens').send(signedBody(cred.access, cred.secret!));
    expect((await s3tokens()).status).toBe(200);
    await new Promise((r) => setTimeout(r, ends.getTime() - Date.now() + 100));
    expect((await s3tokens()).status).toBe(401);
    expect((await as(carol).delete(`${base('carol')}/${cred.access}`)).status).toBe(204);
  });

  it('when credentials are created and deleted, then audit records name the storage user and the access key, and hold no secret', async () => {
    const cred = await createEc2(stack.gatewayUrl, carol, 'carol');
    expect((await as(carol).delete(`${base('carol')}/${cred.access}`)).status).toBe(204);
    const rows = (await stack.db('audit_log').where({ target_name: cred.access }).orderBy('id')) as Array<
      Record<string, unknown>
    >;
    expect(rows.map((r) => [r.action, r.operator_name])).toEqual([
      ['create', expect.stringContaining('carol')],
      ['delete', expect.stringContaining('carol')],
    ]);
    expect(JSON.stringify(rows)).not.toContain(cred.secret);
    // The same snapshot the management API's own records of S3 credentials hold.
    const carolId = ((await stack.db('storage_users').where({ username: 'carol' }).first('id')) as { id: string }).id;
    expect(rows[0]!.after).toEqual({
      access_key: cred.access,
      application_credential: null,
      cluster: '/api/v1/clusters/1/',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      expires_at: null,
      id: rows[0]!.target_id,
      resource_uri: `/api/v1/s3_credentials/${rows[0]!.target_id}/`,
      user: `/api/v1/users/${carolId}/`,
    });
    expect(rows[1]!.before).toEqual(rows[0]!.after);
    const stored = await stack.db('s3_credentials').count({ n: '*' }).where({ access_key: cred.access });
    expect(Number(stored[0]!.n)).toBe(0);
  });

  it('when secrets were handed out, then none of them reached the log, and none is stored in the clear', async () => {
    const cred = await createEc2(stack.gatewayUrl, dave, 'dave').catch(
      async () => ((await as(dave).get(base('dave'))).body.credentials as Ec2Credential[])[0]!,
    );
    const logs = stack.gatewayLogs.lines.join('\n');
    expect(logs).toContain('OS-EC2');
    expect(logs).not.toContain(cred.secret);
    const rows = (await stack.db('s3_credentials').select('secret_sealed')) as Array<{ secret_sealed: string }>;
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(cred.secret);
  });
});
