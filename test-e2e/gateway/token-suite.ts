import jwt from 'jsonwebtoken';
import request from 'supertest';
import { startStack, type Stack, type StackOptions } from '../support/stack';

const PW = 'alice-password-0123456789';
const SERVICE_PW = 'service-password-0123456789';

const v3Body = (user: Record<string, unknown>, password: string, scope?: unknown) => ({
  auth: {
    identity: { methods: ['password'], password: { user: { ...user, password } } },
    ...(scope === undefined ? {} : { scope }),
  },
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

/**
 * Where the suite runs: a database and a token store; read in beforeAll, so a caller's own beforeAll may start them
 * first.
 */
export type TokenSuiteBackend = () => Pick<StackOptions, 'database' | 'redis' | 'redisUrl'>;

/**
 * The gateway's token behaviour end to end. tokens.test.ts runs it on single Redis and on the
 * in-process store; test-e2e/scale runs the same suite on a Redis Cluster and on a Sentinel set.
 */
export function describeTokenSuite(name: string, backend: TokenSuiteBackend): void {
  describe(`auth-gateway tokens on ${name}`, () => {
    tokenTests(backend);
  });
}

function tokenTests(backend: TokenSuiteBackend): void {
  let stack: Stack;
  let gw: () => request.Agent;
  let serviceToken: string;

  const v1 = (user: string, key: string) => gw().get('/auth/v1.0').set('X-Auth-User', user).set('X-Auth-Key', key);
  const v3 = (body: unknown) =>
    gw()
      .post('/auth/v3/auth/tokens')
      .send(body as object);
  const validate = (subject: string, caller = serviceToken) =>
    gw().get('/auth/v3/auth/tokens').set('X-Auth-Token', caller).set('X-Subject-Token', subject);
  const aliceToken = async () => (await v1('alice', PW)).headers['x-auth-token'] as string;

  beforeAll(async () => {
    stack = await startStack({
      ...backend(),
      gateway: { publicUrl: 'http://auth.test/auth', failureLimit: 5 },
    });
    gw = () => request.agent(stack.gatewayUrl);
    await stack.createUser('alice', PW);
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    const res = await v3(
      v3Body({ name: 'swift-service', domain: { id: 'default' } }, SERVICE_PW, {
        project: { name: 'swift-service', domain: { id: 'default' } },
      }),
    );
    serviceToken = res.headers['x-subject-token'] as string;
  });
  afterAll(() => stack.close());

  describe('Swift V1', () => {
    it('when alice logs in, then 200, an empty body, her storage URL and one token in both headers', async () => {
      const res = await v1('alice', PW);
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(res.headers['content-length']).toBe('0');
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.headers['x-storage-url']).toBe('http://127.0.0.1:8080/v1/AUTH_alice');
      expect(res.headers['x-auth-token']).toBeTruthy();
      expect(res.headers['x-storage-token']).toBe(res.headers['x-auth-token']);
      expect(Number(res.headers['x-auth-token-expires'])).toBeGreaterThan(86300);
      expect(res.headers['x-trans-id']).toMatch(/^tx[0-9a-f]{21}-[0-9a-f]{10}$/);
      expect(res.headers.date).toBeTruthy();
    });

    it('when the tempauth forms are used (account:user, X-Storage-User/Pass, /auth/v1), then they work too', async () => {
      expect((await v1('alice:alice', PW)).status).toBe(200);
      const legacy = await gw().get('/auth/v1').set('X-Storage-User', 'alice').set('X-Storage-Pass', PW);
      expect(legacy.status).toBe(200);
      expect(legacy.headers['x-storage-url']).toBe('http://127.0.0.1:8080/v1/AUTH_alice');
    });

    it('when the key is wrong, the user unknown or disabled, then the same 401 every time', async () => {
      const disabled = await stack.createUser('dora', PW, { enabled: false });
      expect(disabled.id).toBeTruthy();
      const answers = await Promise.all([
        v1('alice', 'wrong-password-wrong-pw'),
        v1('nobody', PW),
        v1('dora', PW),
        gw().get('/auth/v1.0'),
      ]);
      for (const res of answers) {
        expect(res.status).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Swift realm="unknown"');
        expect(res.text).toBe(answers[0]!.text);
        expect(res.headers['x-auth-token']).toBeUndefined();
      }
    });

    it('when the token is validated by the Swift proxy service user, then it is a V3 token for AUTH_alice with swiftoperator', async () => {
      const token = await aliceToken();
      const res = await validate(token);
      expect(res.status).toBe(200);
      expect(res.headers['x-subject-token']).toBe(token);
      expect(res.body.token.project).toEqual({
        domain: { id: 'default', name: 'default' },
        id: 'alice',
        name: 'alice',
      });
      expect(res.body.token.user).toMatchObject({
        id: 'alice',
        name: 'alice',
        domain: { id: 'default', name: 'default' },
      });
      expect(res.body.token.roles).toEqual([{ id: 'swiftoperator', name: 'swiftoperator' }]);
    });
  });

  describe('Keystone V2.0', () => {
    it('when alice posts passwordCredentials with her tenant, then the access document has her token, tenant and catalog', async () => {
      for (const path of ['/auth/v2.0/tokens', '/auth/v2.0']) {
        const res = await gw()
          .post(path)
          .send({ auth: { passwordCredentials: { username: 'alice', password: PW }, tenantName: 'alice' } });
        expect(res.status).toBe(200);
        const access = res.body.access;
        expect(access.token.id).toBeTruthy();
        expect(access.token.expires).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
        expect(access.token.tenant).toMatchObject({ id: 'alice', name: 'alice' });
        expect(access.user).toMatchObject({
          id: 'alice',
          name: 'alice',
          roles: [{ id: 'swiftoperator', name: 'swiftoperator' }],
        });
        const swift = access.serviceCatalog.find((s: { type: string }) => s.type === 'object-store');
        expect(swift.endpoints[0]).toMatchObject({
          region: 'RegionOne',
          publicURL: 'http://127.0.0.1:8080/v1/AUTH_alice',
          internalURL: 'http://127.0.0.1:8080/v1/AUTH_alice',
          adminURL: 'http://127.0.0.1:8080/v1',
          versionId: expect.any(Number),
          tenantId: 'alice',
        });
        expect((await validate(access.token.id)).status).toBe(200);
      }
    });

    it('when no tenant is given, then the default account; another tenant gives that account without a role', async () => {
      const own = await gw()
        .post('/auth/v2.0/tokens')
        .send({ auth: { passwordCredentials: { username: 'alice', password: PW } } });
      expect(own.body.access.token.tenant.id).toBe('alice');
      const other = await gw()
        .post('/auth/v2.0/tokens')
        .send({ auth: { passwordCredentials: { username: 'alice', password: PW }, tenantId: 'bob' } });
      expect(other.status).toBe(200);
      expect(other.body.access.serviceCatalog[0].endpoints[0].publicURL).toBe('http://127.0.0.1:8080/v1/AUTH_bob');
      expect(other.body.access.user.roles).toEqual([]);
    });

    it.each([
      [
        'wrong password',
        { auth: { passwordCredentials: { username: 'alice', password: 'nope-nope-nope-nope-nope' } } },
      ],
      ['no credentials', { auth: {} }],
      ['not an object', 'garbage'],
    ])('when the request has %s, then 401 "Invalid credentials"', async (_what, body) => {
      const res = await gw()
        .post('/auth/v2.0/tokens')
        .set('Content-Type', 'application/json')
        .send(typeof body === 'string' ? body : JSON.stringify(body));
      expect(res.status).toBe(401);
      expect(res.text).toBe('Invalid credentials');
    });

    it('when a V2 token is validated at /v2.0/tokens/<id>, then the access document comes back', async () => {
      const issued = await gw()
        .post('/auth/v2.0/tokens')
        .send({ auth: { passwordCredentials: { username: 'alice', password: PW } } });
      const res = await gw().get(`/auth/v2.0/tokens/${issued.body.access.token.id}`).set('X-Auth-Token', serviceToken);
      expect(res.status).toBe(200);
      expect(res.body.access.user.id).toBe('alice');
      expect((await gw().get('/auth/v2.0/tokens/garbage').set('X-Auth-Token', serviceToken)).status).toBe(404);
      expect(
        (await gw().get(`/auth/v2.0/tokens/${issued.body.access.token.id}`).set('X-Auth-Token', 'garbage')).status,
      ).toBe(401);
    });
  });

  describe('Keystone V3', () => {
    it('when alice authenticates by name with domain ids, then 201, X-Subject-Token and the full token document', async () => {
      const res = await v3(
        v3Body({ name: 'alice', domain: { id: 'default' } }, PW, {
          project: { name: 'alice', domain: { id: 'default' } },
        }),
      );
      expect(res.status).toBe(201);
      expect(res.headers['x-subject-token']).toBeTruthy();
      const t = res.body.token;
      expect(t.methods).toEqual(['password']);
      expect(t.user).toEqual({
        domain: { id: 'default', name: 'default' },
        id: 'alice',
        name: 'alice',
        password_expires_at: null,
      });
      expect(t.project).toEqual({ domain: { id: 'default', name: 'default' }, id: 'alice', name: 'alice' });
      expect(t.roles).toEqual([{ id: 'swiftoperator', name: 'swiftoperator' }]);
      expect(t.expires_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
      expect(Date.parse(t.expires_at) - Date.parse(t.issued_at)).toBe(86400 * 1000);
      expect(t.audit_ids).toHaveLength(1);
      const types = t.catalog.map((s: { type: string }) => s.type).sort();
      expect(types).toEqual(['identity', 'object-store']);
      for (const service of t.catalog) {
        expect(service.endpoints.map((e: { interface: string }) => e.interface).sort()).toEqual([
          'admin',
          'internal',
          'public',
        ]);
        for (const e of service.endpoints) expect(e).toMatchObject({ region: 'RegionOne', region_id: 'RegionOne' });
      }
      const swift = t.catalog.find((s: { type: string }) => s.type === 'object-store');
      expect(swift.endpoints.find((e: { interface: string }) => e.interface === 'public').url).toBe(
        'http://127.0.0.1:8080/v1/AUTH_alice',
      );
      const identity = t.catalog.find((s: { type: string }) => s.type === 'identity');
      expect(identity.endpoints[0].url).toBe('http://auth.test/auth/v3');
    });

    it('when ids and names are given in any mix, then each object echoes the id given, else the name given', async () => {
      const byNames = await v3(
        v3Body({ name: 'alice', domain: { name: 'Default' } }, PW, {
          project: { name: 'alice', domain: { name: 'Default' } },
        }),
      );
      expect(byNames.status).toBe(201);
      expect(byNames.body.token.user.domain).toEqual({ id: 'Default', name: 'Default' });
      expect(byNames.body.token.project.domain).toEqual({ id: 'Default', name: 'Default' });
      const byIds = await v3(v3Body({ id: 'alice' }, PW, { project: { id: 'alice' } }));
      expect(byIds.status).toBe(201);
      expect(byIds.body.token.user.domain).toEqual({ id: 'default', name: 'default' });
      expect(byIds.body.token.project).toMatchObject({ id: 'alice', name: 'alice' });
    });

    it('when no scope is asked, then the own project; "unscoped" and {"unscoped": {}} give no project or catalog', async () => {
      const none = await v3(v3Body({ name: 'alice' }, PW));
      expect(none.body.token.project.id).toBe('alice');
      for (const scope of ['unscoped', { unscoped: {} }]) {
        const res = await v3(v3Body({ name: 'alice' }, PW, scope));
        expect(res.status).toBe(201);
        expect(res.body.token).not.toHaveProperty('project');
        expect(res.body.token).not.toHaveProperty('catalog');
        expect(res.body.token).not.toHaveProperty('roles');
      }
    });

    it('when the password is wrong or the user unknown, then 401 in Keystone shape with WWW-Authenticate', async () => {
      for (const body of [v3Body({ name: 'alice' }, 'wrong-wrong-wrong-wrong'), v3Body({ name: 'ghost' }, PW)]) {
        const res = await v3(body);
        expect(res.status).toBe(401);
        expect(res.headers['www-authenticate']).toBe('Keystone uri="http://auth.test/auth/v3"');
        expect(res.body).toEqual({
          error: { code: 401, message: 'The request you have made requires authentication.', title: 'Unauthorized' },
        });
      }
    });

    it('when the body is malformed, then 400 in Keystone shape', async () => {
      const res = await v3({ auth: { identity: { methods: ['password'] } } });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 400, title: 'Bad Request' });
      const notJson = await gw().post('/auth/v3/auth/tokens').set('Content-Type', 'application/json').send('{');
      expect(notJson.status).toBe(400);
    });

    it('when a user or project domain has a control character, then 400 says so and no token is issued', async () => {
      const bodies = [
        v3Body({ name: 'alice', domain: { name: 'Default\r\nX-Injected: 1' } }, PW),
        v3Body({ name: 'alice', domain: { id: 'default' } }, PW, {
          project: { name: 'alice', domain: { id: 'de\u0000fault' } },
        }),
      ];
      for (const body of bodies) {
        const res = await v3(body);
        expect(res.status).toBe(400);
        expect(res.body.error.message).toMatch(/domain.*must not contain control characters/);
        expect(res.headers['x-subject-token']).toBeUndefined();
      }
      // Printable domains, Latin-1 included, are echoed as before.
      const ok = await v3(v3Body({ name: 'alice', domain: { name: 'Dömäin 1' } }, PW));
      expect(ok.status).toBe(201);
      expect(ok.body.token.user.domain).toEqual({ id: 'Dömäin 1', name: 'Dömäin 1' });
    });
  });

  describe('validation as keystonemiddleware does it', () => {
    it('when GET and HEAD validate with ?nocatalog, allow_expired and the access-rules header, then 200', async () => {
      const token = await aliceToken();
      const res = await gw()
        .get('/auth/v3/auth/tokens?nocatalog&allow_expired=1')
        .set('X-Auth-Token', serviceToken)
        .set('X-Subject-Token', token)
        .set('OpenStack-Identity-Access-Rules', '1');
      expect(res.status).toBe(200);
      expect(res.body.token).not.toHaveProperty('catalog');
      expect(res.body.token.roles).toEqual([{ id: 'swiftoperator', name: 'swiftoperator' }]);
      const head = await gw()
        .head('/auth/v3/auth/tokens')
        .set('X-Auth-Token', serviceToken)
        .set('X-Subject-Token', token);
      expect(head.status).toBe(200);
    });

    it('when a non-ASCII user logs in, then login answers keep the name while validation answers spell ids and names as Python 3 Swift reads its path', async () => {
      // keystonemiddleware copies these into X-Project-Id etc.; Swift's keystoneauth compares
      // AUTH_<X-Project-Id> with the path's account, held as UTF-8 bytes one latin-1 character each.
      await stack.createUser('zoë', PW);
      const wsgi = 'zo\u00c3\u00ab';
      const url = 'http://127.0.0.1:8080/v1/AUTH_zo%C3%AB';
      const login = await v3(v3Body({ name: 'zoë', domain: { id: 'default' } }, PW));
      expect(login.status).toBe(201);
      expect(login.body.token.project).toMatchObject({ id: 'zoë', name: 'zoë' });
      expect(login.body.token.user).toMatchObject({ id: 'zoë', name: 'zoë' });
      const v3Valid = await validate(login.headers['x-subject-token'] as string);
      expect(v3Valid.status).toBe(200);
      expect(v3Valid.body.token.project).toEqual({ domain: { id: 'default', name: 'default' }, id: wsgi, name: wsgi });
      expect(v3Valid.body.token.user).toMatchObject({
        id: wsgi,
        name: wsgi,
        domain: { id: 'default', name: 'default' },
      });
      const swift = v3Valid.body.token.catalog.find((s: { type: string }) => s.type === 'object-store');
      expect(swift.endpoints.find((e: { interface: string }) => e.interface === 'public').url).toBe(url);

      const v2Login = await gw()
        .post('/auth/v2.0/tokens')
        .send({ auth: { passwordCredentials: { username: 'zoë', password: PW } } });
      expect(v2Login.body.access.token.tenant).toMatchObject({ id: 'zoë', name: 'zoë' });
      const v2Valid = await gw()
        .get(`/auth/v2.0/tokens/${v2Login.body.access.token.id}`)
        .set('X-Auth-Token', serviceToken);
      expect(v2Valid.status).toBe(200);
      expect(v2Valid.body.access.token.tenant).toMatchObject({ id: wsgi, name: wsgi });
      expect(v2Valid.body.access.user).toMatchObject({ id: wsgi, name: wsgi, username: wsgi });
      expect(v2Valid.body.access.serviceCatalog[0].endpoints[0]).toMatchObject({ publicURL: url, tenantId: wsgi });

      const v1Token = (await v1('zoë', PW)).headers['x-auth-token'] as string;
      expect((await validate(v1Token)).body.token.project.id).toBe(wsgi);
    });

    it('when the subject token is unknown, forged or tampered, then 404 (never 401)', async () => {
      const token = await aliceToken();
      const forged = jwt.sign({ jti: 'x'.repeat(22), aud: 'anything' }, 'not-the-cluster-key-not-the-cluster-key', {
        expiresIn: 3600,
      });
      const [head, payload] = token.split('.');
      const tampered = `${head}.${payload}.${'A'.repeat(43)}`;
      for (const subject of ['garbage', forged, tampered, `${token}x`]) {
        const res = await validate(subject);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: { code: 404, message: 'Failed to validate token', title: 'Not Found' } });
      }
    });

    it("when the caller's own token is missing or bad, then 401", async () => {
      const token = await aliceToken();
      expect((await gw().get('/auth/v3/auth/tokens').set('X-Subject-Token', token)).status).toBe(401);
      expect((await validate(token, 'garbage')).status).toBe(401);
    });

    it("when a normal user validates someone else's token, then 403; its own, 200", async () => {
      const bob = await stack.createUser('bob', PW);
      expect(bob.id).toBeTruthy();
      const bobToken = (await v1('bob', PW)).headers['x-auth-token'] as string;
      const token = await aliceToken();
      expect((await validate(token, bobToken)).status).toBe(403);
      expect((await validate(token, token)).status).toBe(200);
    });

    it('when a token is issued, then it carries at least 128 random bits and expires with its lifetime', async () => {
      const token = await aliceToken();
      const claims = jwt.decode(token) as { jti: string; exp: number; iat: number };
      expect(Buffer.from(claims.jti, 'base64url').length).toBeGreaterThanOrEqual(16);
      expect(claims.exp - claims.iat).toBe(86400);
      // V1 hands alice her live token again (as tempauth does); a V3 login always gets a new one.
      const v3Token = (await v3(v3Body({ name: 'alice', domain: { id: 'default' } }, PW))).headers[
        'x-subject-token'
      ] as string;
      expect(jwt.decode(v3Token)).toMatchObject({ exp: expect.any(Number) });
      expect((jwt.decode(v3Token) as { jti: string }).jti).not.toBe(claims.jti);
    });
  });

  describe('roles and accounts', () => {
    it('when a superuser logs in, then its own account with swiftoperator and ResellerAdmin; others with ResellerAdmin', async () => {
      const own = await v3(v3Body({ name: 'swift-service' }, SERVICE_PW));
      expect(own.body.token.roles.map((r: { name: string }) => r.name)).toEqual(['swiftoperator', 'ResellerAdmin']);
      const other = await v3(v3Body({ name: 'swift-service' }, SERVICE_PW, { project: { name: 'alice' } }));
      expect(other.body.token.roles.map((r: { name: string }) => r.name)).toEqual(['ResellerAdmin']);
    });

    it('when a superuser gets tokens over V2 and V3 and they are validated over V2 and V3, then every role has the same id and name in all four answers', async () => {
      const expected = [
        { id: 'swiftoperator', name: 'swiftoperator' },
        { id: 'ResellerAdmin', name: 'ResellerAdmin' },
      ];
      const v2issued = await gw()
        .post('/auth/v2.0/tokens')
        .send({ auth: { passwordCredentials: { username: 'swift-service', password: SERVICE_PW } } });
      expect(v2issued.body.access.user.roles).toEqual(expected);
      const v2validated = await gw()
        .get(`/auth/v2.0/tokens/${v2issued.body.access.token.id}`)
        .set('X-Auth-Token', serviceToken);
      expect(v2validated.body.access.user.roles).toEqual(expected);
      const v3issued = await v3(v3Body({ name: 'swift-service' }, SERVICE_PW));
      expect(v3issued.body.token.roles).toEqual(expected);
      expect((await validate(v3issued.headers['x-subject-token'] as string)).body.token.roles).toEqual(expected);
      // The same token seen through the other version: still the same roles.
      const v3validated = await validate(v2issued.body.access.token.id as string);
      expect(v3validated.body.token.roles).toEqual(expected);
    });

    it("when alice asks for bob's account, then she gets a token for it with no operator role", async () => {
      const res = await v3(v3Body({ name: 'alice' }, PW, { project: { name: 'bob' } }));
      expect(res.status).toBe(201);
      expect(res.body.token.project.id).toBe('bob');
      expect(res.body.token.roles).toEqual([]);
      const v1res = await v1('bob:alice', PW);
      expect(v1res.headers['x-storage-url']).toBe('http://127.0.0.1:8080/v1/AUTH_bob');
      expect((await validate(v1res.headers['x-auth-token'] as string)).body.token.roles).toEqual([]);
    });
  });

  describe('revocation', () => {
    it('when a token is deleted, then it no longer validates, and deleting it again is 404', async () => {
      const token = await aliceToken();
      const del = await gw()
        .delete('/auth/v3/auth/tokens')
        .set('X-Auth-Token', serviceToken)
        .set('X-Subject-Token', token);
      expect(del.status).toBe(204);
      expect((await validate(token)).status).toBe(404);
      expect(
        (await gw().delete('/auth/v3/auth/tokens').set('X-Auth-Token', serviceToken).set('X-Subject-Token', token))
          .status,
      ).toBe(404);
    });

    it("when a superuser revokes a user's tokens over V1, then all of them fail and new ones work", async () => {
      const a = await aliceToken();
      const b = await aliceToken();
      const superV1 = (await v1('swift-service', SERVICE_PW)).headers['x-auth-token'] as string;
      const refused = await gw().delete('/auth/v1.0/users/alice/token').set('X-Auth-Token', a);
      expect(refused.status).toBe(403);
      const res = await gw().delete('/auth/v1.0/users/alice/token').set('X-Auth-Token', superV1);
      expect(res.status).toBe(204);
      expect((await validate(a)).status).toBe(404);
      expect((await validate(b)).status).toBe(404);
      await new Promise((r) => setTimeout(r, 5));
      expect((await validate(await aliceToken())).status).toBe(200);
      expect((await gw().delete('/auth/v1.0/users/nobody/token').set('X-Auth-Token', superV1)).status).toBe(404);
    });

    it('when the user named for revocation cannot exist (NUL, control characters, a colon), then 404, not a database error', async () => {
      const superV1 = (await v1('swift-service', SERVICE_PW)).headers['x-auth-token'] as string;
      for (const name of ['a%00b', 'a%0Db', 'a%3Ab', '%7F']) {
        const res = await gw().delete(`/auth/v1.0/users/${name}/token`).set('X-Auth-Token', superV1);
        expect([name, res.status]).toEqual([name, 404]);
      }
    });

    it.each([
      ['disabled', { enabled: false }],
      ['given a new password', { password: 'a-completely-new-password-1' }],
      ['made a superuser', { is_superuser: true }],
    ])('when the user is %s through the management API, then its tokens fail within 1 s', async (_what, change) => {
      const user = await stack.createUser(`carol-${Object.keys(change)[0]}`, PW);
      const name = `carol-${Object.keys(change)[0]}`;
      const token = (await v1(name, PW)).headers['x-auth-token'] as string;
      expect((await validate(token)).status).toBe(200);
      expect(await stack.patchUser(user.id, change)).toBe(202);
      await within(1000, async () => (await validate(token)).status === 404);
    });

    it('when a user is deleted and re-created with the same name, then old tokens stay invalid', async () => {
      const user = await stack.createUser('erin', PW);
      const token = (await v1('erin', PW)).headers['x-auth-token'] as string;
      expect(await stack.deleteUser(user.id)).toBe(204);
      await within(1000, async () => (await validate(token)).status === 404);
      expect((await v1('erin', PW)).status).toBe(401);
      await stack.createUser('erin', PW);
      expect((await validate(token)).status).toBe(404);
      expect((await v1('erin', PW)).status).toBe(200);
    });
  });

  describe('failed-login limit', () => {
    it('when a username fails too often from one address, then that address gets 429 with Retry-After for it, even with the right password', async () => {
      await stack.createUser('frank', PW);
      for (let i = 0; i < 5; i++) expect((await v1('frank', `wrong-${i}-wrong-wrong-wrong`)).status).toBe(401);
      const limited = await v1('frank', PW);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      const v3limited = await v3(v3Body({ name: 'frank' }, PW));
      expect(v3limited.status).toBe(429);
      expect(v3limited.body.error.code).toBe(429);
      expect((await v1('alice', PW)).status).toBe(200);
    });
  });
}
