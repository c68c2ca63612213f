import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { sample } from './support';

const PASSWORD = 'metrics-password-0123456789';

describe('/metrics of both services', () => {
  let stack: Stack;
  let userId: string;
  beforeAll(async () => {
    stack = await startStack({ database: 'postgres', redis: true });
    userId = (await stack.createUser('metrics-alice', PASSWORD)).id;
  });
  afterAll(() => stack.close());

  const gatewayPage = async () => {
    const res = await fetch(`${stack.gatewayUrl}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };
  const v3Login = (password: string) =>
    fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: 'metrics-alice', domain: { id: 'default' }, password } },
          },
        },
      }),
    });

  it('when /metrics is fetched without credentials, then it answers in Prometheus text format with process metrics', async () => {
    for (const url of [stack.gatewayUrl, stack.apiUrl]) {
      const res = await fetch(`${url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      const text = await res.text();
      expect(text).toContain('# TYPE process_cpu_seconds_total counter');
      expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    }
  });

  it('when a V3 login succeeds, then the issued counter for v3 and the login route template with status 201 each grow by one', async () => {
    const before = await gatewayPage();
    const res = await v3Login(PASSWORD);
    expect(res.status).toBe(201);
    const after = await gatewayPage();
    const issued = (page: string) =>
      sample(page, 'cairn_tokens_issued_total', { version: 'v3', service: 'auth-gateway' });
    expect(issued(after) - issued(before)).toBe(1);
    const requests = (page: string) =>
      sample(page, 'http_requests_total', { method: 'POST', route: '/auth/v3/auth/tokens', status: '201' });
    expect(requests(after) - requests(before)).toBe(1);
    const latency = (page: string) =>
      sample(page, 'http_request_duration_seconds_count', {
        method: 'POST',
        route: '/auth/v3/auth/tokens',
        status: '201',
      });
    expect(latency(after) - latency(before)).toBe(1);
  });

  it('when a V3 login has a wrong password, then the refused counter for v3 / invalid_credentials grows and issued does not', async () => {
    const before = await gatewayPage();
    expect((await v3Login('wrong-password-0123456789')).status).toBe(401);
    const after = await gatewayPage();
    expect(
      sample(after, 'cairn_tokens_refused_total', { version: 'v3', reason: 'invalid_credentials' }) -
        sample(before, 'cairn_tokens_refused_total', { version: 'v3', reason: 'invalid_credentials' }),
    ).toBe(1);
    expect(sample(after, 'cairn_tokens_issued_total', { version: 'v3' })).toBe(
      sample(before, 'cairn_tokens_issued_total', { version: 'v3' }),
    );
  });

  it('when V1 and V2 logins succeed or fail, then they count under their own version', async () => {
    const before = await gatewayPage();
    const v1 = await fetch(`${stack.gatewayUrl}/auth/v1.0`, {
      headers: { 'X-Auth-User': 'metrics-alice', 'X-Auth-Key': PASSWORD },
    });
    expect(v1.status).toBe(200);
    const v1bad = await fetch(`${stack.gatewayUrl}/auth/v1.0`, { headers: { 'X-Auth-User': 'metrics-alice' } });
    expect(v1bad.status).toBe(401);
    const v2 = await fetch(`${stack.gatewayUrl}/auth/v2.0/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ auth: { passwordCredentials: { username: 'metrics-alice', password: PASSWORD } } }),
    });
    expect(v2.status).toBe(200);
    const after = await gatewayPage();
    const delta = (name: string, labels: Record<string, string>) =>
      sample(after, name, labels) - sample(before, name, labels);
    expect(delta('cairn_tokens_issued_total', { version: 'v1' })).toBe(1);
    expect(delta('cairn_tokens_refused_total', { version: 'v1', reason: 'malformed' })).toBe(1);
    expect(delta('cairn_tokens_issued_total', { version: 'v2' })).toBe(1);
    expect(delta('http_requests_total', { method: 'GET', route: '/auth/v1.0', status: '200' })).toBe(1);
    expect(delta('http_requests_total', { method: 'POST', route: '/auth/v2.0/tokens', status: '200' })).toBe(1);
  });

  it('when a token is validated, then the validation counter for v3 / valid grows, and an unknown subject counts as not_found', async () => {
    const token = (await v3Login(PASSWORD)).headers.get('x-subject-token')!;
    const before = await gatewayPage();
    const ok = await fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
      headers: { 'X-Auth-Token': token, 'X-Subject-Token': token },
    });
    expect(ok.status).toBe(200);
    const missing = await fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
      headers: { 'X-Auth-Token': token, 'X-Subject-Token': 'no-such-token' },
    });
    expect(missing.status).toBe(404);
    const after = await gatewayPage();
    const delta = (result: string) =>
      sample(after, 'cairn_token_validations_total', { version: 'v3', result }) -
      sample(before, 'cairn_token_validations_total', { version: 'v3', result });
    expect(delta('valid')).toBe(1);
    expect(delta('not_found')).toBe(1);
  });

  it('when a login runs the KDF, then the KDF histogram counts it; a login answered from the verification cache does not', async () => {
    await stack.createUser('metrics-bob', PASSWORD);
    const login = () =>
      fetch(`${stack.gatewayUrl}/auth/v1.0`, {
        headers: { 'X-Auth-User': 'metrics-bob', 'X-Auth-Key': PASSWORD },
      }).then((r) => expect(r.status).toBe(200));
    const count = async () => sample(await gatewayPage(), 'cairn_password_kdf_seconds_count');
    const before = await count();
    await login();
    const afterFirst = await count();
    expect(afterFirst - before).toBe(1);
    expect(sample(await gatewayPage(), 'cairn_password_kdf_seconds_sum')).toBeGreaterThan(0);
    await login();
    expect(await count()).toBe(afterFirst);
  });

  it('when the gateway is scraped, then the database pool and Redis connection state are there', async () => {
    const page = await gatewayPage();
    expect(page).toMatch(/^cairn_db_pool_connections\{state="used",service="auth-gateway"\} \d+$/m);
    expect(page).toMatch(/^cairn_db_pool_connections\{state="free",service="auth-gateway"\} \d+$/m);
    expect(page).toMatch(/^cairn_db_pool_pending_acquires\{service="auth-gateway"\} 0$/m);
    expect(sample(page, 'cairn_redis_connected')).toBe(1);
  });

  it('when API requests name a user by id, then they count under the route template, for success and refusal alike, never the id', async () => {
    const before = await (await fetch(`${stack.apiUrl}/metrics`)).text();
    expect(
      (await fetch(`${stack.apiUrl}/api/v1/users/${userId}/`, { headers: { Authorization: ADMIN_AUTH } })).status,
    ).toBe(200);
    expect((await fetch(`${stack.apiUrl}/api/v1/users/${userId}/`)).status).toBe(401);
    expect(
      (await fetch(`${stack.apiUrl}/api/v1/users/987654321/`, { headers: { Authorization: ADMIN_AUTH } })).status,
    ).toBe(404);
    expect((await fetch(`${stack.apiUrl}/no/such/place-42`)).status).toBe(404);
    const after = await (await fetch(`${stack.apiUrl}/metrics`)).text();
    const delta = (labels: Record<string, string>) =>
      sample(after, 'http_requests_total', labels) - sample(before, 'http_requests_total', labels);
    expect(delta({ method: 'GET', route: '/api/v1/users/:id/', status: '200', service: 'management-api' })).toBe(1);
    expect(delta({ method: 'GET', route: '/api/v1/users/:id/', status: '401' })).toBe(1);
    expect(delta({ method: 'GET', route: '/api/v1/users/:id/', status: '404' })).toBe(1);
    expect(delta({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    const routes = new Set([...after.matchAll(/route="([^"]*)"/g)].map((m) => m[1]));
    expect([...routes].sort()).toEqual(['/api/v1/users/', '/api/v1/users/:id/', '/metrics', 'unmatched']);
    expect(after).toMatch(/^cairn_db_pool_connections\{state="used",service="management-api"\} \d+$/m);
  });
});
