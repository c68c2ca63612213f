/**
 * What a token from an application credential may ask of the gateway's identity API, over HTTP
 * against real Postgres and Redis. A token with access rules is limited by them to object-store
 * requests: every route of the gateway refuses it (the routes are read from the app's own route
 * table, so a route added later is covered), except revoking itself. A restricted credential's
 * token may not make the service's reads (another user's EC2 credentials, EC2 secrets in clear,
 * s3tokens) nor remove credentials of any kind.
 */
import request from 'supertest';
import { AUTH_ROOT, createApp } from '@cairn/auth-gateway';
import { startStack, type Stack } from '../support/stack';
import { createEc2, S3_KEYS, signedBody, type Ec2Credential } from '../s3/s3-client';

const PW = 'alice-password-0123456789';
const ROOT_PW = 'root-service-password-0123456789';

const ACCESS_RULES_MESSAGE =
  "You are not authorized to perform the requested action: this token's application credential has access rules, which allow only object-store requests.";
const RESTRICTED_MESSAGE =
  "You are not authorized to perform the requested action: Using method 'application_credential' is not allowed for managing additional application credentials.";
const RESTRICTED_SERVICE_MESSAGE =
  "You are not authorized to perform the requested action: a restricted application credential's token may not read other users' credentials or check S3 signatures; use a password or an unrestricted application credential for the proxy's service user.";

const passwordBody = (name: string, password: string) => ({
  auth: {
    identity: { methods: ['password'], password: { user: { name, domain: { id: 'default' }, password } } },
    scope: { project: { name, domain: { id: 'default' } } },
  },
});
const appCredBody = (id: string, secret: string) => ({
  auth: { identity: { methods: ['application_credential'], application_credential: { id, secret } } },
});

interface Route {
  method: string;
  path: string;
}

/**
 * Every route the gateway serves under /auth, from the app's route table: the routers mounted
 * there, however nested, and the method of each of their routes (`_all`: a route answering every
 * other method 405).
 */
function authRoutes(app: ReturnType<typeof createApp>): Route[] {
  type Layer = {
    rawPath?: string;
    handle: { stack?: Layer[] };
    route?: { path: string; methods: Record<string, boolean> };
  };
  const routes: Route[] = [];
  const walk = (stack: Layer[]): void => {
    for (const layer of stack) {
      if (layer.handle.stack) walk(layer.handle.stack);
      if (!layer.route) continue;
      for (const method of Object.keys(layer.route.methods)) routes.push({ method, path: layer.route.path });
    }
  };
  const top = (app as unknown as { router: { stack: Layer[] } }).router.stack;
  for (const mounted of top) if (mounted.rawPath === AUTH_ROOT && mounted.handle.stack) walk(mounted.handle.stack);
  return routes;
}

