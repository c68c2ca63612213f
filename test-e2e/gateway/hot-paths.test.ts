import { startStack, type Stack } from '../support/stack';

const PW = 'judy-password-0123456789';

/** Values that differ between any two answers: fresh ids, tokens, dates and expiry times. */
const VARYING = new Set(['date', 'x-auth-token', 'x-storage-token', 'x-subject-token', 'x-request-id', 'x-openstack-request-id', 'x-trans-id', 'x-auth-token-expires']);

interface Seen {
  status: number;
  headers: Record<string, string>;
  body: string;
}

async function fetchSeen(url: string, headers: Record<string, string>, sent?: string): Promise<Seen> {
  const res = await fetch(url, sent === undefined ? { headers } : { method: 'POST', headers, body: sent });
  const seen: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    seen[name] = VARYING.has(name) ? (value ? '<set>' : '<empty>') : value;
  });
  const body = (await res.text()).replace(/"(audit_ids|expires_at|issued_at)":(\[[^\]]*\]|"[^"]*")/g, '"$1":<varies>');
  return { status: res.status, headers: seen, body };
}

/**
 * V1 logins and V3 validations by GET are answered before express (src/http/hot-paths.ts). A
 * query string of `?` makes the same call take the express route, so both must answer alike:
 * status, every header (fresh ids and tokens only checked for presence) and body.
 */
describe('auth-gateway hot paths answer as the express routes do', () => {
  let stack: Stack;
  let service: string;
  let judy: string;

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres', redis: true, gateway: { failureLimit: 1000 } });
    await stack.createUser('judy', PW);
    await stack.createUser('svc', PW, { is_superuser: true });
    const login = async (user: string) => (await fetch(`${stack.gatewayUrl}/auth/v1.0`, { headers: { 'X-Auth-User': user, 'X-Auth-Key': PW } })).headers.get('x-auth-token')!;
    service = await login('svc');
    judy = await login('judy');
  });
  afterAll(() => stack.close());

  const both = async (path: string, headers: Record<string, string>, body?: string) => {
    const hot = await fetchSeen(`${stack.gatewayUrl}${path}`, headers, body);
    const routed = await fetchSeen(`${stack.gatewayUrl}${path}${path.includes('?') ? '&' : '?'}`, headers, body);
    return { hot, routed };
  };

  it.each([
    ['a V1 login', '/auth/v1.0', { 'X-Auth-User': 'judy', 'X-Auth-Key': PW }],
    ['a V1 login on /auth/v1 as account:user', '/auth/v1', { 'X-Auth-User': 'judy:judy', 'X-Auth-Key': PW }],
    ['a V1 login with tempauth\'s storage headers', '/auth/v1.0', { 'X-Storage-User': 'judy', 'X-Storage-Pass': PW }],
    ['a V1 login with a wrong key', '/auth/v1.0', { 'X-Auth-User': 'judy', 'X-Auth-Key': 'wrong' }],
    ['a V1 login without a key', '/auth/v1.0', { 'X-Auth-User': 'judy' }],
    ['a V1 login with a caller-given request id', '/auth/v1.0', { 'X-Auth-User': 'judy', 'X-Auth-Key': PW, 'X-Request-Id': 'lb-1234' }],
  ])('when %s is answered by both, then the answers agree', async (_what, path, headers) => {
    const { hot, routed } = await both(path, headers);
    expect(hot).toEqual(routed);
    expect(hot.headers['x-trans-id']).toBe('<set>');
  });

  it('when a token is validated by both, with and without the catalog, then the answers agree', async () => {
    for (const path of ['/auth/v3/auth/tokens', '/auth/v3/auth/tokens?nocatalog']) {
      const { hot, routed } = await both(path, { 'X-Auth-Token': service, 'X-Subject-Token': judy });
      expect(hot.status).toBe(200);
      expect(hot).toEqual(routed);
    }
    const full = await fetchSeen(`${stack.gatewayUrl}/auth/v3/auth/tokens`, { 'X-Auth-Token': service, 'X-Subject-Token': judy });
    const bare = await fetchSeen(`${stack.gatewayUrl}/auth/v3/auth/tokens?nocatalog`, { 'X-Auth-Token': service, 'X-Subject-Token': judy });
    expect(full.body).toContain('"catalog"');
    expect(bare.body).not.toContain('"catalog"');
  });

  it.each([
    ['an unknown subject token', () => ({ 'X-Auth-Token': service, 'X-Subject-Token': 'nope' }), 404],
    ['a bad caller token', () => ({ 'X-Auth-Token': 'nope', 'X-Subject-Token': judy }), 401],
    ['a caller who may not see the token', () => ({ 'X-Auth-Token': judy, 'X-Subject-Token': service }), 403],
  ])('when a validation has %s, then both answer the same refusal', async (_what, headers, status) => {
    const { hot, routed } = await both('/auth/v3/auth/tokens', headers());
    expect(hot.status).toBe(status);
    expect(hot).toEqual(routed);
  });

  const v3Body = (password: string, scope: unknown = { project: { name: 'judy', domain: { id: 'default' } } }) =>
    JSON.stringify({ auth: { identity: { methods: ['password'], password: { user: { name: 'judy', domain: { id: 'default' }, password } } }, scope } });
  const JSON_TYPE = { 'Content-Type': 'application/json' };

  it.each([
    ['a good V3 login', JSON_TYPE, () => v3Body(PW), 201],
    ['a V3 login with an explicit UTF-8 charset', { 'Content-Type': 'application/json; charset=UTF-8' }, () => v3Body(PW), 201],
    ['a V3 login sent as text/plain (what fetch sends by default)', {}, () => v3Body(PW), 201],
    ['a V3 login whose body starts with a byte-order mark', JSON_TYPE, () => `\ufeff${v3Body(PW)}`, 201],
    ['a wrong password', JSON_TYPE, () => v3Body('wrong'), 401],
    ['a domain scope', JSON_TYPE, () => v3Body(PW, { domain: { id: 'default' } }), 401],
    ['a body that is not JSON', JSON_TYPE, () => '{"auth": ', 400],
    ['JSON that is neither object nor array', JSON_TYPE, () => ' "auth"', 400],
    ['JSON that misses the identity', JSON_TYPE, () => '{"auth": {}}', 400],
  ])('when %s is posted to both, then the answers agree', async (_what, headers, body, status) => {
    const { hot, routed } = await both('/auth/v3/auth/tokens', headers, body());
    expect(hot.status).toBe(status);
    expect(hot).toEqual(routed);
  });

  it('when hot-path calls are made, then /metrics counts them under the route templates express uses', async () => {
    const counted = async () => {
      const text = await (await fetch(`${stack.gatewayUrl}/metrics`)).text();
      const count = (route: string, status: number) =>
        Number(new RegExp(`^http_requests_total\\{[^}]*method="GET",route="${route.replace(/[.]/g, '\\.')}",status="${status}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0);
      return { v1: count('/auth/v1.0', 200), validate: count('/auth/v3/auth/tokens', 200) };
    };
    const before = await counted();
    await fetch(`${stack.gatewayUrl}/auth/v1.0`, { headers: { 'X-Auth-User': 'judy', 'X-Auth-Key': PW } });
    await fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, { headers: { 'X-Auth-Token': service, 'X-Subject-Token': judy } });
    expect(await counted()).toEqual({ v1: before.v1 + 1, validate: before.validate + 1 });
  });
});
