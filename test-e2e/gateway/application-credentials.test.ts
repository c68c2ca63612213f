import request from 'supertest';
import { ADMIN_AUTH, startStack, type Stack, type StackOptions } from '../support/stack';

const PW = 'alice-password-0123456789';
const SERVICE_PW = 'service-password-0123456789';

const passwordBody = (name: string, password: string) => ({
  auth: {
    identity: { methods: ['password'], password: { user: { name, domain: { id: 'default' }, password } } },
    scope: { project: { name, domain: { id: 'default' } } },
  },
});
const appCredBody = (credential: Record<string, unknown>) => ({
  auth: { identity: { methods: ['application_credential'], application_credential: credential } },
});

/** Polls `check` until it is true or `ms` have passed; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`not true within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.each<[string, Pick<StackOptions, 'database' | 'redis'>]>([
  ['Postgres + Redis', { database: 'postgres', redis: true }],
  ['PGlite + in-process store', { database: 'pglite', redis: false }],
])('application credentials on %s', (_name, backend) => {
  let stack: Stack;
  let gw: () => request.Agent;
  let serviceToken: string;

  const login = async (body: unknown) =>
    gw()
      .post('/auth/v3/auth/tokens')
      .send(body as object);
  const tokenOf = async (user: string, password = PW) =>
    (await login(passwordBody(user, password))).headers['x-subject-token'] as string;
  const create = (user: string, token: string, credential: Record<string, unknown>) =>
    gw()
      .post(`/auth/v3/users/${user}/application_credentials`)
      .set('X-Auth-Token', token)
      .send({ application_credential: credential });
  const validate = (subject: string, accessRules = true) => {
    const r = gw().get('/auth/v3/auth/tokens').set('X-Auth-Token', serviceToken).set('X-Subject-Token', subject);
    return accessRules ? r.set('OpenStack-Identity-Access-Rules', '1') : r;
  };

  beforeAll(async () => {
    stack = await startStack({
      ...backend,
      gateway: { publicUrl: 'http://auth.test/auth' },
    });
    gw = () => request.agent(stack.gatewayUrl);
    await stack.createUser('alice', PW);
    await stack.createUser('bob', PW);
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    serviceToken = await tokenOf('swift-service', SERVICE_PW);
  });
  afterAll(() => stack.close());

  describe('the API', () => {
    it("when alice creates a credential, then 201 with Keystone's shape and a generated secret shown only then", async () => {
      const token = await tokenOf('alice');
      const res = await create('alice', token, { name: 'backup', description: 'nightly backup' });
      expect(res.status).toBe(201);
      const c = res.body.application_credential;
      expect(c).toMatchObject({
        name: 'backup',
        description: 'nightly backup',
        user_id: 'alice',
        project_id: 'alice',
        roles: [{ id: 'swiftoperator', name: 'swiftoperator', domain_id: null }],
        expires_at: null,
        unrestricted: false,
        access_rules: [],
      });
      expect(c.id).toMatch(/^[0-9a-f]{32}$/);
      expect(c.secret.length).toBeGreaterThanOrEqual(80);
      expect(c.links.self).toBe(`http://auth.test/auth/v3/users/alice/application_credentials/${c.id}`);
      expect(res.headers.location).toBe(c.links.self);

      const list = await gw().get('/auth/v3/users/alice/application_credentials').set('X-Auth-Token', token);
      expect(list.status).toBe(200);
      expect(list.body.application_credentials.map((x: { name: string }) => x.name)).toContain('backup');
      expect(JSON.stringify(list.body)).not.toContain(c.secret);
      const byName = await gw()
        .get('/auth/v3/users/alice/application_credentials?name=backup')
        .set('X-Auth-Token', token);
      expect(byName.body.application_credentials).toHaveLength(1);
      const one = await gw().get(`/auth/v3/users/alice/application_credentials/${c.id}`).set('X-Auth-Token', token);
      expect(one.status).toBe(200);
      expect(one.body.application_credential.secret).toBeUndefined();

      // Stored as a hash only, and audited without it.
      const row = await stack.db('application_credentials').where({ id: c.id }).first();
      expect(row.secret_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(JSON.stringify(row)).not.toContain(c.secret);
      const audit = await stack.db('audit_log').where({ target_type: 'application_credentials', target_id: c.id });
      expect(audit).toHaveLength(1);
      expect(audit[0]).toMatchObject({ action: 'create', operator_name: 'storage user alice' });
      expect(JSON.stringify(audit)).not.toContain(c.secret);
      expect(JSON.stringify(audit)).not.toContain(row.secret_hash);
    });

    it("when the name is taken, the path is another user's, or the input is bad, then Keystone's 409, 403, 400 and 404", async () => {
      const token = await tokenOf('alice');
      expect((await create('alice', token, { name: 'dup' })).status).toBe(201);
      const dup = await create('alice', token, { name: 'dup' });
      expect(dup.status).toBe(409);
      expect(dup.body.error).toEqual({
        code: 409,
        title: 'Conflict',
        message: 'Conflict occurred attempting to store application_credential - Duplicate entry found with name dup.',
      });

      const other = await create('bob', token, { name: 'x' });
      expect(other.status).toBe(403);
      expect(other.body.error.message).toBe(
        'You are not authorized to perform the requested action: identity:create_application_credential.',
      );
      expect((await gw().get('/auth/v3/users/bob/application_credentials').set('X-Auth-Token', token)).status).toBe(
        403,
      );

      const role = await create('alice', token, { name: 'admin', roles: [{ name: 'ResellerAdmin' }] });
      expect(role.status).toBe(400);
      expect(role.body.error.message).toMatch(
        /^Invalid application credential: Cannot create an application credential with unassigned role/,
      );
      const short = await create('alice', token, { name: 'weak', secret: 'short' });
      expect(short.status).toBe(400);
      expect(short.body.error.message).toMatch(/at least 32 characters/);
      const past = await create('alice', token, { name: 'old', expires_at: '2001-01-01T00:00:00Z' });
      expect(past.status).toBe(400);
      expect(past.body.error.message).toMatch(/^The 'expires_at' must not be before now\./);
      const rule = await create('alice', token, {
        name: 'r',
        access_rules: [{ service: 'compute', method: 'GET', path: '/x' }],
      });
      expect(rule.status).toBe(400);
      expect(rule.body.error.message).toMatch(/object-store/);

      const missing = await gw()
        .get(`/auth/v3/users/alice/application_credentials/${'0'.repeat(32)}`)
        .set('X-Auth-Token', token);
      expect(missing.status).toBe(404);
      expect(missing.body.error.message).toBe(`Could not find Application Credential: ${'0'.repeat(32)}.`);
      expect((await gw().get('/auth/v3/users/alice/application_credentials')).status).toBe(401);
    });
  });

  describe('logging in', () => {
    it('when logging in by id, by name with the user by name and domain, and by name with the user id, then a token for her account with the credential in its document', async () => {
      const token = await tokenOf('alice');
      const c = (await create('alice', token, { name: 'ci', secret: 'a-chosen-secret-of-enough-length-0123456789' }))
        .body.application_credential;
      const bodies = [
        appCredBody({ id: c.id, secret: c.secret }),
        // rclone (ncw/swift) sends an empty user beside the id; Keystone ignores the user then.
        appCredBody({ id: c.id, secret: c.secret, user: {} }),
        appCredBody({ name: 'ci', user: { name: 'alice', domain: { name: 'Default' } }, secret: c.secret }),
        appCredBody({ name: 'ci', user: { id: 'alice' }, secret: c.secret }),
      ];
      for (const body of bodies) {
        const res = await login(body);
        expect(res.status).toBe(201);
        expect(res.body.token.methods).toEqual(['application_credential']);
        expect(res.body.token.project).toMatchObject({ id: 'alice', name: 'alice' });
        expect(res.body.token.roles).toEqual([{ id: 'swiftoperator', name: 'swiftoperator' }]);
        expect(res.body.token.application_credential).toEqual({ id: c.id, name: 'ci', restricted: true });
        const valid = await validate(res.headers['x-subject-token'] as string);
        expect(valid.status).toBe(200);
        expect(valid.body.token.application_credential).toEqual({ id: c.id, name: 'ci', restricted: true });
        expect(valid.body.token.catalog.map((s: { type: string }) => s.type)).toContain('object-store');
      }
    });

    it("when the secret is wrong, the id unknown, or the name another user's, then 401", async () => {
      const token = await tokenOf('alice');
      const c = (await create('alice', token, { name: 'wrong' })).body.application_credential;
      const answers = await Promise.all([
        login(appCredBody({ id: c.id, secret: `${c.secret}x` })),
        login(appCredBody({ id: '1'.repeat(32), secret: c.secret })),
        login(appCredBody({ name: 'wrong', user: { id: 'bob' }, secret: c.secret })),
      ]);
      for (const res of answers) {
        expect(res.status).toBe(401);
        expect(res.headers['x-subject-token']).toBeUndefined();
      }
      expect((await login(appCredBody({ name: 'wrong', secret: c.secret }))).status).toBe(400);
      expect((await login(appCredBody({ name: 'wrong', user: {}, secret: c.secret }))).status).toBe(400);
    });

    it('when a superuser limits a credential to swiftoperator, then its tokens carry no ResellerAdmin', async () => {
      const token = await tokenOf('swift-service', SERVICE_PW);
      const c = (await create('swift-service', token, { name: 'op-only', roles: [{ name: 'swiftoperator' }] })).body
        .application_credential;
      expect(c.roles).toEqual([{ id: 'swiftoperator', name: 'swiftoperator', domain_id: null }]);
      const res = await login(appCredBody({ id: c.id, secret: c.secret }));
      expect(res.body.token.roles).toEqual([{ id: 'swiftoperator', name: 'swiftoperator' }]);
    });
  });

  describe('access rules', () => {
    it('when a token carries access rules, then only a validation with OpenStack-Identity-Access-Rules finds it, and it carries the rules', async () => {
      const token = await tokenOf('alice');
      const rules = [{ service: 'object-store', method: 'GET', path: '/v1/AUTH_alice/public/**' }];
      const c = (await create('alice', token, { name: 'public-reader', access_rules: rules })).body
        .application_credential;
      expect(c.access_rules).toEqual([{ id: expect.stringMatching(/^[0-9a-f]{32}$/), ...rules[0] }]);
      const subject = (await login(appCredBody({ id: c.id, secret: c.secret }))).headers['x-subject-token'] as string;
      const without = await validate(subject, false);
      expect(without.status).toBe(404);
      const withHeader = await validate(subject);
      expect(withHeader.status).toBe(200);
      expect(withHeader.body.token.application_credential).toEqual({
        id: c.id,
        name: 'public-reader',
        restricted: true,
        access_rules: c.access_rules,
      });
      // V2.0 validation never sends the header.
      expect((await gw().get(`/auth/v2.0/tokens/${subject}`).set('X-Auth-Token', serviceToken)).status).toBe(404);
    });
  });

  describe('restricted and unrestricted', () => {
    it("when a restricted credential's token makes credentials, then 403 with Keystone's message; an unrestricted one may", async () => {
      const token = await tokenOf('alice');
      const restricted = (await create('alice', token, { name: 'restricted' })).body.application_credential;
      const unrestricted = (await create('alice', token, { name: 'unrestricted', unrestricted: true })).body
        .application_credential;
      const rToken = (await login(appCredBody({ id: restricted.id, secret: restricted.secret }))).headers[
        'x-subject-token'
      ] as string;
      const uToken = (await login(appCredBody({ id: unrestricted.id, secret: unrestricted.secret }))).headers[
        'x-subject-token'
      ] as string;

      const refused = await create('alice', rToken, { name: 'child' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(
        "You are not authorized to perform the requested action: Using method 'application_credential' is not allowed for managing additional application credentials.",
      );
      const ec2 = await gw()
        .post('/auth/v3/users/alice/credentials/OS-EC2')
        .set('X-Auth-Token', rToken)
        .send({ tenant_id: 'alice' });
      expect(ec2.status).toBe(403);
      expect(ec2.body.error.message).toBe(refused.body.error.message);
      expect(
        (await gw().delete(`/auth/v3/users/alice/application_credentials/${restricted.id}`).set('X-Auth-Token', rToken))
          .status,
      ).toBe(403);
      // Listing is allowed.
      expect((await gw().get('/auth/v3/users/alice/application_credentials').set('X-Auth-Token', rToken)).status).toBe(
        200,
      );

      expect((await create('alice', uToken, { name: 'child' })).status).toBe(201);
      // No S3 key ring in this stack: past the restriction, refused for the missing keys only.
      expect(
        (
          await gw()
            .post('/auth/v3/users/alice/credentials/OS-EC2')
            .set('X-Auth-Token', uToken)
            .send({ tenant_id: 'alice' })
        ).status,
      ).toBe(503);
    });
  });

  describe('access rules and credential management', () => {
    it('when an unrestricted credential has access rules, then its token cannot make credentials either (no escape from its rules)', async () => {
      const token = await tokenOf('alice');
      const rules = [{ service: 'object-store', method: 'GET', path: '/v1/AUTH_alice/public/**' }];
      const c = (await create('alice', token, { name: 'ruled-unrestricted', unrestricted: true, access_rules: rules }))
        .body.application_credential;
      const ruled = (await login(appCredBody({ id: c.id, secret: c.secret }))).headers['x-subject-token'] as string;
      const refused = await create('alice', ruled, { name: 'escape' });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toMatch(/access rules, which allow only object-store requests/);
      expect(
        (
          await gw()
            .post('/auth/v3/users/alice/credentials/OS-EC2')
            .set('X-Auth-Token', ruled)
            .send({ tenant_id: 'alice' })
        ).status,
      ).toBe(403);
    });
  });

  describe('lifetimes', () => {
    it('when the credential is deleted, then its tokens are void within 1 s and it no longer logs in; the delete is audited', async () => {
      const token = await tokenOf('alice');
      const c = (await create('alice', token, { name: 'to-delete' })).body.application_credential;
      const subject = (await login(appCredBody({ id: c.id, secret: c.secret }))).headers['x-subject-token'] as string;
      expect((await validate(subject)).status).toBe(200);
      expect(
        (await gw().delete(`/auth/v3/users/alice/application_credentials/${c.id}`).set('X-Auth-Token', token)).status,
      ).toBe(204);
      await within(1000, async () => (await validate(subject)).status === 404);
      expect((await login(appCredBody({ id: c.id, secret: c.secret }))).status).toBe(401);
      expect(
        (await gw().delete(`/auth/v3/users/alice/application_credentials/${c.id}`).set('X-Auth-Token', token)).status,
      ).toBe(404);
      const audit = await stack
        .db('audit_log')
        .where({ target_type: 'application_credentials', target_id: c.id })
        .orderBy('id');
      expect(audit.map((a: { action: string }) => a.action)).toEqual(['create', 'delete']);
    });

    it('when the row is deleted behind the gateway (as the management API does), then the next login fails at once and its tokens are void within 1 s', async () => {
      const token = await tokenOf('alice');
      const c = (await create('alice', token, { name: 'behind' })).body.application_credential;
      // Logged in twice: the gateway remembers the row (behind its change-notice fence, when it has one).
      expect((await login(appCredBody({ id: c.id, secret: c.secret }))).status).toBe(201);
      const subject = (await login(appCredBody({ id: c.id, secret: c.secret }))).headers['x-subject-token'] as string;
      expect((await validate(subject)).status).toBe(200);
      await stack.db('application_credentials').where({ id: c.id }).delete();
      // No wait: a login that arrives after the delete committed is refused.
      expect((await login(appCredBody({ id: c.id, secret: c.secret }))).status).toBe(401);
      await within(1000, async () => (await validate(subject)).status === 404);
    });

    it('when the row changes behind the gateway, then the next login sees it at once', async () => {
      const token = await tokenOf('alice');
      const c = (await create('alice', token, { name: 'changed-behind' })).body.application_credential;
      expect((await login(appCredBody({ id: c.id, secret: c.secret }))).body.token.roles).toEqual([
        { id: 'swiftoperator', name: 'swiftoperator' },
      ]);
      await stack
        .db('application_credentials')
        .where({ id: c.id })
        .update({ expires_at: new Date(Date.now() - 1000) });
      expect((await login(appCredBody({ id: c.id, secret: c.secret }))).status).toBe(401);
    });

    it('when logins were answered from memory, then a credential made, deleted by name, or whose user is disabled behind the gateway is seen by the very next login', async () => {
      const erin = await stack.createUser('erin', PW);
      const token = await tokenOf('erin');
      const secret = 'erin-chosen-secret-of-enough-length-0123456789';
      const byName = appCredBody({ name: 'later', user: { name: 'erin', domain: { id: 'default' } }, secret });
      // Not there yet: the refusal is remembered too, and must not outlive the credential's creation.
      expect((await login(byName)).status).toBe(401);
      const c = (await create('erin', token, { name: 'later', secret })).body.application_credential;
      expect((await login(byName)).status).toBe(201);
      expect((await login(appCredBody({ id: c.id, secret }))).status).toBe(201);
      // Deleted behind the gateway: refused by name and by id at once.
      await stack.db('application_credentials').where({ id: c.id }).delete();
      expect((await login(byName)).status).toBe(401);
      expect((await login(appCredBody({ id: c.id, secret }))).status).toBe(401);
      // Another one, logged in with, then its user disabled through the management API.
      const d = (await create('erin', token, { name: 'again', secret })).body.application_credential;
      expect((await login(appCredBody({ id: d.id, secret }))).status).toBe(201);
      expect(await stack.patchUser(erin.id, { enabled: false })).toBe(202);
      expect((await login(appCredBody({ id: d.id, secret }))).status).toBe(401);
      expect(await stack.patchUser(erin.id, { enabled: true })).toBe(202);
      expect((await login(appCredBody({ id: d.id, secret }))).status).toBe(201);
    });

    it('when the credential expires, then its token ends with it, and neither it nor a new login works afterwards', async () => {
      const token = await tokenOf('alice');
      const expiresAt = new Date(Date.now() + 2500);
      const c = (await create('alice', token, { name: 'short-lived', expires_at: expiresAt.toISOString() })).body
        .application_credential;
      expect(Date.parse(c.expires_at)).toBe(expiresAt.getTime());
      const res = await login(appCredBody({ id: c.id, secret: c.secret }));
      expect(res.status).toBe(201);
      expect(Date.parse(res.body.token.expires_at)).toBeLessThanOrEqual(expiresAt.getTime());
      const subject = res.headers['x-subject-token'] as string;
      expect((await validate(subject)).status).toBe(200);
      // Until the clock (the gateway's too) has passed the expiry, not a timer's guess at it.
      while (Date.now() <= expiresAt.getTime())
        await new Promise((r) => setTimeout(r, Math.min(50, expiresAt.getTime() - Date.now() + 1)));
      expect((await validate(subject)).status).toBe(404);
      expect((await login(appCredBody({ id: c.id, secret: c.secret }))).status).toBe(401);
    });

    it("when its user is disabled, then the credential's tokens are void within 1 s and it no longer logs in; deleting the user deletes it, audited", async () => {
      const carol = await stack.createUser('carol', PW);
      const token = await tokenOf('carol');
      const c = (await create('carol', token, { name: 'carol-ci' })).body.application_credential;
      const subject = (await login(appCredBody({ id: c.id, secret: c.secret }))).headers['x-subject-token'] as string;
      expect((await validate(subject)).status).toBe(200);
      expect(await stack.patchUser(carol.id, { enabled: false })).toBe(202);
      await within(1000, async () => (await validate(subject)).status === 404);
      expect((await login(appCredBody({ id: c.id, secret: c.secret }))).status).toBe(401);
      // Deleting the user deletes its credentials, each with its own audit record.
      expect(await stack.deleteUser(carol.id)).toBe(204);
      expect(await stack.db('application_credentials').where({ id: c.id })).toHaveLength(0);
      const audit = await stack
        .db('audit_log')
        .where({ target_type: 'application_credentials', target_id: c.id })
        .orderBy('id');
      expect(audit.map((a: { action: string; operator_name: string }) => [a.action, a.operator_name])).toEqual([
        ['create', 'storage user carol'],
        ['delete', 'root'],
      ]);
    });
  });

  describe('operators through the management API', () => {
    const api = (method: string, path: string) =>
      fetch(`${stack.apiUrl}${path}`, { method, headers: { Authorization: ADMIN_AUTH } });

    it('when an operator lists by user, user__id and cluster, shows and revokes one, then its tokens are void within 1 s and the revocation is audited', async () => {
      const dave = await stack.createUser('dave', PW);
      const token = await tokenOf('dave');
      const c = (
        await create('dave', token, { name: 'terraform', expires_at: new Date(Date.now() + 3_600_000).toISOString() })
      ).body.application_credential;
      const subject = (await login(appCredBody({ id: c.id, secret: c.secret }))).headers['x-subject-token'] as string;

      for (const query of [`user=/api/v1/users/${dave.id}/`, `user__id=${dave.id}`, `user__user=dave`]) {
        const listed = await api('GET', `/api/v1/application_credentials/?${query}`);
        expect(listed.status).toBe(200);
        const body = (await listed.json()) as {
          meta: { total_count: number };
          objects: Array<Record<string, unknown>>;
        };
        expect(body.meta.total_count).toBe(1);
        expect(body.objects[0]).toMatchObject({
          id: c.id,
          name: 'terraform',
          user: `/api/v1/users/${dave.id}/`,
          cluster: '/api/v1/clusters/1/',
          roles: ['swiftoperator'],
          unrestricted: false,
          access_rules: [],
          resource_uri: `/api/v1/application_credentials/${c.id}/`,
        });
        expect(JSON.stringify(body)).not.toContain(c.secret);
        expect(JSON.stringify(body)).not.toContain('sha256:');
      }
      const inCluster = (await (
        await api('GET', `/api/v1/application_credentials/?cluster=1&user__id=${dave.id}`)
      ).json()) as { meta: { total_count: number } };
      expect(inCluster.meta.total_count).toBe(1);
      const elsewhere = (await (
        await api('GET', `/api/v1/application_credentials/?cluster=/api/v1/clusters/999/`)
      ).json()) as { meta: { total_count: number } };
      expect(elsewhere.meta.total_count).toBe(0);
      const badCluster = await api('GET', '/api/v1/application_credentials/?cluster=nope');
      expect(badCluster.status).toBe(400);
      expect(((await badCluster.json()) as { error: string }).error).toMatch(/cluster id or its resource URI/);
      expect((await api('POST', '/api/v1/application_credentials/')).status).toBe(405);

      const shown = await api('GET', `/api/v1/application_credentials/${c.id}/`);
      expect(shown.status).toBe(200);
      expect((await validate(subject)).status).toBe(200);
      expect((await api('DELETE', `/api/v1/application_credentials/${c.id}/`)).status).toBe(204);
      await within(1000, async () => (await validate(subject)).status === 404);
      expect((await login(appCredBody({ id: c.id, secret: c.secret }))).status).toBe(401);
      expect((await api('GET', `/api/v1/application_credentials/${c.id}/`)).status).toBe(404);
      const audit = await stack
        .db('audit_log')
        .where({ target_type: 'application_credentials', target_id: c.id })
        .orderBy('id');
      expect(audit.map((a: { action: string; operator_name: string }) => [a.action, a.operator_name])).toEqual([
        ['create', 'storage user dave'],
        ['delete', 'root'],
      ]);
    });
  });
});