describe('application credential tokens at the identity API', () => {
  let stack: Stack;
  const gw = () => request(stack.gatewayUrl);
  let rootToken: string;
  let aliceToken: string;
  let aliceEc2: Ec2Credential;

  const tokenOf = async (user: string, password: string) => {
    const res = await gw().post('/auth/v3/auth/tokens').send(passwordBody(user, password));
    expect(res.status).toBe(201);
    return res.headers['x-subject-token'] as string;
  };
  /** A credential made with `token` for its user, and a token from it. */
  const credentialToken = async (user: string, token: string, credential: Record<string, unknown>) => {
    const made = await gw()
      .post(`/auth/v3/users/${user}/application_credentials`)
      .set('X-Auth-Token', token)
      .send({ application_credential: credential });
    expect(made.status).toBe(201);
    const { id, secret } = made.body.application_credential as { id: string; secret: string };
    const login = await gw().post('/auth/v3/auth/tokens').send(appCredBody(id, secret));
    expect(login.status).toBe(201);
    return { id, token: login.headers['x-subject-token'] as string };
  };
  const validate = (subject: string, caller = rootToken) =>
    gw()
      .get('/auth/v3/auth/tokens')
      .set('X-Auth-Token', caller)
      .set('X-Subject-Token', subject)
      .set('OpenStack-Identity-Access-Rules', '1');
  const ec2Keys = async (user: string) =>
    (await stack.db('s3_credentials').join('storage_users', 'storage_users.id', 's3_credentials.storage_user_id'))
      .filter((r: { username: string }) => r.username === user)
      .map((r: { access_key: string }) => r.access_key);

  beforeAll(async () => {
    stack = await startStack({
      database: 'postgres',
      redis: true,
      s3SecretKeys: S3_KEYS,
    });
    await stack.createUser('alice', PW);
    await stack.createUser('bob', PW);
    await stack.createUser('root-svc', ROOT_PW, { is_superuser: true });
    rootToken = await tokenOf('root-svc', ROOT_PW);
    aliceToken = await tokenOf('alice', PW);
    aliceEc2 = await createEc2(stack.gatewayUrl, aliceToken, 'alice');
  });
  afterAll(() => stack?.close());

  describe('a superuser credential limited by access rules to GET /v1/AUTH_svc/metrics/*', () => {
    let ruled: { id: string; token: string };
    beforeAll(async () => {
      ruled = await credentialToken('root-svc', rootToken, {
        name: 'metrics-reader',
        access_rules: [{ service: 'object-store', method: 'GET', path: '/v1/AUTH_svc/metrics/*' }],
      });
    });

    it('when the route table is read, then it holds every identity route this test must cover', () => {
      const routes = authRoutes(createApp(stack.gatewayDeps)).map((r) => `${r.method} ${r.path}`);
      // A guard against the walk finding nothing (the table's shape changed): the routes of the escape.
      expect(routes).toEqual(
        expect.arrayContaining([
          'get /v3/users/:userId/credentials/OS-EC2',
          'delete /v3/auth/tokens',
          'delete /v1.0/users/:name/token',
          'post /v3/s3tokens',
          'get /v2.0/tokens/:token',
          'post /v3/users/:userId/application_credentials',
        ]),
      );
    });

    it.each(['X-Auth-Token', 'X-Storage-Token'])(
      'when its token is sent in %s to every route of the gateway, then each refuses it with 403 and a sentence, and nothing changes',
      async (headerName) => {
        const bobToken = await tokenOf('bob', PW);
        const values: Record<string, string> = {
          userId: 'alice',
          credentialId: '0'.repeat(32),
          accessKey: aliceEc2.access,
          token: aliceToken,
          name: 'bob',
        };
        const routes = authRoutes(createApp(stack.gatewayDeps));
        expect(routes.length).toBeGreaterThan(20);
        for (const route of routes) {
          const path = route.path.replace(/:(\w+)/g, (_m, p: string) => encodeURIComponent(values[p] ?? p));
          const method = route.method === '_all' ? 'patch' : route.method;
          const sent = (gw() as unknown as Record<string, (url: string) => request.Test>)[method]!(
            `${AUTH_ROOT}${path}`,
          )
            .set(headerName, ruled.token)
            .set('X-Subject-Token', bobToken)
            .set('X-Auth-User', 'alice')
            .set('X-Auth-Key', PW);
          const res = await (method === 'post' || method === 'patch'
            ? sent.send(signedBody(aliceEc2.access, aliceEc2.secret))
            : sent);
          const said = (res.body as { error?: { message?: string } } | undefined)?.error?.message ?? res.text;
          expect({ route: `${route.method} ${route.path}`, status: res.status, said }).toEqual({
            route: `${route.method} ${route.path}`,
            status: 403,
            said: method === 'head' ? '' : ACCESS_RULES_MESSAGE,
          });
        }
        // Nobody's tokens were revoked, no credential was read in clear, made or removed.
        expect((await validate(aliceToken)).status).toBe(200);
        expect((await validate(bobToken)).status).toBe(200);
        expect(await ec2Keys('alice')).toEqual([aliceEc2.access]);
        expect(await ec2Keys('root-svc')).toEqual([]);
      },
    );

    it('when it asks for what the escape did (alice’s S3 secret, revoking bob, validating, s3tokens), then each is a 403 with the sentence', async () => {
      const bobToken = await tokenOf('bob', PW);
      const answers = [
        await gw().get('/auth/v3/users/alice/credentials/OS-EC2').set('X-Auth-Token', ruled.token),
        await gw().delete('/auth/v3/auth/tokens').set('X-Auth-Token', ruled.token).set('X-Subject-Token', bobToken),
        await gw().get('/auth/v3/auth/tokens').set('X-Auth-Token', ruled.token).set('X-Subject-Token', bobToken),
        await gw()
          .post('/auth/v3/s3tokens')
          .set('X-Auth-Token', ruled.token)
          .send(signedBody(aliceEc2.access, aliceEc2.secret)),
      ];
      for (const res of answers) {
        expect(res.status).toBe(403);
        expect(res.body.error.message).toBe(ACCESS_RULES_MESSAGE);
        expect(res.text).not.toContain(aliceEc2.secret);
      }
      const v1 = await gw().delete('/auth/v1.0/users/bob/token').set('X-Auth-Token', ruled.token);
      expect(v1.status).toBe(403);
      expect(v1.text).toBe(ACCESS_RULES_MESSAGE);
      expect((await validate(bobToken)).status).toBe(200);
    });

    it('when the Swift proxy validates it, then it is found with its rules; and it may revoke itself, and nothing else', async () => {
      const { token } = await credentialToken('root-svc', rootToken, {
        name: 'logs-out',
        access_rules: [{ service: 'object-store', method: 'GET', path: '/v1/AUTH_svc/metrics/*' }],
      });
      const valid = await validate(token);
      expect(valid.status).toBe(200);
      expect(valid.body.token.application_credential.access_rules).toEqual([
        expect.objectContaining({ service: 'object-store', method: 'GET', path: '/v1/AUTH_svc/metrics/*' }),
      ]);
      const itself = await gw().delete('/auth/v3/auth/tokens').set('X-Auth-Token', token).set('X-Subject-Token', token);
      expect(itself.status).toBe(204);
      expect((await validate(token)).status).toBe(404);
    });
  });

  describe('a restricted credential (no access rules)', () => {
    it("when a superuser's restricted credential reads another user's EC2 credentials or asks s3tokens, then 403 with a sentence; unrestricted, it may", async () => {
      const restricted = await credentialToken('root-svc', rootToken, { name: 'svc-restricted' });
      const list = await gw().get('/auth/v3/users/alice/credentials/OS-EC2').set('X-Auth-Token', restricted.token);
      expect(list.status).toBe(403);
      expect(list.body.error.message).toBe(RESTRICTED_SERVICE_MESSAGE);
      const one = await gw()
        .get(`/auth/v3/users/alice/credentials/OS-EC2/${aliceEc2.access}`)
        .set('X-Auth-Token', restricted.token);
      expect(one.status).toBe(403);
      const s3tokens = await gw()
        .post('/auth/v3/s3tokens')
        .set('X-Auth-Token', restricted.token)
        .send(signedBody(aliceEc2.access, aliceEc2.secret));
      expect(s3tokens.status).toBe(403);
      expect(s3tokens.body.error.message).toBe(RESTRICTED_SERVICE_MESSAGE);
      // Validation stays open to it, as Keystone allows a restricted credential's service token.
      expect((await validate(aliceToken, restricted.token)).status).toBe(200);

      const unrestricted = await credentialToken('root-svc', rootToken, { name: 'svc-full', unrestricted: true });
      const read = await gw().get('/auth/v3/users/alice/credentials/OS-EC2').set('X-Auth-Token', unrestricted.token);
      expect(read.status).toBe(200);
      expect(read.body.credentials[0].secret).toBe(aliceEc2.secret);
      const signed = await gw()
        .post('/auth/v3/s3tokens')
        .set('X-Auth-Token', unrestricted.token)
        .send(signedBody(aliceEc2.access, aliceEc2.secret));
      expect(signed.status).toBe(200);
    });

    it("when a superuser's restricted credential reads its own EC2 credentials, then it sees them without their secrets", async () => {
      const own = await createEc2(stack.gatewayUrl, rootToken, 'root-svc');
      const restricted = await credentialToken('root-svc', rootToken, { name: 'svc-own' });
      const list = await gw().get('/auth/v3/users/root-svc/credentials/OS-EC2').set('X-Auth-Token', restricted.token);
      expect(list.status).toBe(200);
      expect(list.body.credentials.map((c: { access: string; secret: unknown }) => [c.access, c.secret])).toEqual([
        [own.access, null],
      ]);
      await gw().delete(`/auth/v3/users/root-svc/credentials/OS-EC2/${own.access}`).set('X-Auth-Token', rootToken);
    });

    it("when a restricted credential's token deletes its user's EC2 credential, then 403 as for application credentials, and the key stays; an unrestricted one may", async () => {
      const key = await createEc2(stack.gatewayUrl, aliceToken, 'alice');
      const restricted = await credentialToken('alice', aliceToken, { name: 'alice-restricted' });
      const refused = await gw()
        .delete(`/auth/v3/users/alice/credentials/OS-EC2/${key.access}`)
        .set('X-Auth-Token', restricted.token);
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toBe(RESTRICTED_MESSAGE);
      expect(await ec2Keys('alice')).toContain(key.access);
      // Reading stays allowed, as listing application credentials does.
      const list = await gw().get('/auth/v3/users/alice/credentials/OS-EC2').set('X-Auth-Token', restricted.token);
      expect(list.status).toBe(200);

      const unrestricted = await credentialToken('alice', aliceToken, { name: 'alice-full', unrestricted: true });
      const deleted = await gw()
        .delete(`/auth/v3/users/alice/credentials/OS-EC2/${key.access}`)
        .set('X-Auth-Token', unrestricted.token);
      expect(deleted.status).toBe(204);
      expect(await ec2Keys('alice')).not.toContain(key.access);
    });
  });
});
