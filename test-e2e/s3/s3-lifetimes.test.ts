import request from 'supertest';
import * as gateway from '@cairn/auth-gateway';
import { LogCapture } from '@cairn/runtime';
import { ADMIN_AUTH, REDIS_URL, startStack, type Stack } from '../support/stack';
import { createEc2, S3_KEYS, signedBody, v3Token } from './s3-client';

const PW = 'pw-0123456789-abcdefgh';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it is true or `ms` have passed; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await check()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`not true within ${ms} ms`);
    await sleep(20);
  }
}

/**
 * Waits until the clock has passed `t` (ms since the epoch). The gateway runs on the same clock, so
 * whatever it is asked afterwards it decides after `t`; a timer alone may fire early or late.
 */
async function pastExpiry(t: number): Promise<void> {
  while (Date.now() <= t) await sleep(Math.min(50, t - Date.now() + 1));
}

const appCredBody = (id: string, secret: string) => ({
  auth: { identity: { methods: ['application_credential'], application_credential: { id, secret } } },
});

/**
 * S3 keys that end: an expiry set through the management API, and EC2 keys made with an
 * application credential's token (bound to it: its roles, its lifetime). Real Postgres, Redis and
 * HTTP; signatures computed here. With the gateway hearing change notices (its remembered rows
 * behind the fence, at most CAIRN_USER_CACHE_MS old) and with notices off (every check reads).
 */
