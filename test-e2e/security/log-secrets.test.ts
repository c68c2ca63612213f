import { randomBytes } from 'node:crypto';
import * as gateway from '@cairn/auth-gateway';
import { LogCapture } from '@cairn/runtime';
import { ADMIN_AUTH, ADMIN_KEY, REDIS_URL, startStack, type Stack } from '../support/stack';
import { login, send, tokenOf, type Answer } from './client';

/**
 * Every secret a full scenario handles — passwords, API keys, tokens, the signing key, the
 * database password, stored password hashes — is searched for in everything both services log at
 * `trace`, whole and in pieces (any 12 characters of it, and its base64, base64url, hex and URL
 * encodings). The scenario covers what the services do with secrets: operators and keys,
 * users created and changed, V1/V2/V3 logins that work and fail and hit the limit, validations,
 * revocations, bad keys, malformed requests. A test that captured nothing could not fail, so the
 * logs are also checked to hold a line for each request.
 */
const random = (bytes = 18) => randomBytes(bytes).toString('base64url');
const SIGNING_KEY = `signing-${random(24)}`;
const DB_PASSWORD = `dbpw-${random()}`;
const FRAGMENT = 12;

/** What a secret may look like in a log line: itself, a piece of it, or an encoding of it. */
function needles(secret: string): string[] {
  const out = new Set<string>([
    secret,
    Buffer.from(secret).toString('base64'),
    Buffer.from(secret).toString('base64url'),
    Buffer.from(secret).toString('hex'),
    encodeURIComponent(secret),
  ]);
  for (let i = 0; i + FRAGMENT <= secret.length; i++) out.add(secret.slice(i, i + FRAGMENT));
  // base64 without its padding, as a JSON encoder or a URL might show it.
  out.add(Buffer.from(secret).toString('base64').replace(/=+$/, ''));
  return [...out].filter((n) => n === secret || n.length >= FRAGMENT);
}

/**
 * A token's secret parts: its signature and its random id (jti). The rest of the payload (audience,
 * times) and the header are the same in many tokens and give nothing away.
 */
const tokenParts = (token: string): string[] => {
  const [, payload = '', signature = ''] = token.split('.');
  const { jti } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { jti: string };
  return [signature, jti];
};

