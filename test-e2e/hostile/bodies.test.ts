import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { BILLION_LAUGHS, externalEntityBodies, type HostileRequest } from './arbitraries';
import { errorMessage } from './checks';
import { startTrap, type Trap } from './context';
import { RawPool, type RawResponse } from './raw-http';
import { changedTables, snapshot } from './snapshot';

/**
 * Bodies that attack the parsers: over the size limit, XML entities (expansion and external),
 * deep nesting, invalid UTF-8. Each is refused with a 4xx that says why, nothing is fetched, and
 * the database does not change.
 */
describe('hostile bodies', () => {
  let stack: Stack;
  let trap: Trap;
  let api: RawPool;
  let gateway: RawPool;
  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    trap = await startTrap();
    api = new RawPool(stack.apiUrl, 2);
    gateway = new RawPool(stack.gatewayUrl, 2);
  });
  afterAll(async () => {
    api?.close();
    gateway?.close();
    await trap?.close();
    await stack?.close();
  });

  const send = (
    service: 'api' | 'gateway',
    method: string,
    path: string,
    body: Buffer | string,
    headers: Array<[string, string]> = [],
    fresh = false,
  ) => {
    const req: HostileRequest = {
      service,
      method,
      path,
      headers: service === 'api' ? [['Authorization', ADMIN_AUTH], ...headers] : headers,
      body: typeof body === 'string' ? Buffer.from(body) : body,
      label: path,
      write: true,
      fresh,
    };
    return (service === 'api' ? api : gateway).send(req).then((res) => ({ res, message: errorMessage(req, res) }));
  };

  const API_WRITES: Array<[string, string]> = [
    ['POST', '/api/v1/users/'],
    ['PATCH', '/api/v1/users/1/'],
    ['POST', '/api/v1/clusters/'],
    ['PATCH', '/api/v1/clusters/1/'],
    ['POST', '/api/v1/operators/'],
    ['PATCH', '/api/v1/operators/1/'],
    ['POST', '/api/v1/operators/1/keys/'],
  ];
  const GATEWAY_POSTS = [
    '/auth/v2.0/tokens',
    '/auth/v2.0',
    '/auth/v3/tokens',
    '/auth/v3/auth/tokens',
    '/auth/v3/s3tokens',
    '/auth/v3/users/alice/credentials/OS-EC2',
    '/auth/v3/users/alice/application_credentials',
  ];

  it('when a probe (/healthz, /readyz, /metrics) is sent a body, then a small one is read and the probe answers in full; one over 64 KB gets 413', async () => {
    for (const service of ['api', 'gateway'] as const) {
      for (const path of ['/healthz', '/readyz', '/metrics']) {
        const small = await send(
          service,
          'GET',
          path,
          JSON.stringify({ user: 'A'.repeat(10 * 1024) }),
          [['Connection', 'close']],
          true,
        );
        expect([service, path, small.res.status]).toEqual([service, path, 200]);
        expect(small.res.body.length).toBe(Number(small.res.headers['content-length']));
        const big = await send(
          service,
          'GET',
          path,
          JSON.stringify({ user: 'A'.repeat(100 * 1024) }),
          [['Connection', 'close']],
          true,
        );
        expect([service, path, big.res.status]).toEqual([service, path, 413]);
        expect(big.message).toMatch(/too large|64 KB|limit/i);
      }
    }
  });

  it('when a body is over 64 KB on any write endpoint of either service, then the answer is 413 with a message that says so', async () => {
    // The body is read after the object is found: PATCH an existing user (users/1/).
    await stack.createUser('bodies-patch-target', 'a-password-of-twenty-plus');
    const before = await snapshot(stack.db);
    const big = JSON.stringify({ user: 'A'.repeat(70 * 1024) });
    for (const [method, path] of API_WRITES) {
      for (const type of ['application/json', 'application/xml', 'application/x-www-form-urlencoded']) {
        const { res, message } = await send('api', method, path, big, [['Content-Type', type]], true);
        expect([path, res.status]).toEqual([path, 413]);
        expect(message).toMatch(/too large/i);
      }
    }
    for (const path of GATEWAY_POSTS) {
      const { res, message } = await send('gateway', 'POST', path, big, [['Content-Type', 'application/json']], true);
      expect([path, res.status]).toEqual([path, 413]);
      expect(message).toMatch(/too large/i);
    }
    // V1 takes no body: one that is over the limit is refused the same way.
    for (const path of ['/auth/v1.0', '/auth/v1']) {
      const { res, message } = await send(
        'gateway',
        'GET',
        path,
        big,
        [
          ['X-Auth-User', 'x'],
          ['X-Auth-Key', 'y'],
        ],
        true,
      );
      expect([path, res.status]).toEqual([path, 413]);
      expect(message).toMatch(/too large/i);
    }
    expect(changedTables(before, await snapshot(stack.db))).toEqual([]);
  });

  it('when a body is sent chunked and grows past the limit, then the answer is 413 too', async () => {
    const chunk = 'A'.repeat(16 * 1024);
    const chunked = Buffer.from(
      `1\r\n{\r\n${Array.from({ length: 6 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('')}0\r\n\r\n`,
    );
    for (const [service, path] of [
      ['api', '/api/v1/users/'],
      ['gateway', '/auth/v2.0/tokens'],
      ['gateway', '/auth/v3/auth/tokens'],
    ] as const) {
      const { res, message } = await send(
        service,
        'POST',
        path,
        chunked,
        [
          ['Content-Type', 'application/json'],
          ['Transfer-Encoding', 'chunked'],
        ],
        true,
      );
      expect([path, res.status]).toEqual([path, 413]);
      expect(message).toMatch(/too large/i);
    }
  });

  it('when a device report declares a body over 200 MB, then it is refused with 413 before it is read', async () => {
    const started = Date.now();
    const { res, message } = await send(
      'api',
      'PUT',
      '/api/v1/clusters/1/devices/',
      '{"policies":[',
      [
        ['Content-Type', 'application/json'],
        ['Content-Length', String(300 * 1024 * 1024)],
      ],
      true,
    );
    expect(res.status).toBe(413);
    expect(message).toMatch(/too large/i);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('when an XML body declares entities (billion laughs, external file or URL, parameter entities, a remote DTD), then it is refused with 400, nothing is fetched and nothing is stored', async () => {
    const before = await snapshot(stack.db);
    const bodies = [BILLION_LAUGHS, ...externalEntityBodies(trap.url)];
    for (const body of bodies) {
      for (const [method, path] of API_WRITES) {
        const started = Date.now();
        const { res, message } = await send('api', method, path, body, [['Content-Type', 'application/xml']]);
        expect(Date.now() - started).toBeLessThan(2000);
        expect(res.status).toBeGreaterThanOrEqual(400);
        expect(res.status).toBeLessThan(500);
        expect(message).toBeTruthy();
        expect(res.body.toString()).not.toMatch(/root:|lollollol/);
      }
      for (const path of GATEWAY_POSTS) {
        const { res, message } = await send('gateway', 'POST', path, body, [['Content-Type', 'application/xml']]);
        expect([400, 401]).toContain(res.status);
        expect(message).toBeTruthy();
        expect(res.body.toString()).not.toMatch(/root:|lollollol/);
      }
    }
    // The ones with a DOCTYPE are refused for it by name.
    const { res, message } = await send('api', 'POST', '/api/v1/users/', bodies[1]!, [
      ['Content-Type', 'application/xml'],
    ]);
    expect(res.status).toBe(400);
    expect(message).toBe('XML bodies may not contain a DOCTYPE or entity declarations.');
    // Give a fetch that something started a moment to arrive.
    await new Promise((r) => setTimeout(r, 200));
    expect(trap.connections).toEqual([]);
    expect(changedTables(before, await snapshot(stack.db))).toEqual([]);
  });

  it('when JSON or XML is nested thousands of levels deep, then it is refused with a 4xx and the servers keep answering', async () => {
    const deep = (d: number) => '['.repeat(d) + ']'.repeat(d);
    const deepObject = (d: number) => '{"a":'.repeat(d) + '1' + '}'.repeat(d);
    const deepXml = (d: number) => `<object>${'<a>'.repeat(d)}x${'</a>'.repeat(d)}</object>`;
    const answers: RawResponse[] = [];
    for (const body of [deep(30_000), deepObject(10_000)]) {
      answers.push((await send('api', 'POST', '/api/v1/users/', body, [['Content-Type', 'application/json']])).res);
      for (const path of GATEWAY_POSTS)
        answers.push((await send('gateway', 'POST', path, body, [['Content-Type', 'application/json']])).res);
    }
    answers.push(
      (await send('api', 'POST', '/api/v1/users/', deepXml(7000), [['Content-Type', 'application/xml']])).res,
    );
    for (const res of answers) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    for (const url of [stack.apiUrl, stack.gatewayUrl]) expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('when a body is not valid UTF-8, then the API answers 400 saying so and stores nothing', async () => {
    const before = await snapshot(stack.db);
    const body = Buffer.concat([
      Buffer.from('{"cluster":"/api/v1/clusters/1/","password":"aaaaaaaaaaaaaaaaaaaaaaaa","user":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}'),
    ]);
    const { res, message } = await send('api', 'POST', '/api/v1/users/', body, [['Content-Type', 'application/json']]);
    expect(res.status).toBe(400);
    expect(message).toBe('Request body is not valid UTF-8.');
    expect(changedTables(before, await snapshot(stack.db))).toEqual([]);
  });
});
