import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ADMIN_AUTH, startStack, type Stack, type StackOptions } from '../support/stack';
import { responseCheckerFor, type ResponseChecker } from '../../services/management-api/test/support/openapi-responses';

/**
 * Storage users' self-service over real HTTP: the management API and a real auth gateway of the
 * cluster, on Postgres + Redis and on PGlite + the in-process token store. The password is checked
 * by the gateway (its counters are the ones a Swift login uses); the session is a cookie that
 * reaches the storage user's own account through /api/v1/self/ and nothing else.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PW = 'storage-user-password-0123';
const FAILURE_LIMIT = 3;
const REFUSED =
  "A storage user's session reaches only its own account, under /api/v1/self/; this resource is for operators.";

interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

describe.each<[string, Pick<StackOptions, 'database' | 'redis'>]>([
  ['Postgres + Redis', { database: 'postgres', redis: true }],
  ['PGlite + in-process store', { database: 'pglite', redis: false }],
])('self-service on %s', (_name, backend) => {
  let stack: Stack;
  let checker: ResponseChecker;
  // Names unique to this run: the shared Redis keeps failure counters by name.
  const tag = randomBytes(3).toString('hex');
  const alice = `alice${tag}`;
  const bob = `bob${tag}`;

  const call = async (
    method: string,
    path: string,
    options: { body?: unknown; cookie?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> => {
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: {
        Accept: 'application/json',
        ...(options.body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...(options.cookie ? { Cookie: options.cookie } : {}),
        ...options.headers,
      },
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    // Every answer, refusals included, must be what the OpenAPI document says.
    const problem = checker.problem(method, `${stack.apiUrl}${path}`, {
      status: res.status,
      headers: Object.fromEntries(res.headers),
      text,
    } as unknown as Parameters<ResponseChecker['problem']>[2]);
    expect(problem).toBeNull();
    let body: Record<string, unknown> = {};
    try {
      body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    } catch {
      body = { text };
    }
    return { status: res.status, body, headers: res.headers };
  };
  const admin = (method: string, path: string, body?: unknown) =>
    call(method, path, { body, headers: { Authorization: ADMIN_AUTH } });

  /** Signs in; the cookie (name=value) and the CSRF token. */
  const signIn = async (user: string, password = PW): Promise<{ cookie: string; csrf: string; answer: Answer }> => {
    const answer = await call('POST', '/api/v1/self/session/', { body: { cluster: 'default', user, password } });
    const setCookie = answer.headers.get('set-cookie') ?? '';
    return { cookie: setCookie.split(';')[0]!, csrf: String(answer.body.csrf_token), answer };
  };
  const gatewayLogin = (user: string, password: string) =>
    fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: { methods: ['password'], password: { user: { name: user, domain: { id: 'default' }, password } } },
        },
      }),
    });

  const today = Math.floor(Date.now() / DAY) * DAY;
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

  beforeAll(async () => {
    stack = await startStack({
      ...backend,
      // S3 keys made through My keys are sealed by the gateway and checked by its s3tokens.
      s3SecretKeys: `selfkeys:${randomBytes(32).toString('base64')}`,
      gateway: { failureLimit: FAILURE_LIMIT, s3tokensRequireServiceToken: false },
    });
    checker = responseCheckerFor(await (await fetch(`${stack.apiUrl}/api/v1/openapi.json`)).text());
    // The cluster's auth_url is where the management API asks the gateway.
    expect((await admin('PATCH', '/api/v1/clusters/1/', { auth_url: `${stack.gatewayUrl}/auth` })).status).toBe(202);
    expect(
      (
        await admin('PUT', '/api/v1/clusters/1/devices/', {
          policies: [
            { index: 0, name: 'gold', default: true },
            { index: 1, name: 'Silver' },
          ],
          devices: [],
        })
      ).status,
    ).toBe(204);
    await stack.createUser(alice, PW, { quota_bytes: 10000, quota_count: 100, quota_bytes_policy: { gold: 8000 } });
    await stack.createUser(bob, PW, { quota_bytes: 999 });
    // Two days of alice's storage (yesterday, then today) and one hour of transfer today; bob's too.
    const rounds: Array<[number, Array<Record<string, unknown>>]> = [
      [
        today - DAY + 60_000,
        [
          sample(alice, 3000, 30, [
            [0, 2000, 20],
            [1, 1000, 10],
          ]),
          sample(bob, 77, 7, []),
        ],
      ],
      [
        today + 60_000,
        [
          sample(alice, 4000, 40, [
            [0, 2500, 25],
            [1, 1500, 15],
          ]),
        ],
      ],
    ];
    for (const [at, samples] of rounds) {
      const res = await admin('POST', '/api/v1/clusters/1/utilization/storage/', {
        interval: 3600,
        sampled_at: iso(at),
        samples,
      });
      expect(res.status).toBe(200);
    }
    const transfer = await admin('POST', '/api/v1/clusters/1/utilization/transfer/', {
      batch_id: randomBytes(24).toString('hex'),
      covered: { start: iso(today), end: iso(today + 60_000) },
      records: [
        { account: `AUTH_${alice}`, policy_index: 0, hour: iso(today), bytes_in: 5000, bytes_out: 700, req_count: 9 },
        { account: `AUTH_${bob}`, policy_index: 0, hour: iso(today), bytes_in: 1, bytes_out: 1, req_count: 1 },
      ],
    });
    expect(transfer.status).toBe(200);
  });
  afterAll(() => stack?.close());

  function sample(user: string, bytes: number, objects: number, policies: Array<[number, number, number]>) {
    return {
      account: `AUTH_${user}`,
      bytes_used: bytes,
      object_count: objects,
      container_count: 1,
      policies: policies.map(([index, b, o]) => ({ index, bytes_used: b, object_count: o, container_count: 1 })),
    };
  }

  it('when a storage user signs in with its password, then an HttpOnly SameSite=Strict cookie names it and My storage shows its own account', async () => {
    const { cookie, answer } = await signIn(alice);
    expect(answer.status).toBe(201);
    expect(answer.headers.get('set-cookie')).toMatch(
      /^cairn_storage_session=[\w-]{43}; Path=\/; HttpOnly; SameSite=Strict$/,
    );
    expect(answer.body).toMatchObject({ user: alice, cluster: 'default', account: `AUTH_${alice}` });
    expect(JSON.stringify(answer.body)).not.toContain(PW);
    expect((await call('GET', '/api/v1/self/session/', { cookie })).body).toMatchObject({ user: alice });

    const mine = await call('GET', '/api/v1/self/storage/', { cookie });
    expect(mine.status).toBe(200);
    expect(mine.body).toMatchObject({
      account: `AUTH_${alice}`,
      bytes_used: 4000,
      object_count: 40,
      quota_bytes: 10000,
      quota_count: 100,
      usage_sampled_at: new Date(today).toISOString(),
      policies: [
        { index: 0, name: 'gold', bytes_used: 2500, object_count: 25, quota_bytes: 8000, quota_count: null },
        { index: 1, name: 'Silver', bytes_used: 1500, object_count: 15, quota_bytes: null, quota_count: null },
      ],
    });
    const days = mine.body.days as Array<Record<string, unknown>>;
    expect(days).toHaveLength(30);
    expect(days[29]).toEqual({
      day: iso(today).slice(0, 10),
      bytes_used: 4000,
      object_count: 40,
      bytes_in: 5000,
      bytes_out: 700,
      requests: 9,
    });
    expect(days[28]).toMatchObject({ bytes_used: 3000, object_count: 30, bytes_in: 0 });
    expect(days[0]).toMatchObject({ bytes_used: null, bytes_in: 0 });
  });

  it("when two users are signed in, then each session's My storage is its own account, whatever the request names", async () => {
    const a = await signIn(alice);
    const b = await signIn(bob);
    const mineB = await call('GET', `/api/v1/self/storage/?user=${alice}&account=AUTH_${alice}`, { cookie: b.cookie });
    expect(mineB.body).toMatchObject({ user: bob, account: `AUTH_${bob}`, bytes_used: 77, quota_bytes: 999 });
    expect(JSON.stringify(mineB.body)).not.toContain(alice);
    expect((await call('GET', '/api/v1/self/storage/', { cookie: a.cookie })).body).toMatchObject({ user: alice });
  });

  it("when a script sends the user's own gateway token, then My storage answers it as for the session; a dead, forged, access-ruled or other account's token is refused with a sentence", async () => {
    const INVALID_TOKEN =
      "This token is not valid (expired, revoked, or not a token of any of this API's clusters). Log in again (swift auth, or POST /v3/auth/tokens at your cluster's auth URL) and send the new token.";
    const withToken = (token: string, path = '/api/v1/self/storage/') =>
      call('GET', path, { headers: { 'X-Auth-Token': token } });
    const session = await signIn(alice);
    const bySession = await call('GET', '/api/v1/self/storage/', { cookie: session.cookie });

    // A Keystone V3 token and a Swift V1 token (what `swift auth` prints) read the same figures.
    const v3 = await gatewayLogin(alice, PW);
    expect(v3.status).toBe(201);
    await v3.body?.cancel();
    const token = v3.headers.get('x-subject-token')!;
    const v1 = await fetch(`${stack.gatewayUrl}/auth/v1.0`, { headers: { 'X-Auth-User': alice, 'X-Auth-Key': PW } });
    await v1.body?.cancel();
    for (const t of [token, v1.headers.get('x-auth-token')!]) {
      const mine = await withToken(t);
      expect([mine.status, mine.headers.get('cache-control'), mine.body]).toEqual([200, 'private', bySession.body]);
    }
    // Naming another user changes nothing: the token decides whose account.
    expect((await withToken(token, `/api/v1/self/storage/?user=${bob}`)).body).toMatchObject({ user: alice });
    // The other self-service routes take the session only, and say so.
    const keys = await withToken(token, '/api/v1/self/s3_credentials/');
    expect([keys.status, String(keys.body.error)]).toEqual([
      401,
      expect.stringMatching(/reads only GET \/api\/v1\/self\/storage\//),
    ]);

    // A token for bob's account (alice has no role there) is not alice's usage either.
    const scoped = await fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: alice, domain: { id: 'default' }, password: PW } },
          },
          scope: { project: { name: bob, domain: { id: 'default' } } },
        },
      }),
    });
    await scoped.body?.cancel();
    const other = await withToken(scoped.headers.get('x-subject-token')!);
    expect([other.status, String(other.body.error)]).toEqual([
      403,
      expect.stringMatching(`^This token is for the account AUTH_${bob}, not your own`),
    ]);

    // An access-ruled credential's token follows the sign-in's rule.
    const ruled = await call('POST', '/api/v1/self/application_credentials/', {
      cookie: session.cookie,
      headers: { 'X-Cairn-CSRF': session.csrf },
      body: {
        name: `script-ruled-${tag}`,
        access_rules: [{ service: 'object-store', method: 'GET', path: `/v1/AUTH_${alice}/x` }],
      },
    });
    expect(ruled.status).toBe(201);
    const ruledLogin = await fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { id: ruled.body.id, secret: ruled.body.secret },
          },
        },
      }),
    });
    await ruledLogin.body?.cancel();
    const refused = await withToken(ruledLogin.headers.get('x-subject-token')!);
    expect([refused.status, String(refused.body.error)]).toEqual([
      403,
      expect.stringMatching(/^This token comes from an application credential with access rules/),
    ]);
    expect(
      (
        await call('DELETE', String(ruled.body.resource_uri), {
          cookie: session.cookie,
          headers: { 'X-Cairn-CSRF': session.csrf },
        })
      ).status,
    ).toBe(204);

    // Forged: the cluster's uuid as audience, signed with another key; the gateway refuses it.
    const uuid = String((await admin('GET', '/api/v1/clusters/1/')).body.uuid);
    const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ jti: 'x', aud: uuid, iat: 1, exp: 4102444800 })}`;
    const forged = `${unsigned}.${createHmac('sha256', 'not-the-key').update(unsigned).digest('base64url')}`;
    // No cluster has the audience of the last one: no gateway is asked.
    const elsewhere = `${part({ alg: 'HS256' })}.${part({ aud: '00000000-0000-4000-8000-00000000beef' })}.x`;
    for (const t of [forged, 'not-a-token', elsewhere]) {
      const res = await withToken(t);
      expect([res.status, res.body.error]).toEqual([401, INVALID_TOKEN]);
    }
    // Revoked at the gateway: refused at once.
    const revoked = await fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
      method: 'DELETE',
      headers: { 'X-Auth-Token': token, 'X-Subject-Token': token },
    });
    expect(revoked.status).toBe(204);
    expect([(await withToken(token)).status, (await withToken(token)).body.error]).toEqual([401, INVALID_TOKEN]);
  });

  it('when the password, the user or the cluster is wrong, then 401 with one sentence and no cookie; with no body, 400 saying what is missing', async () => {
    for (const body of [
      { cluster: 'default', user: alice, password: 'wrong-password-xyz' },
      { cluster: 'default', user: `nobody${tag}`, password: PW },
      { cluster: 'no-such-cluster', user: alice, password: PW },
      // Names no user can have: looked up nowhere, refused the same way.
      { cluster: 'default', user: 'nul\u0000name', password: PW },
      { cluster: 'default', user: "' OR '1'='1", password: PW },
    ]) {
      const res = await call('POST', '/api/v1/self/session/', { body });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('The cluster, user name or password is not right.');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    const empty = await call('POST', '/api/v1/self/session/', { body: {} });
    expect(empty.status).toBe(400);
    expect(String(empty.body.error)).toMatch(/cluster is required/);
    const odd = await call('POST', '/api/v1/self/session/', {
      body: { cluster: 'a\u0000b', user: alice, password: PW },
    });
    expect([odd.status, odd.body.error]).toEqual([
      400,
      "The 'cluster' field must be 1 to 255 characters with no '/' and no control characters.",
    ]);
  });

  it("when console sign-ins fail past the gateway's limit, then both the console and the gateway's own login refuse that user with 429: one set of counters", async () => {
    const carol = `carol${tag}`;
    await stack.createUser(carol, PW);
    for (let i = 0; i < FAILURE_LIMIT; i++)
      expect((await signIn(carol, `wrong-${i}-password`)).answer.status).toBe(401);
    const limited = await signIn(carol);
    expect(limited.answer.status).toBe(429);
    expect(Number(limited.answer.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(String(limited.answer.body.error)).toMatch(/Too many failed logins/);
    // The right password through Keystone V3 at the gateway, from the same address: the same count refuses it.
    expect((await gatewayLogin(carol, PW)).status).toBe(429);
  });

  it('when the user is disabled, its password changed or it is deleted, then its session ends at once', async () => {
    const dave = await stack.createUser(`dave${tag}`, PW);
    const first = await signIn(`dave${tag}`);
    expect((await call('GET', '/api/v1/self/storage/', { cookie: first.cookie })).status).toBe(200);
    expect(await stack.patchUser(dave.id, { enabled: false })).toBe(202);
    const ended = await call('GET', '/api/v1/self/storage/', { cookie: first.cookie });
    expect(ended.status).toBe(401);
    expect(String(ended.body.error)).toMatch(/Your session has ended/);
    expect((await call('GET', '/api/v1/self/session/', { cookie: first.cookie })).body).toMatchObject({ user: null });
    // Enabled again: that session stays ended (the user changed since it began); a new sign-in works.
    expect(await stack.patchUser(dave.id, { enabled: true })).toBe(202);
    expect((await call('GET', '/api/v1/self/storage/', { cookie: first.cookie })).status).toBe(401);
    const second = await signIn(`dave${tag}`);
    expect(await stack.patchUser(dave.id, { password: 'another-password-0123' })).toBe(202);
    expect((await call('GET', '/api/v1/self/storage/', { cookie: second.cookie })).status).toBe(401);
    const third = await signIn(`dave${tag}`, 'another-password-0123');
    expect(third.answer.status).toBe(201);
    expect(await stack.deleteUser(dave.id)).toBe(204);
    expect((await call('GET', '/api/v1/self/storage/', { cookie: third.cookie })).status).toBe(401);
  });

  it('when signing out, then the write needs the CSRF token and the same origin, and the session ends', async () => {
    const { cookie, csrf } = await signIn(alice);
    expect((await call('DELETE', '/api/v1/self/session/', { cookie })).status).toBe(403);
    const crossSite = await call('DELETE', '/api/v1/self/session/', {
      cookie,
      headers: { 'X-Cairn-CSRF': csrf, Origin: 'http://evil.example' },
    });
    expect(crossSite.status).toBe(403);
    const out = await call('DELETE', '/api/v1/self/session/', { cookie, headers: { 'X-Cairn-CSRF': csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^cairn_storage_session=;/);
    expect((await call('GET', '/api/v1/self/storage/', { cookie })).status).toBe(401);
  });

  it('when a storage user signs in, fails to, or signs out, then the audit trail says so under its name, with no secret', async () => {
    const frank = `frank${tag}`;
    const user = await stack.createUser(frank, PW);
    const wrongPassword = `wrong-${tag}-password`;
    const typedInTheNameField = `not-a-user-${tag}`;
    expect((await signIn(frank, wrongPassword)).answer.status).toBe(401);
    const { cookie, csrf } = await signIn(frank);
    expect((await call('DELETE', '/api/v1/self/session/', { cookie, headers: { 'X-Cairn-CSRF': csrf } })).status).toBe(
      204,
    );
    // A name nobody has is not recorded: it may be a password typed into the wrong field.
    const unknown = await call('POST', '/api/v1/self/session/', {
      body: { cluster: 'default', user: typedInTheNameField, password: PW },
      headers: { 'X-Request-Id': `unknown-${tag}` },
    });
    expect(unknown.status).toBe(401);

    const trail = await admin('GET', `/api/v1/audit/?target_type=users&target_id=${user.id}&order_by=id`);
    const entries = (trail.body.objects as Array<Record<string, unknown>>).filter((e) =>
      String(e.action).startsWith('sign_'),
    );
    expect(entries.map((e) => [e.action, e.operator, e.operator_id, e.target_name])).toEqual([
      ['sign_in_failed', `storage user ${frank}`, null, frank],
      ['sign_in', `storage user ${frank}`, null, frank],
      ['sign_out', `storage user ${frank}`, null, frank],
    ]);
    expect(entries[0]!.after).toMatchObject({
      cluster: 'default',
      method: 'password',
      reason: 'wrong_credentials',
      client_address: expect.any(String),
    });
    expect(entries[1]!.after).toMatchObject({ cluster: 'default', method: 'password' });
    expect(entries[2]!.before).toMatchObject({ cluster: 'default', method: 'password' });
    const byRequest = await admin('GET', `/api/v1/audit/?request_id=unknown-${tag}`);
    expect(
      (byRequest.body.objects as Array<Record<string, unknown>>).map((e) => [e.action, e.operator, e.target_type]),
    ).toEqual([['sign_in_failed', 'storage user (no such user)', 'clusters']]);
    const text = JSON.stringify([trail.body, byRequest.body]);
    for (const secret of [PW, wrongPassword, typedInTheNameField, cookie.split('=')[1]!, csrf])
      expect(text).not.toContain(secret);
  });

  it("when a storage user's session calls every route of the API, then only /self/ answers it; every other route refuses it or answers as to nobody", async () => {
    const { cookie, csrf } = await signIn(alice);
    const self = new Set([
      '/api/v1/self/session/',
      '/api/v1/self/storage/',
      '/api/v1/self/s3_credentials/',
      '/api/v1/self/s3_credentials/:access_key/',
      '/api/v1/self/application_credentials/',
      '/api/v1/self/application_credentials/:id/',
      '/api/v1/self/containers/',
      '/api/v1/self/containers/:container/',
      '/api/v1/self/temp_url_keys/',
      '/api/v1/self/temp_urls/',
    ]);
    expect(stack.apiRoutes.length).toBeGreaterThan(30);
    expect(stack.apiRoutes.filter((r) => self.has(r.path)).length).toBe(self.size);
    // Ids that exist (alice's own user, cluster 1, the admin operator): a refusal is then not a 404.
    const concrete = (path: string) =>
      path.replace(/:(\w+)/g, (_m, name: string) => (name === 'ring' ? 'object' : '1'));
    const checked: string[] = [];
    // Routes that refuse before any session is read (the operators' sign-in takes only a key).
    const refusedAsNobody: string[] = [];
    for (const route of stack.apiRoutes) {
      if (self.has(route.path)) continue;
      for (const method of route.methods) {
        const path = concrete(route.path);
        const headers = { 'X-Cairn-CSRF': csrf };
        const body = method === 'GET' || method === 'DELETE' ? undefined : {};
        const withSession = await call(method, path, { cookie, headers, body });
        const anonymous = await call(method, path, { headers, body });
        checked.push(`${method} ${route.path} ${withSession.status}`);
        if (withSession.status < 400) {
          // A public route (discovery, the operators' session probe): exactly what nobody gets.
          expect([method, route.path, withSession.status, withSession.body]).toEqual([
            method,
            route.path,
            anonymous.status,
            anonymous.body,
          ]);
        } else if (anonymous.status === 401) {
          // Refused as nobody is; where a session would be read, saying why.
          expect([method, route.path, withSession.status]).toEqual([method, route.path, 401]);
          if (withSession.body.error !== anonymous.body.error) expect(withSession.body.error).toBe(REFUSED);
          else refusedAsNobody.push(`${method} ${route.path}`);
        } else {
          expect([method, route.path, withSession.status]).toEqual([method, route.path, anonymous.status]);
        }
      }
    }
    expect(refusedAsNobody).toEqual(['POST /api/v1/session/']);
    // Every route was asked with every method it takes.
    expect(checked.length).toBe(
      stack.apiRoutes.filter((r) => !self.has(r.path)).reduce((n, r) => n + r.methods.length, 0),
    );
  });

  describe('My keys', () => {
    /** Whether the gateway's s3tokens accepts a request signed with this key (as Swift's s3token asks it). */
    const s3tokens = async (access: string, secret: string): Promise<number> => {
      const stringToSign = `GET\n\n\n${new Date().toUTCString()}\n/bucket`;
      const res = await fetch(`${stack.gatewayUrl}/auth/v3/s3tokens`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          credentials: {
            access,
            token: Buffer.from(stringToSign).toString('base64url'),
            signature: createHmac('sha1', secret).update(stringToSign).digest('base64'),
          },
        }),
      });
      await res.body?.cancel();
      return res.status;
    };
    const appCredentialLogin = (id: string, secret: string) =>
      fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          auth: { identity: { methods: ['application_credential'], application_credential: { id, secret } } },
        }),
      });
    const write = (session: { cookie: string; csrf: string }, method: string, path: string, body?: unknown) =>
      call(method, path, { cookie: session.cookie, body, headers: { 'X-Cairn-CSRF': session.csrf } });

    it('when a storage user makes an S3 key on its session, then the gateway checks signatures with it until the user deletes it', async () => {
      const a = await signIn(alice);
      // A write without the session's CSRF token makes nothing.
      expect((await call('POST', '/api/v1/self/s3_credentials/', { cookie: a.cookie, body: {} })).status).toBe(403);
      const past = await write(a, 'POST', '/api/v1/self/s3_credentials/', { expires_at: '2001-01-01T00:00:00Z' });
      expect([past.status, past.body.error]).toEqual([
        400,
        "The 'expires_at' field must be an ISO 8601 date-time in the future, such as 2027-01-31T00:00:00Z, or null for a credential that never expires.",
      ]);
      const expiresAt = new Date(Date.now() + DAY).toISOString();
      const made = await write(a, 'POST', '/api/v1/self/s3_credentials/', { expires_at: expiresAt });
      expect(made.status).toBe(201);
      expect(made.headers.get('cache-control')).toBe('no-store');
      const accessKey = String(made.body.access_key);
      const secret = String(made.body.secret);
      expect(made.body).toMatchObject({
        expires_at: expiresAt,
        resource_uri: `/api/v1/self/s3_credentials/${accessKey}/`,
      });
      expect(made.headers.get('location')).toBe(`/api/v1/self/s3_credentials/${accessKey}/`);
      expect(secret.length).toBeGreaterThanOrEqual(32);
      // Listed without its secret, with its expiry as the gateway keeps it.
      const listed = await call('GET', '/api/v1/self/s3_credentials/', { cookie: a.cookie });
      expect(listed.status).toBe(200);
      expect(listed.body.objects).toContainEqual({
        access_key: accessKey,
        expires_at: expiresAt,
        resource_uri: `/api/v1/self/s3_credentials/${accessKey}/`,
      });
      expect(JSON.stringify(listed.body)).not.toContain(secret);
      // The operators' view of the same user shows the key the gateway made.
      const operatorView = await admin('GET', `/api/v1/s3_credentials/?access_key=${accessKey}`);
      expect((operatorView.body.objects as unknown[]).length).toBe(1);

      expect(await s3tokens(accessKey, secret)).toBe(200);
      expect(await s3tokens(accessKey, `${secret}x`)).toBe(401);
      expect((await write(a, 'DELETE', `/api/v1/self/s3_credentials/${accessKey}/`)).status).toBe(204);
      expect(await s3tokens(accessKey, secret)).toBe(401);
      const again = await write(a, 'DELETE', `/api/v1/self/s3_credentials/${accessKey}/`);
      expect([again.status, again.body.error]).toEqual([404, 'EC2 access key not found.']);
      const after = await call('GET', '/api/v1/self/s3_credentials/', { cookie: a.cookie });
      expect(JSON.stringify(after.body.objects)).not.toContain(accessKey);
    });

    it('when a storage user makes an access-ruled application credential, then a V3 login with it carries exactly those rules until the user deletes it', async () => {
      const a = await signIn(alice);
      const rules = [
        { service: 'object-store', method: 'GET', path: `/v1/AUTH_${alice}/photos/2026/**` },
        { service: 'object-store', method: 'HEAD', path: `/v1/AUTH_${alice}/photos` },
      ];
      const bad = await write(a, 'POST', '/api/v1/self/application_credentials/', {
        access_rules: [{ service: 'compute', method: 'GET', path: '/servers' }],
      });
      expect(bad.status).toBe(400);
      expect(String(bad.body.error)).toContain("The 'name' field is required");
      expect(String(bad.body.error)).toContain(
        "The 'access_rules[0].service' field must be 'object-store': access rules apply to Swift's object store only.",
      );

      const expiresAt = new Date(Date.now() + DAY).toISOString();
      const made = await write(a, 'POST', '/api/v1/self/application_credentials/', {
        name: `photos-${tag}`,
        description: 'reads 2026 photos',
        expires_at: expiresAt,
        access_rules: rules,
      });
      expect(made.status).toBe(201);
      expect(made.headers.get('cache-control')).toBe('no-store');
      const id = String(made.body.id);
      const secret = String(made.body.secret);
      expect(made.body).toMatchObject({
        name: `photos-${tag}`,
        expires_at: expiresAt,
        unrestricted: false,
        roles: ['swiftoperator'],
        access_rules: rules.map((r) => ({ ...r, id: expect.any(String) })),
        resource_uri: `/api/v1/self/application_credentials/${id}/`,
      });
      const duplicate = await write(a, 'POST', '/api/v1/self/application_credentials/', { name: `photos-${tag}` });
      expect(duplicate.status).toBe(409);
      expect(String(duplicate.body.error)).toMatch(/Duplicate entry found with name photos-/);

      const listed = await call('GET', '/api/v1/self/application_credentials/', { cookie: a.cookie });
      const mine = (listed.body.objects as Array<Record<string, unknown>>).find((c) => c.id === id);
      expect(mine).toMatchObject({ name: `photos-${tag}`, access_rules: made.body.access_rules });
      expect(mine).not.toHaveProperty('secret');

      // The gateway logs in with it; the token carries the rules, and they keep it off the identity API.
      const login = await appCredentialLogin(id, secret);
      expect(login.status).toBe(201);
      const document = (await login.json()) as { token: { application_credential: Record<string, unknown> } };
      expect(document.token.application_credential).toMatchObject({ id, restricted: true });
      expect(document.token.application_credential.access_rules).toEqual(made.body.access_rules);
      const ruled = await fetch(`${stack.gatewayUrl}/auth/v3/users/${alice}/application_credentials`, {
        headers: { 'X-Auth-Token': login.headers.get('x-subject-token')! },
      });
      await ruled.body?.cancel();
      expect(ruled.status).toBe(403);

      expect((await write(a, 'DELETE', `/api/v1/self/application_credentials/${id}/`)).status).toBe(204);
      const refused = await appCredentialLogin(id, secret);
      await refused.body?.cancel();
      expect(refused.status).toBe(401);
    });

    it("when a storage user signs in with an application credential, then the session is its owner's; a wrong one is refused as a wrong password is, a restricted one may not make keys and an access-ruled one may not sign in", async () => {
      const a = await signIn(alice);
      const made = await write(a, 'POST', '/api/v1/self/application_credentials/', { name: `console-${tag}` });
      const ruled = await write(a, 'POST', '/api/v1/self/application_credentials/', {
        name: `ruled-${tag}`,
        access_rules: [{ service: 'object-store', method: 'GET', path: `/v1/AUTH_${alice}/photos/**` }],
      });
      expect([made.status, ruled.status]).toEqual([201, 201]);
      const [id, secret] = [String(made.body.id), String(made.body.secret)];
      const credentialSignIn = (body: Record<string, unknown>) =>
        call('POST', '/api/v1/self/session/', { body: { cluster: 'default', ...body } });
      const cookieOf = (answer: Answer) => (answer.headers.get('set-cookie') ?? '').split(';')[0]!;

      const credentialCookies: string[] = [];
      for (const body of [
        { application_credential_id: id, application_credential_secret: secret },
        { application_credential_name: `console-${tag}`, user: alice, application_credential_secret: secret },
      ]) {
        const signed = await credentialSignIn(body);
        expect(signed.status).toBe(201);
        expect(signed.body).toMatchObject({ user: alice, account: `AUTH_${alice}`, cluster: 'default' });
        const cookie = cookieOf(signed);
        credentialCookies.push(cookie);
        expect((await call('GET', '/api/v1/self/storage/', { cookie })).body.user).toBe(alice);
        // A restricted credential's session lists the keys but may not make one: said in a sentence.
        expect((await call('GET', '/api/v1/self/application_credentials/', { cookie })).status).toBe(200);
        const mint = await write(
          { cookie, csrf: String(signed.body.csrf_token) },
          'POST',
          '/api/v1/self/s3_credentials/',
        );
        expect([mint.status, mint.body.error]).toEqual([
          403,
          expect.stringMatching(
            /^You signed in with a restricted application credential, which may not make or delete keys/,
          ),
        ]);
      }

      // Access rules narrow its token to some object-store requests: too little for a console session,
      // and said so (only to whoever gave the right secret); the token it got is revoked at once.
      const revocations = () =>
        stack.gatewayLogs.lines
          .map((l) => JSON.parse(l) as { req?: { method?: string; url?: string }; res?: { statusCode?: number } })
          .filter(
            (l) => l.req?.method === 'DELETE' && l.req.url === '/auth/v3/auth/tokens' && l.res?.statusCode === 204,
          ).length;
      const revokedBefore = revocations();
      const ruledIn = await credentialSignIn({
        application_credential_id: String(ruled.body.id),
        application_credential_secret: String(ruled.body.secret),
      });
      expect([ruledIn.status, ruledIn.body.error]).toEqual([
        403,
        'This application credential has access rules, which limit it to some object-store requests; the console needs more. Sign in with your password, or with an application credential without access rules.',
      ]);
      expect(ruledIn.headers.get('set-cookie')).toBeNull();
      expect(revocations()).toBe(revokedBefore + 1);

      for (const body of [
        { application_credential_id: id, application_credential_secret: 'not-the-secret' },
        { application_credential_id: 'no-such-credential', application_credential_secret: secret },
        // The name is alice's credential's, the user is another: no credential of bob's has it.
        { application_credential_name: `console-${tag}`, user: bob, application_credential_secret: secret },
        { cluster: 'no-such-cluster', application_credential_id: id, application_credential_secret: secret },
      ]) {
        const res = await credentialSignIn(body);
        expect([res.status, res.body.error]).toEqual([
          401,
          'The cluster or the application credential (its id, or its name and user, or its secret) is not right.',
        ]);
        expect(res.headers.get('set-cookie')).toBeNull();
      }
      for (const [body, sentence] of [
        [
          { user: alice, password: PW, application_credential_id: id, application_credential_secret: secret },
          /^Give a password or an application credential secret, not both/,
        ],
        [
          { application_credential_secret: secret },
          /^application_credential_secret needs application_credential_id, or application_credential_name with user/,
        ],
        [
          { application_credential_name: 'x', application_credential_secret: secret },
          /^application_credential_name needs user with it/,
        ],
        [{ user: alice }, /^password or application_credential_secret is required/],
        [
          { application_credential_id: 'a/b', application_credential_secret: secret },
          /^An application credential id is 1 to 64/,
        ],
      ] as const) {
        const res = await credentialSignIn(body);
        expect([res.status, res.body.error]).toEqual([400, expect.stringMatching(sentence)]);
      }

      for (const c of [made, ruled]) expect((await write(a, 'DELETE', String(c.body.resource_uri))).status).toBe(204);
      expect(
        (await credentialSignIn({ application_credential_id: id, application_credential_secret: secret })).status,
      ).toBe(401);
      // Deleting the credential ended the sessions it opened, at their next request, even one that
      // reaches only Postgres (My storage); the password's session goes on.
      for (const cookie of credentialCookies) {
        const ended = await call('GET', '/api/v1/self/storage/', { cookie });
        expect([ended.status, ended.body.error]).toEqual([
          401,
          'Your session has ended (signed out, idle too long, past its maximum length, your user was changed or disabled, or the application credential you signed in with was deleted or expired). Sign in again.',
        ]);
      }
      expect((await call('GET', '/api/v1/self/storage/', { cookie: a.cookie })).status).toBe(200);

      // So does its expiry: the row's expires_at passes (set here, as the clock would).
      const expiring = await write(a, 'POST', '/api/v1/self/application_credentials/', {
        name: `expiring-${tag}`,
        expires_at: new Date(Date.now() + HOUR).toISOString(),
      });
      const signed = await credentialSignIn({
        application_credential_id: String(expiring.body.id),
        application_credential_secret: String(expiring.body.secret),
      });
      const cookie = cookieOf(signed);
      expect((await call('GET', '/api/v1/self/storage/', { cookie })).status).toBe(200);
      await stack
        .db('application_credentials')
        .where('id', String(expiring.body.id))
        .update({ expires_at: new Date(Date.now() - 1000) });
      expect((await call('GET', '/api/v1/self/storage/', { cookie })).status).toBe(401);
      expect((await write(a, 'DELETE', String(expiring.body.resource_uri))).status).toBe(204);
    });

    it("when a session names another user's key, then it is refused as unknown and the key keeps working", async () => {
      const a = await signIn(alice);
      const b = await signIn(bob);
      const key = await write(b, 'POST', '/api/v1/self/s3_credentials/', {});
      const cred = await write(b, 'POST', '/api/v1/self/application_credentials/', { name: `bobs-${tag}` });
      expect([key.status, cred.status]).toEqual([201, 201]);
      const accessKey = String(key.body.access_key);
      const id = String(cred.body.id);
      const s3 = await write(a, 'DELETE', `/api/v1/self/s3_credentials/${accessKey}/`);
      expect([s3.status, s3.body.error]).toEqual([404, 'EC2 access key not found.']);
      const ac = await write(a, 'DELETE', `/api/v1/self/application_credentials/${id}/`);
      expect([ac.status, ac.body.error]).toEqual([404, `Could not find Application Credential: ${id}.`]);
      // Nor does alice's list show them.
      expect(
        JSON.stringify((await call('GET', '/api/v1/self/s3_credentials/', { cookie: a.cookie })).body),
      ).not.toContain(accessKey);
      expect(
        JSON.stringify((await call('GET', '/api/v1/self/application_credentials/', { cookie: a.cookie })).body),
      ).not.toContain(id);
      expect(await s3tokens(accessKey, String(key.body.secret))).toBe(200);
      const login = await appCredentialLogin(id, String(cred.body.secret));
      await login.body?.cancel();
      expect(login.status).toBe(201);
      // Bob's own session deletes them.
      expect((await write(b, 'DELETE', `/api/v1/self/s3_credentials/${accessKey}/`)).status).toBe(204);
      expect((await write(b, 'DELETE', `/api/v1/self/application_credentials/${id}/`)).status).toBe(204);
    });

    it('when a storage user signs out, then the gateway token its session kept is revoked at the gateway and gone from the database', async () => {
      const a = await signIn(alice);
      const row = (await stack
        .db('storage_user_sessions')
        .orderBy('id', 'desc')
        .first('id', 'gateway_token_sealed')) as {
        id: string;
        gateway_token_sealed: string;
      };
      // Sealed under the session's own key: AES-GCM parts, no token in the clear.
      expect(row.gateway_token_sealed).toMatch(/^v1:session:[\w-]{16}:[\w-]+:[\w-]{22}$/);
      const revocations = () =>
        stack.gatewayLogs.lines
          .map((l) => JSON.parse(l) as { req?: { method?: string; url?: string }; res?: { statusCode?: number } })
          .filter(
            (l) => l.req?.method === 'DELETE' && l.req.url === '/auth/v3/auth/tokens' && l.res?.statusCode === 204,
          ).length;
      const before = revocations();
      expect((await write(a, 'DELETE', '/api/v1/self/session/')).status).toBe(204);
      expect(revocations()).toBe(before + 1);
      expect(await stack.db('storage_user_sessions').where('id', row.id).first()).toBeUndefined();
      expect((await call('GET', '/api/v1/self/s3_credentials/', { cookie: a.cookie })).status).toBe(401);
    });

    it("when the gateway no longer takes the session's token (a superuser voided the user's tokens), then My keys says so and the session ends", async () => {
      const erin = `erin${tag}`;
      await stack.createUser(erin, PW);
      await stack.createUser(`root${tag}`, PW, { is_superuser: true });
      const e = await signIn(erin);
      expect((await call('GET', '/api/v1/self/s3_credentials/', { cookie: e.cookie })).status).toBe(200);
      const root = await gatewayLogin(`root${tag}`, PW);
      expect(root.status).toBe(201);
      await root.body?.cancel();
      const voided = await fetch(`${stack.gatewayUrl}/auth/v1.0/users/${erin}/token`, {
        method: 'DELETE',
        headers: { 'X-Auth-Token': root.headers.get('x-subject-token')! },
      });
      expect(voided.status).toBe(204);
      const refused = await call('GET', '/api/v1/self/s3_credentials/', { cookie: e.cookie });
      expect([refused.status, refused.body.error]).toEqual([
        401,
        "Your sign-in at the cluster's authentication service has ended (expired, or revoked there); sign in again.",
      ]);
      expect((await call('GET', '/api/v1/self/storage/', { cookie: e.cookie })).status).toBe(401);
      // Signing in again gets a new token, and My keys works.
      const again = await signIn(erin);
      expect((await call('GET', '/api/v1/self/s3_credentials/', { cookie: again.cookie })).status).toBe(200);
    });
  });

  describe('Sharing', () => {
    const write = (session: { cookie: string; csrf: string }, method: string, path: string, body?: unknown) =>
      call(method, path, { cookie: session.cookie, body, headers: { 'X-Cairn-CSRF': session.csrf } });

    it('when a write names a user not in the cluster, a lifetime past the maximum or lacks the CSRF token, then it is refused before Swift is asked', async () => {
      const a = await signIn(alice);
      const acl = await write(a, 'PUT', '/api/v1/self/containers/photos/', { read_users: [bob, `nobody${tag}`] });
      expect([acl.status, acl.body.error]).toEqual([
        400,
        `No user 'nobody${tag}' in cluster 'default': an ACL names other users of your cluster, by their user names.`,
      ]);
      const listings = await write(a, 'PUT', '/api/v1/self/containers/photos/', { public_listings: true });
      expect([listings.status, String(listings.body.error)]).toEqual([400, expect.stringMatching(/public read/)]);
      const long = await write(a, 'POST', '/api/v1/self/temp_urls/', {
        container: 'photos',
        object: 'a.jpg',
        lifetime_seconds: 7 * 86400 + 1,
      });
      expect([long.status, long.body.error]).toEqual([
        400,
        'The lifetime_seconds field is at most 604800 (the longest a temporary URL may work here).',
      ]);
      for (const [method, path] of [
        ['PUT', '/api/v1/self/containers/photos/'],
        ['POST', '/api/v1/self/temp_url_keys/'],
        ['POST', '/api/v1/self/temp_urls/'],
      ] as const) {
        expect([method, path, (await call(method, path, { cookie: a.cookie, body: {} })).status]).toEqual([
          method,
          path,
          403,
        ]);
      }
    });

    it('when the account has more containers than a page, then the listing pages through Swift with its marker', async () => {
      // A stand-in for the account's Swift listing, with 205 containers: paged as Swift pages.
      const names = Array.from({ length: 205 }, (_, i) => `c${String(i).padStart(4, '0')}`);
      const listings: string[] = [];
      const swift = createServer((req, res) => {
        const url = new URL(req.url ?? '/', 'http://x');
        if (req.method === 'GET' && url.pathname === `/v1/AUTH_${alice}`) {
          listings.push(url.search);
          const marker = url.searchParams.get('marker') ?? '';
          const limit = Number(url.searchParams.get('limit') ?? 10000);
          const page = names.filter((n) => n > marker).slice(0, limit);
          res.setHeader('Content-Type', 'application/json');
          return void res.end(JSON.stringify(page.map((name) => ({ name, count: 1, bytes: 2 }))));
        }
        res.writeHead(204, { 'X-Container-Object-Count': '1', 'X-Container-Bytes-Used': '2' }).end();
      });
      await new Promise<void>((resolve) => swift.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = swift.address() as AddressInfo;
        const patched = await admin('PATCH', '/api/v1/clusters/1/', { storage_url: `http://127.0.0.1:${port}/v1` });
        expect(patched.status).toBe(202);
        const { cookie } = await signIn(alice);
        const first = await call('GET', '/api/v1/self/containers/', { cookie });
        const firstNames = (first.body.objects as Array<{ name: string }>).map((c) => c.name);
        expect([first.status, firstNames, first.body.truncated, first.body.next_marker]).toEqual([
          200,
          names.slice(0, 200),
          true,
          'c0199',
        ]);
        const second = await call('GET', '/api/v1/self/containers/?marker=c0199', { cookie });
        const secondNames = (second.body.objects as Array<{ name: string }>).map((c) => c.name);
        expect([second.status, secondNames, second.body.truncated, second.body.next_marker]).toEqual([
          200,
          names.slice(200),
          false,
          null,
        ]);
        expect(listings).toEqual(['?format=json&limit=201', '?format=json&limit=201&marker=c0199']);
        const bad = await call('GET', `/api/v1/self/containers/?marker=${'x'.repeat(257)}`, { cookie });
        expect([bad.status, String(bad.body.error)]).toEqual([400, expect.stringMatching(/^The marker parameter/)]);
      } finally {
        swift.closeAllConnections();
        await new Promise((resolve) => swift.close(resolve));
      }
    });

    it("when the cluster's Swift does not answer, then the Sharing routes say so with 503, not 500", async () => {
      const a = await signIn(alice);
      // Port 1: nothing listens there.
      expect((await admin('PATCH', '/api/v1/clusters/1/', { storage_url: 'http://127.0.0.1:1/v1' })).status).toBe(202);
      for (const path of ['/api/v1/self/containers/', '/api/v1/self/temp_url_keys/']) {
        const res = await call('GET', path, { cookie: a.cookie });
        expect([path, res.status, String(res.body.error)]).toEqual([
          path,
          503,
          expect.stringMatching(/did not answer as expected/),
        ]);
      }
    });
  });
});
