import fc from 'fast-check';
import { newUsernameSchema } from '@cairn/domain';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';
import { percentEncode, type HostileRequest } from './arbitraries';
import { errorMessage } from './checks';
import { RawPool } from './raw-http';
import { changedTables, snapshot } from './snapshot';

/**
 * User names and header values: valid names (ASCII and Latin-1) round-trip through the API and
 * log in at the gateway; names the rule forbids, SQL metacharacters, CR/LF and NUL never reach
 * storage or a query as anything but data.
 */
const PASSWORD = 'names-test-password-0123456789';
const seed = process.env.HOSTILE_SEED ? Number(process.env.HOSTILE_SEED) : undefined;

describe('hostile names and headers', () => {
  let stack: Stack;
  let api: RawPool;
  let gateway: RawPool;
  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    api = new RawPool(stack.apiUrl, 2);
    gateway = new RawPool(stack.gatewayUrl, 2);
  });
  afterAll(async () => {
    api?.close();
    gateway?.close();
    await stack?.close();
  });

  const apiCall = (method: string, path: string, body?: unknown) =>
    fetch(`${stack.apiUrl}${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  const validName = fc
    .oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
      fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 30 }),
    )
    .map((s) => s.trim())
    .filter((s) => s.length > 0 && !newUsernameSchema.validate(s).error && !s.startsWith('hostile-'));

  it('when a valid user name (ASCII or Latin-1) is created, then it round-trips through the API (detail and filter) and logs in with V1 and V3 at the gateway', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(validName, async (name) => {
        if (seen.has(name)) return;
        seen.add(name);
        const created = await apiCall('POST', '/api/v1/users/', {
          cluster: '/api/v1/clusters/1/',
          user: name,
          password: PASSWORD,
        });
        expect(created.status).toBe(201);
        const { id, user } = (await created.json()) as { id: string; user: string };
        expect(user).toBe(name);
        const detail = (await (await apiCall('GET', `/api/v1/users/${id}/`)).json()) as { user: string };
        expect(detail.user).toBe(name);
        const filtered = (await (await apiCall('GET', `/api/v1/users/?user=${percentEncode(name)}`)).json()) as {
          objects: Array<{ id: string }>;
        };
        expect(filtered.objects.map((o) => o.id)).toEqual([id]);

        const v3 = await fetch(`${stack.gatewayUrl}/auth/v3/auth/tokens`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({
            auth: {
              identity: {
                methods: ['password'],
                password: { user: { name, domain: { id: 'default' }, password: PASSWORD } },
              },
            },
          }),
        });
        expect(v3.status).toBe(201);
        const token = (await v3.json()) as { token: { user: { name: string }; project: { name: string } } };
        expect(token.token.user.name).toBe(name);
        expect(token.token.project.name).toBe(name);

        // V1: the name travels as UTF-8 bytes in X-Auth-User, as swiftclient sends it.
        const req: HostileRequest = {
          service: 'gateway',
          method: 'GET',
          path: '/auth/v1.0',
          headers: [
            ['X-Auth-User', name],
            ['X-Auth-Key', PASSWORD],
          ],
          label: 'v1',
          write: false,
        };
        const v1 = await gateway.send(req);
        expect(v1.status).toBe(200);
        expect(v1.headers['x-storage-url']).toBe(`http://127.0.0.1:8080/v1/${encodeURIComponent(`AUTH_${name}`)}`);
      }),
      // Each run hashes a password and checks it: a few runs plus names chosen to be awkward.
      {
        numRuns: 4,
        seed,
        endOnFailure: true,
        examples: [['ünïcödé-ÆØÅ-ÿ©'], ['\u00a0spaced  name ß\u00ad'], ["x%41_'quoted'"]],
      },
    );
  });

  it("when a user name holds '/', ':', a control character, NUL, CR/LF, a lone surrogate or a character beyond Latin-1, then the API answers 400 with the rule and stores nothing", async () => {
    const before = await snapshot(stack.db);
    for (const user of [
      'a/b',
      'a:b',
      'a\u0000b',
      'a\r\nb',
      '\u0007',
      'a\u0085b',
      '\ud800',
      'x\udfffy',
      '',
      'x'.repeat(252),
      '\uffff',
      '用户',
      'ǅ',
    ]) {
      const res = await apiCall('POST', '/api/v1/users/', { cluster: '/api/v1/clusters/1/', user, password: PASSWORD });
      expect([JSON.stringify(user), res.status]).toEqual([JSON.stringify(user), 400]);
      const body = (await res.json()) as { error: string };
      expect(body.error).toMatch(/The 'user' field must be 1 to 251 characters|The 'user' field has no data/);
    }
    expect(changedTables(before, await snapshot(stack.db))).toEqual([]);
  });

  it('when filter values hold SQL metacharacters or NUL, then they are matched literally or refused with 400, never a 5xx', async () => {
    const created = await apiCall('POST', '/api/v1/users/', {
      cluster: '/api/v1/clusters/1/',
      user: "zq'brien%_\\",
      password: PASSWORD,
    });
    expect(created.status).toBe(201);
    const count = async (query: string) => {
      const res = await apiCall('GET', `/api/v1/users/?${query}`);
      expect(res.status).toBe(200);
      return ((await res.json()) as { meta: { total_count: number } }).meta.total_count;
    };
    expect(await count(`user=${percentEncode("zq'brien%_\\")}`)).toBe(1);
    expect(await count(`user__startswith=${percentEncode("zq'brien%")}`)).toBe(1);
    // Scoped to 'zq': the names the test above draws at random may start with '%' or hold '%_\'.
    expect(await count(`user__startswith=${percentEncode('zq%')}`)).toBe(0);
    expect(await count(`user__startswith=zq&user__contains=${percentEncode('_')}`)).toBe(1);
    expect(await count(`user__startswith=zq&user__contains=${percentEncode('b_')}`)).toBe(0);
    expect(await count(`user__startswith=zq&user__icontains=${percentEncode('%_\\')}`)).toBe(1);
    expect(await count(`user=${percentEncode("' OR '1'='1")}`)).toBe(0);
    for (const query of [
      'user=a%00b',
      'user__startswith=%00',
      'cluster__name=%00',
      'user__in=a,%00',
      'user=%ff%fe',
      'name=%c0%80',
    ]) {
      const res = await apiCall('GET', `/api/v1/users/?${query}`);
      expect([query, res.status < 500]).toEqual([query, true]);
      if (res.status >= 400) expect(((await res.json()) as { error: string }).error).toBeTruthy();
    }
  });

  it('when limit and offset are huge, negative or not numbers, then the answer is the capped page or a 400 naming the value', async () => {
    const meta = async (query: string) => {
      const res = await apiCall('GET', `/api/v1/users/?${query}`);
      return {
        status: res.status,
        body: (await res.json()) as { meta?: { limit: number; offset: number }; error?: string },
      };
    };
    expect((await meta('limit=1000000000000')).body.meta?.limit).toBe(1000);
    expect((await meta('limit=99999999999999999999999999')).body.meta?.limit).toBe(1000);
    for (const q of ['offset=9223372036854775807', 'offset=99999999999999999999999']) {
      const { status, body } = await meta(q);
      // Past the end: an empty page, or a 400 naming the offset.
      if (status === 200) expect((body as { objects: unknown[] }).objects).toEqual([]);
      else expect([q, status, body.error]).toEqual([q, 400, expect.stringMatching(/Invalid offset/)]);
    }
    for (const q of ['limit=-1', 'offset=-1', 'limit=abc', 'offset=1e3', 'limit=1.5']) {
      const { status, body } = await meta(q);
      expect([q, status]).toEqual([q, 400]);
      expect(body.error).toMatch(/Invalid (limit|offset)/);
    }
    const dup = await meta('limit=1&limit=5&offset=0&offset=0');
    expect(dup.status).toBeLessThan(500);
  });

  it('when a header holds NUL or a bare CR, is malformed, or is too long, then the answer is a 4xx that says why, and the server keeps answering', async () => {
    const cases: Array<[RawPool, 'api' | 'gateway', string, Array<[string, string]>]> = [
      [
        gateway,
        'gateway',
        '/auth/v1.0',
        [
          ['X-Auth-User', 'a\u0000b'],
          ['X-Auth-Key', 'x'],
        ],
      ],
      [
        gateway,
        'gateway',
        '/auth/v1.0',
        [
          ['X-Auth-User', 'a\rb'],
          ['X-Auth-Key', 'x'],
        ],
      ],
      [
        gateway,
        'gateway',
        '/auth/v1.0',
        [
          ['X Auth User', 'a'],
          ['X-Auth-Key', 'x'],
        ],
      ],
      [
        gateway,
        'gateway',
        '/auth/v1.0',
        [
          ['X-Auth-User', 'a'.repeat(40_000)],
          ['X-Auth-Key', 'x'],
        ],
      ],
      [api, 'api', '/api/v1/users/', [['Authorization', `${ADMIN_AUTH}\u0000`]]],
      [
        api,
        'api',
        '/api/v1/users/',
        [
          ['Authorization', ADMIN_AUTH],
          ['X-Request-Id', 'x'.repeat(40_000)],
        ],
      ],
      [api, 'api', `/api/v1/users/?user=${'u'.repeat(40_000)}`, [['Authorization', ADMIN_AUTH]]],
    ];
    for (const [pool, service, path, headers] of cases) {
      const req: HostileRequest = { service, method: 'GET', path, headers, label: path, write: false, fresh: true };
      const res = await pool.send(req);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(errorMessage(req, res)).toBeTruthy();
    }
    // CR LF inside a value ends the header: the rest is a header of its own, never a second response.
    const split: HostileRequest = {
      service: 'gateway',
      method: 'GET',
      path: '/auth/v1.0',
      headers: [
        ['X-Auth-User', 'a\r\nX-Injected: 1'],
        ['X-Auth-Key', 'x'],
      ],
      label: 'v1',
      write: false,
      fresh: true,
    };
    const res = await gateway.send(split);
    expect(res.status).toBe(401);
    expect(res.headers['x-injected']).toBeUndefined();
    for (const url of [stack.apiUrl, stack.gatewayUrl]) expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('when a method is unknown or odd, then the answer is 405 with Allow or a 4xx that says why', async () => {
    for (const method of ['PROPFIND', 'TRACE', 'PURGE', 'FOO', 'get']) {
      for (const [pool, service, path] of [
        [api, 'api', '/api/v1/users/'],
        [gateway, 'gateway', '/auth/v3/auth/tokens'],
      ] as const) {
        const req: HostileRequest = {
          service,
          method,
          path,
          headers: service === 'api' ? [['Authorization', ADMIN_AUTH]] : [],
          label: path,
          write: false,
          fresh: true,
        };
        const res = await pool.send(req);
        expect([method, path, res.status >= 400 && res.status < 500]).toEqual([method, path, true]);
        expect(errorMessage(req, res)).toBeTruthy();
      }
    }
  });
});