describe.each([
  ['hearing change notices', {}],
  ['with notices off', { userNoticesUrl: 'off' }],
])('S3 credential lifetimes, %s', (_name, gatewayExtra) => {
  let stack: Stack;
  const check = (access: string, secret: string, url = stack.gatewayUrl) =>
    request(url).post('/auth/v3/s3tokens').send(signedBody(access, secret));
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const makeAppCred = async (user: string, token: string, credential: Record<string, unknown>) => {
    const res = await request(stack.gatewayUrl)
      .post(`/auth/v3/users/${user}/application_credentials`)
      .set('X-Auth-Token', token)
      .send({ application_credential: credential });
    expect(res.status).toBe(201);
    return res.body.application_credential as { id: string; secret: string };
  };
  const appCredToken = async (c: { id: string; secret: string }) => {
    const res = await request(stack.gatewayUrl).post('/auth/v3/auth/tokens').send(appCredBody(c.id, c.secret));
    expect(res.status).toBe(201);
    return res.headers['x-subject-token'] as string;
  };

  beforeAll(async () => {
    // CAIRN_USER_CACHE_MS at its largest, so a remembered row outlives the moments checked below.
    stack = await startStack({
      database: 'postgres',
      redis: true,
      s3SecretKeys: S3_KEYS,
      gateway: { s3tokensRequireServiceToken: false, userCacheMs: 1000, ...gatewayExtra },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('when an expiring key is used right up to its expiry, then it signs until then and is refused from then on, however recently its row was read', async () => {
    const { id } = await stack.createUser('erin', PW);
    const expiresAt = Date.now() + 2000;
    const created = await api('POST', '/api/v1/s3_credentials/', {
      user: `/api/v1/users/${id}/`,
      expires_at: new Date(expiresAt).toISOString(),
    });
    expect(created.status).toBe(201);
    const cred = (await created.json()) as { access_key: string; secret: string; expires_at: string };
    expect(Date.parse(cred.expires_at)).toBe(expiresAt);
    // Checked over and over, so the row stays remembered; the answer says it ends no later than the key.
    let last = await check(cred.access_key, cred.secret);
    expect(last.status).toBe(200);
    expect(Date.parse(last.body.token.expires_at)).toBe(expiresAt);
    while (Date.now() < expiresAt - 150) {
      last = await check(cred.access_key, cred.secret);
      // Answered before the expiry, so decided before it: it must have signed. (An answer slowed
      // past the expiry by a busy machine says nothing either way.)
      if (Date.now() < expiresAt) expect(last.status).toBe(200);
      await sleep(50);
    }
    await pastExpiry(expiresAt);
    const refused = await check(cred.access_key, cred.secret);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe(401);
    const metrics = await request(stack.gatewayUrl).get('/metrics');
    expect(metrics.text).toMatch(/cairn_s3tokens_total\{result="credential_expired",service="auth-gateway"\} [1-9]/);
  });

  it("when an unrestricted application credential's token makes an EC2 key, then the key is bound to it and signs with its roles and name; a password token's key is not bound", async () => {
    await stack.createUser('s3-admin', PW, { is_superuser: true });
    const password = await v3Token(stack.gatewayUrl, 's3-admin', PW);
    const c = await makeAppCred('s3-admin', password, {
      name: 'backup',
      unrestricted: true,
      roles: [{ name: 'swiftoperator' }],
    });
    const bound = await createEc2(stack.gatewayUrl, await appCredToken(c), 's3-admin');
    const plain = await createEc2(stack.gatewayUrl, password, 's3-admin');
    const rows = await stack
      .db('s3_credentials')
      .whereIn('access_key', [bound.access, plain.access])
      .select('access_key', 'application_credential_id');
    expect(
      Object.fromEntries(
        rows.map((r: { access_key: string; application_credential_id: string | null }) => [
          r.access_key,
          r.application_credential_id,
        ]),
      ),
    ).toEqual({
      [bound.access]: c.id,
      [plain.access]: null,
    });

    const viaBound = await check(bound.access, bound.secret);
    expect(viaBound.status).toBe(200);
    expect(viaBound.body.token.roles).toEqual([{ id: 'swiftoperator', name: 'swiftoperator' }]);
    expect(viaBound.body.token.application_credential).toEqual({ id: c.id, name: 'backup', restricted: false });
    const viaPlain = await check(plain.access, plain.secret);
    expect(viaPlain.body.token.roles.map((r: { name: string }) => r.name)).toEqual(['swiftoperator', 'ResellerAdmin']);
    expect(viaPlain.body.token.application_credential).toBeUndefined();

    // The management API shows the binding.
    const listed = (await (await api('GET', `/api/v1/s3_credentials/?access_key=${bound.access}`)).json()) as {
      objects: Array<{ application_credential: string | null }>;
    };
    expect(listed.objects[0]!.application_credential).toBe(`/api/v1/application_credentials/${c.id}/`);
  });

  it("when the application credential is deleted through the gateway, then its bound key is refused on another gateway within 1 s, deleted with an audit record, and the owner's other key still signs", async () => {
    const config = {
      ...gateway.readConfig({
        CAIRN_GATEWAY_HOST: '127.0.0.1',
        CAIRN_GATEWAY_PORT: '0',
        DATABASE_URL: stack.databaseUrl!,
        REDIS_URL,
      }),
      s3SecretKeys: S3_KEYS,
      s3tokensRequireServiceToken: false,
      userCacheMs: 1000,
      ...gatewayExtra,
    };
    const deps = await gateway.createDeps(config, { log: gateway.createLogger('warn', new LogCapture()) });
    const second = await gateway.startAuthGateway(config, deps);
    try {
      const other = `http://127.0.0.1:${second.port}`;
      await stack.createUser('fiona', PW);
      const password = await v3Token(stack.gatewayUrl, 'fiona', PW);
      const c = await makeAppCred('fiona', password, { name: 'rclone', unrestricted: true });
      const bound = await createEc2(stack.gatewayUrl, await appCredToken(c), 'fiona');
      const plain = await createEc2(stack.gatewayUrl, password, 'fiona');
      // Both gateways remember the bound key's row.
      expect((await check(bound.access, bound.secret, other)).status).toBe(200);
      expect((await check(bound.access, bound.secret)).status).toBe(200);
      expect(
        (
          await request(stack.gatewayUrl)
            .delete(`/auth/v3/users/fiona/application_credentials/${c.id}`)
            .set('X-Auth-Token', password)
        ).status,
      ).toBe(204);
      expect((await check(bound.access, bound.secret)).status).toBe(401);
      await within(1000, async () => (await check(bound.access, bound.secret, other)).status === 401);
      expect((await check(plain.access, plain.secret, other)).status).toBe(200);
      expect(await stack.db('s3_credentials').where({ access_key: bound.access })).toHaveLength(0);
      const audit = await stack
        .db('audit_log')
        .where({ target_type: 's3_credentials', target_name: bound.access })
        .orderBy('id');
      expect(audit.map((a: { action: string; operator_name: string }) => [a.action, a.operator_name])).toEqual([
        ['create', 'storage user fiona'],
        ['delete', 'storage user fiona'],
      ]);
      expect(audit[0].after).toMatchObject({
        application_credential: `/api/v1/application_credentials/${c.id}/`,
        expires_at: null,
      });
    } finally {
      await second.close(0);
    }
  });

  it('when an operator revokes the application credential through the management API, then its bound key is refused within 1 s and its deletion audited', async () => {
    await stack.createUser('gus', PW);
    const password = await v3Token(stack.gatewayUrl, 'gus', PW);
    const c = await makeAppCred('gus', password, { name: 'ci', unrestricted: true });
    const bound = await createEc2(stack.gatewayUrl, await appCredToken(c), 'gus');
    expect((await check(bound.access, bound.secret)).status).toBe(200);
    expect((await api('DELETE', `/api/v1/application_credentials/${c.id}/`)).status).toBe(204);
    await within(1000, async () => (await check(bound.access, bound.secret)).status === 401);
    const audit = await stack
      .db('audit_log')
      .where({ target_type: 's3_credentials', target_name: bound.access })
      .orderBy('id');
    expect(audit.map((a: { action: string; operator_name: string }) => [a.action, a.operator_name])).toEqual([
      ['create', 'storage user gus'],
      ['delete', 'root'],
    ]);
  });

  it('when the application credential expires, then its bound key is refused from its expiry on, and the answers before say they end then', async () => {
    await stack.createUser('hana', PW);
    const password = await v3Token(stack.gatewayUrl, 'hana', PW);
    const expiresAt = Date.now() + 2500;
    const c = await makeAppCred('hana', password, {
      name: 'short',
      unrestricted: true,
      expires_at: new Date(expiresAt).toISOString(),
    });
    const bound = await createEc2(stack.gatewayUrl, await appCredToken(c), 'hana');
    const before = await check(bound.access, bound.secret);
    expect(before.status).toBe(200);
    expect(Date.parse(before.body.token.expires_at)).toBe(expiresAt);
    await pastExpiry(expiresAt);
    expect((await check(bound.access, bound.secret)).status).toBe(401);
    const metrics = await request(stack.gatewayUrl).get('/metrics');
    expect(metrics.text).toMatch(
      /cairn_s3tokens_total\{result="application_credential_void",service="auth-gateway"\} [1-9]/,
    );
  });

  it('when a bound row names an application credential with access rules, then its signatures are refused (the S3 path cannot enforce them)', async () => {
    await stack.createUser('ivan', PW);
    const password = await v3Token(stack.gatewayUrl, 'ivan', PW);
    const open = await makeAppCred('ivan', password, { name: 'open', unrestricted: true });
    const ruled = await makeAppCred('ivan', password, {
      name: 'ruled',
      unrestricted: true,
      access_rules: [{ service: 'object-store', method: 'GET', path: '/v1/AUTH_ivan/pub/**' }],
    });
    const bound = await createEc2(stack.gatewayUrl, await appCredToken(open), 'ivan');
    expect((await check(bound.access, bound.secret)).status).toBe(200);
    // Such a credential's token may not make an EC2 key; an operator's SQL could still bind one.
    await stack
      .db('s3_credentials')
      .where({ access_key: bound.access })
      .update({ application_credential_id: ruled.id });
    await within(1000, async () => (await check(bound.access, bound.secret)).status === 401);
  });
});