describe('no secret in any log line', () => {
  let stack: Stack;
  let gatewayLogs: LogCapture;
  let url: string;
  let closeGateway: () => Promise<void>;
  const secrets = new Map<string, string>();
  const keep = (what: string, value: string) => secrets.set(`${what} (${value.slice(0, 4)}…)`, value);
  /** Requests made to each service: each must have left at least one log line. */
  let apiRequests = 0;
  let gatewayRequests = 0;
  const counted = async (p: Promise<Answer>) => {
    gatewayRequests++;
    return p;
  };

  async function api(
    method: string,
    path: string,
    body?: unknown,
    auth = ADMIN_AUTH,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    apiRequests++;
    const res = await fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { Authorization: auth, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  beforeAll(async () => {
    stack = await startStack({ redis: true, logLevel: 'trace' });
    // A gateway of its own, at trace, reaching Postgres as a role with a password (the stack's
    // shares the API's connection, which has none), with a configured signing key.
    const role = `cairn_log_${random(6)
      .replace(/[^a-z0-9]/gi, '')
      .toLowerCase()}`;
    await stack.db.raw(`CREATE ROLE ${role} LOGIN PASSWORD '${DB_PASSWORD}'`);
    await stack.db.raw(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
    // The application credentials it makes below, with their audit records.
    await stack.db.raw(`GRANT INSERT, DELETE ON application_credentials TO ${role}`);
    await stack.db.raw(`GRANT INSERT ON audit_log TO ${role}`);
    await stack.db.raw(`GRANT USAGE ON SEQUENCE audit_log_id_seq TO ${role}`);
    const dbUrl = new URL(stack.databaseUrl!);
    dbUrl.username = role;
    dbUrl.password = DB_PASSWORD;
    gatewayLogs = new LogCapture();
    const config = gateway.readConfig({
      CAIRN_GATEWAY_HOST: '127.0.0.1',
      CAIRN_GATEWAY_PORT: '0',
      LOG_LEVEL: 'trace',
      DATABASE_URL: dbUrl.toString(),
      REDIS_URL,
      CAIRN_GATEWAY_SIGNING_KEY: SIGNING_KEY,
      CAIRN_LOGIN_FAILURE_LIMIT: '3',
    });
    const deps = await gateway.createDeps(config, { log: gateway.createLogger('trace', gatewayLogs) });
    const running = await gateway.startAuthGateway(config, deps);
    url = `http://127.0.0.1:${running.port}`;
    closeGateway = async () => {
      await running.close(0);
      await stack.db.raw(`DROP OWNED BY ${role}`);
      await stack.db.raw(`DROP ROLE ${role}`);
    };
    keep('signing key', SIGNING_KEY);
    keep('database password', DB_PASSWORD);
    keep('stack admin key', ADMIN_KEY);
  });
  afterAll(async () => {
    await closeGateway?.();
    await stack?.close();
  });

  it('when a full scenario runs at trace level on both services, then no secret appears in any log line, and every request was logged', async () => {
    // Operators and keys: a second admin, a second key, a reader; the keys used and a wrong one.
    const op = await api('POST', '/api/v1/operators/', { name: 'log-admin', role: 'admin' });
    expect(op.status).toBe(201);
    const opKey = String(op.body.api_key);
    keep('operator key', opKey);
    const opAuth = `ApiKey log-admin:${opKey}`;
    const extra = await api('POST', `/api/v1/operators/${String(op.body.id)}/keys/`, {}, opAuth);
    expect(extra.status).toBe(201);
    keep('second operator key', String(extra.body.key));
    const reader = await api('POST', '/api/v1/operators/', { name: 'log-reader', role: 'reader' }, opAuth);
    keep('reader key', String(reader.body.api_key));
    expect(
      (await api('GET', '/api/v1/users/', undefined, `ApiKey log-reader:${String(reader.body.api_key)}`)).status,
    ).toBe(200);
    expect((await api('GET', '/api/v1/users/', undefined, `ApiKey log-admin:${String(extra.body.key)}`)).status).toBe(
      200,
    );
    const wrongKey = random(32);
    keep('wrong API key', wrongKey);
    expect((await api('GET', '/api/v1/users/', undefined, `ApiKey log-admin:${wrongKey}`)).status).toBe(401);
    expect((await api('GET', '/api/v1/users/', undefined, `apikey log-admin:${wrongKey}`)).status).toBe(401);

    // Users: created with passwords (JSON and form bodies), one password changed, one disabled.
    const passwords = { alice: `alice-${random()}`, bob: `bob-${random()}`, svc: `svc-${random()}` };
    for (const [name, pw] of Object.entries(passwords)) keep(`${name}'s password`, pw);
    const alice = await api(
      'POST',
      '/api/v1/users/',
      { cluster: '/api/v1/clusters/1/', user: 'alice', password: passwords.alice },
      opAuth,
    );
    expect(alice.status).toBe(201);
    apiRequests++;
    const bobForm = await fetch(`${stack.apiUrl}/api/v1/users/`, {
      method: 'POST',
      headers: { Authorization: opAuth, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ cluster: '/api/v1/clusters/1/', user: 'bob', password: passwords.bob }).toString(),
    });
    expect(bobForm.status).toBe(201);
    const bobId = ((await bobForm.json()) as { id: string }).id;
    expect(
      (
        await api('POST', '/api/v1/users/', {
          cluster: '/api/v1/clusters/1/',
          user: 'svc',
          password: passwords.svc,
          is_superuser: true,
        })
      ).status,
    ).toBe(201);
    const tooShort = `short-${random(9)}`;
    keep('refused short password', tooShort);
    expect(
      (await api('POST', '/api/v1/users/', { cluster: '/api/v1/clusters/1/', user: 'carol', password: tooShort }))
        .status,
    ).toBe(400);
    const malformed = await api('POST', '/api/v1/users/', {
      cluster: '/api/v1/clusters/1/',
      user: 'x:y',
      password: `bad-user-${random()}`,
    });
    expect(malformed.status).toBe(400);
    // Bodies that fail to parse (parsers keep the raw body on their error) and XML.
    const inBrokenJson = `broken-json-${random()}`;
    keep('password in a broken JSON body', inBrokenJson);
    apiRequests++;
    const broken = await fetch(`${stack.apiUrl}/api/v1/users/`, {
      method: 'POST',
      headers: { Authorization: opAuth, 'Content-Type': 'application/json' },
      body: `{"cluster": "/api/v1/clusters/1/", "user": "dan", "password": "${inBrokenJson}",,}`,
    });
    expect(broken.status).toBe(400);
    const inXml = `xml-password-${random()}`;
    keep('password in an XML body', inXml);
    apiRequests++;
    const xml = await fetch(`${stack.apiUrl}/api/v1/users/`, {
      method: 'POST',
      headers: { Authorization: opAuth, 'Content-Type': 'application/xml' },
      body: `<object><cluster>/api/v1/clusters/1/</cluster><user>erin</user><password>${inXml}</password></object>`,
    });
    expect(xml.status).toBe(201);

    // Logins through V1, V2 and V3, good and bad.
    const tokens: string[] = [];
    const aliceV1 = await counted(login(url, 'v1', 'alice', passwords.alice));
    expect(aliceV1.status).toBe(200);
    tokens.push(tokenOf('v1', aliceV1));
    const aliceV2 = await counted(login(url, 'v2', 'alice', passwords.alice));
    expect(aliceV2.status).toBe(200);
    tokens.push(tokenOf('v2', aliceV2));
    const svcV3 = await counted(login(url, 'v3', 'svc', passwords.svc));
    expect(svcV3.status).toBe(201);
    const serviceToken = tokenOf('v3', svcV3);
    tokens.push(serviceToken);
    const bobV3 = await counted(login(url, 'v3', 'bob', passwords.bob));
    tokens.push(tokenOf('v3', bobV3));
    const tempauth = await counted(
      send(url, '/auth/v1.0', { headers: { 'X-Storage-User': 'alice:alice', 'X-Storage-Pass': passwords.alice } }),
    );
    expect(tempauth.status).toBe(200);
    tokens.push(tokenOf('v1', tempauth));
    const wrong = `wrong-${random()}`;
    keep('wrong password', wrong);
    for (const a of ['v1', 'v2', 'v3'] as const) {
      expect((await counted(login(url, a, 'bob', wrong))).status).not.toBe(200);
      expect((await counted(login(url, a, 'nobody', wrong))).status).not.toBe(200);
    }
    expect((await counted(login(url, 'v3', 'bob', passwords.bob))).status).toBe(429);
    expect(
      (
        await counted(
          send(url, '/auth/v3/auth/tokens', {
            method: 'POST',
            body: { auth: { identity: { methods: ['password'], password: { user: { password: wrong } } } } },
          }),
        )
      ).status,
    ).toBe(400);
    const v3Broken = `v3-broken-${random()}`;
    keep('password in a broken V3 body', v3Broken);
    gatewayRequests += 2;
    const brokenV3 = await fetch(`${url}/auth/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: `{"auth": {"identity": {"methods": ["password"], "password": {"user": {"name": "alice", "password": "${v3Broken}"}}}}`,
    });
    expect(brokenV3.status).toBe(400);
    const brokenV2 = await fetch(`${url}/auth/v2.0/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: `{"auth": {"passwordCredentials": {"username": "alice", "password": "${v3Broken}"}`,
    });
    expect(brokenV2.status).toBe(401);

    // Application credentials: one generated, one chosen; logins with each, a wrong and a broken one.
    const bobToken = tokens[3]!;
    const chosen = `chosen-appcred-secret-${random()}`;
    keep('chosen application credential secret', chosen);
    const appCreds: Array<{ id: string; secret: string }> = [];
    for (const [name, secret] of [
      ['generated', undefined],
      ['chosen', chosen],
    ] as const) {
      const made = await counted(
        send(url, '/auth/v3/users/bob/application_credentials', {
          method: 'POST',
          headers: { 'X-Auth-Token': bobToken },
          body: { application_credential: { name, ...(secret ? { secret } : {}) } },
        }),
      );
      expect(made.status).toBe(201);
      const c = (JSON.parse(made.text) as { application_credential: { id: string; secret: string } })
        .application_credential;
      keep(`${name} application credential secret`, c.secret);
      appCreds.push(c);
    }
    const appCredLogin = (credential: Record<string, unknown>) =>
      counted(
        send(url, '/auth/v3/auth/tokens', {
          method: 'POST',
          body: { auth: { identity: { methods: ['application_credential'], application_credential: credential } } },
        }),
      );
    for (const c of appCreds) {
      const res = await appCredLogin({ id: c.id, secret: c.secret });
      expect(res.status).toBe(201);
      tokens.push(tokenOf('v3', res));
      expect((await appCredLogin({ id: c.id, secret: `${c.secret}x` })).status).toBe(401);
      expect((await appCredLogin({ name: 'generated', secret: c.secret })).status).toBe(400);
    }

    for (const t of tokens) {
      expect(
        (
          await counted(
            send(url, '/auth/v3/auth/tokens', { headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': t } }),
          )
        ).status,
      ).toBe(200);
      expect(
        (await counted(send(url, `/auth/v2.0/tokens/${t}`, { headers: { 'X-Auth-Token': serviceToken } }))).status,
      ).toBe(200);
    }
    expect(
      (
        await counted(
          send(url, '/auth/v3/auth/tokens', {
            method: 'HEAD',
            headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': tokens[0]! },
          }),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await counted(
          send(url, '/auth/v3/auth/tokens', {
            headers: { 'X-Auth-Token': `${tokens[0]}x`, 'X-Subject-Token': tokens[1]! },
          }),
        )
      ).status,
    ).toBe(401);
    expect(
      (await counted(send(url, `/auth/v2.0/tokens/${tokens[0]}x`, { headers: { 'X-Auth-Token': serviceToken } })))
        .status,
    ).toBe(404);
    // express matches routes whatever the letter case, so these validate too; none may log the token.
    expect(
      (await counted(send(url, `/auth/V2.0/TOKENS/${tokens[1]}`, { headers: { 'X-Auth-Token': serviceToken } })))
        .status,
    ).toBe(200);
    expect(
      (await counted(send(url, `/auth/v2.0/Tokens/${tokens[2]}`, { headers: { 'X-Auth-Token': serviceToken } })))
        .status,
    ).toBe(200);
    await counted(send(url, `/auth/v2.0//tokens/${tokens[3]}`, { headers: { 'X-Auth-Token': serviceToken } }));

    // Changes that void tokens: a new password, a revoked token, a user's tokens revoked, a deletion.
    const newPassword = `new-${random()}`;
    keep('changed password', newPassword);
    const patched = await api('PATCH', `/api/v1/users/${String(alice.body.id)}/`, { password: newPassword }, opAuth);
    expect(patched.status).toBe(202);
    const aliceNew = await counted(login(url, 'v1', 'alice', newPassword));
    tokens.push(tokenOf('v1', aliceNew));
    expect(
      (
        await counted(
          send(url, '/auth/v3/auth/tokens', {
            method: 'DELETE',
            headers: { 'X-Auth-Token': serviceToken, 'X-Subject-Token': tokens.at(-1)! },
          }),
        )
      ).status,
    ).toBe(204);
    expect(
      (
        await counted(
          send(url, '/auth/v1.0/users/bob/token', { method: 'DELETE', headers: { 'X-Auth-Token': serviceToken } }),
        )
      ).status,
    ).toBe(204);
    expect((await api('PATCH', `/api/v1/users/${bobId}/`, { enabled: false })).status).toBe(202);
    expect((await api('DELETE', `/api/v1/users/${bobId}`, undefined, opAuth)).status).toBe(204);

    for (const t of tokens)
      for (const [i, part] of tokenParts(t).entries()) keep(`token ${i ? 'jti' : 'signature'}`, part);
    // The stored password hashes (salt and key) are secrets too.
    const hashes = (await stack.db('storage_users').select('password_hash')) as Array<{ password_hash: string }>;
    for (const { password_hash } of hashes)
      for (const part of password_hash.split('$').slice(3)) keep('stored password hash part', part);

    // Request lines are written when the answer has been sent: wait for the last ones (one line per
    // request at least, checked below), however slow the machine.
    for (const deadline = Date.now() + 10_000; ;) {
      if (stack.apiLogs.lines.length >= apiRequests && gatewayLogs.lines.length >= gatewayRequests) break;
      if (Date.now() > deadline) break; // the counts are asserted below, saying what is missing
      await new Promise((r) => setTimeout(r, 20));
    }
    const logs = `${stack.apiLogs.text}\n${stack.gatewayLogs.text}\n${gatewayLogs.text}`;
    // The scenario was logged: one line per request at least, from both services.
    expect(apiRequests).toBeGreaterThan(10);
    expect(gatewayRequests).toBeGreaterThan(25);
    expect(stack.apiLogs.lines.length).toBeGreaterThanOrEqual(apiRequests);
    expect(gatewayLogs.lines.length).toBeGreaterThanOrEqual(gatewayRequests);
    expect(gatewayLogs.text).toContain('/auth/v3/auth/tokens');
    expect(gatewayLogs.text).toContain('/auth/v2.0/tokens/[token]');
    expect(stack.apiLogs.text).toContain('/api/v1/operators/');

    const found: string[] = [];
    for (const [what, secret] of secrets) {
      for (const needle of needles(secret)) {
        const at = logs.indexOf(needle);
        if (at >= 0) {
          found.push(`${what}: "${needle}" in …${logs.slice(Math.max(0, at - 80), at + needle.length + 20)}…`);
          break;
        }
      }
    }
    expect(found).toEqual([]);
  });

  it('when the audit log is read, then it holds no secret either', async () => {
    const audit = await fetch(`${stack.apiUrl}/api/v1/audit/?limit=0`, { headers: { Authorization: ADMIN_AUTH } });
    expect(audit.status).toBe(200);
    const text = await audit.text();
    expect(text.length).toBeGreaterThan(100);
    const found = [...secrets]
      .filter(([, secret]) => needles(secret).some((n) => text.includes(n)))
      .map(([what]) => what);
    expect(found).toEqual([]);
  });
});
