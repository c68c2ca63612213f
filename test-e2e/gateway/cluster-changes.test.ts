import knex, { type Knex } from 'knex';
import * as gateway from '@cairn/auth-gateway';
import { startService, type ServiceProcess } from '../support/processes';
import { ADMIN_AUTH, startStack, type Stack } from '../support/stack';

/**
 * A cluster's name, auth_url, storage_url and region reach every running gateway serving it within
 * a second, whoever changed the row and whether or not the gateway hears change notices at that
 * moment; a deleted cluster makes its gateways answer 503.
 */
const PW = 'cluster-change-password-0123';
const WITHIN_MS = 1000;

/** What a gateway hands out now, through V1, V2 and V3 (issue and validation). */
async function answers(gatewayUrl: string, user = 'carol') {
  const v1 = await fetch(`${gatewayUrl}/auth/v1.0`, { headers: { 'X-Auth-User': user, 'X-Auth-Key': PW } });
  const token = v1.headers.get('x-auth-token') ?? '';
  const v3 = await fetch(`${gatewayUrl}/auth/v3/auth/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      auth: {
        identity: {
          methods: ['password'],
          password: { user: { name: user, domain: { id: 'default' }, password: PW } },
        },
      },
    }),
  });
  const issued = (await v3.json()) as {
    token: { catalog: Array<{ type: string; endpoints: Array<{ interface: string; url: string; region: string }> }> };
  };
  const validated = await fetch(`${gatewayUrl}/auth/v3/auth/tokens`, {
    headers: { 'X-Auth-Token': token, 'X-Subject-Token': token },
  });
  const checked = (await validated.json()) as typeof issued;
  const v2 = await fetch(`${gatewayUrl}/auth/v2.0/tokens`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ auth: { passwordCredentials: { username: user, password: PW } } }),
  });
  const access = (
    (await v2.json()) as {
      access: { serviceCatalog: Array<{ type: string; endpoints: Array<{ publicURL: string; region: string }> }> };
    }
  ).access;
  const swift = (c: typeof issued) =>
    c.token.catalog.find((s) => s.type === 'object-store')!.endpoints.find((e) => e.interface === 'public')!;
  const identity = (c: typeof issued) =>
    c.token.catalog.find((s) => s.type === 'identity')!.endpoints.find((e) => e.interface === 'public')!;
  const v2Swift = access.serviceCatalog.find((s) => s.type === 'object-store')!.endpoints[0]!;
  return {
    statuses: [v1.status, v3.status, validated.status, v2.status],
    v1: v1.headers.get('x-storage-url'),
    v3: swift(issued).url,
    v3Region: swift(issued).region,
    v3Identity: identity(issued).url,
    validation: swift(checked).url,
    v2: v2Swift.publicURL,
    v2Region: v2Swift.region,
  };
}

/**
 * Polls until `check` holds; the milliseconds from `from` to the start of the first check that held
 * (throws past 5 s). The start, not the end: one check is four logins, which on two busy cores can
 * take longer than the propagation being measured.
 */
async function msUntil(from: number, check: () => Promise<boolean>): Promise<number> {
  for (;;) {
    const started = Date.now();
    if (await check()) return started - from;
    if (Date.now() - from > 5000) throw new Error('not true within 5 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function patchCluster(apiUrl: string, id: number, body: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${apiUrl}/api/v1/clusters/${id}/`, {
    method: 'PATCH',
    headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.status;
}

describe('cluster settings and running gateways on Postgres', () => {
  let stack: Stack;
  let admin: Knex;
  const replicas: ServiceProcess[] = [];
  const gateways = () => [stack.gatewayUrl, ...replicas.map((r) => r.url)];
  const listenBackends = async () =>
    (
      (await admin.raw(
        `SELECT pid FROM pg_stat_activity WHERE application_name = 'cairn-auth-gateway-listen' AND datname = current_database()`,
      )) as { rows: Array<{ pid: number }> }
    ).rows;

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    admin = knex({ client: 'pg', connection: stack.databaseUrl!, pool: { min: 0, max: 1 } });
    await stack.createUser('carol', PW);
    // Two more replicas as real processes; without Redis each keeps its own tokens, which is all
    // these checks need.
    for (let i = 0; i < 2; i++)
      replicas.push(
        await startService('auth-gateway', { DATABASE_URL: stack.databaseUrl!, CAIRN_GATEWAY_CLUSTER: 'default' }),
      );
  }, 120_000);
  afterAll(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await admin?.destroy();
    await stack?.close();
  });

  it('when storage_url, auth_url, region and name are PATCHed through the API, then every replica answers with them within a second', async () => {
    for (const url of gateways()) expect((await answers(url)).v1).toBe('http://127.0.0.1:8080/v1/AUTH_carol');
    expect(await listenBackends()).toHaveLength(3);
    // Heard by notice, not by reading the row every half second.
    expect(stack.gatewayDeps.cluster.isFollowing).toBe(true);

    const from = Date.now();
    expect(
      await patchCluster(stack.apiUrl, 1, {
        storage_url: 'https://swift.example.net/v1/',
        auth_url: 'https://auth.example.net/auth',
        region: 'RegionTwo',
        name: 'renamed',
      }),
    ).toBe(202);
    const patched = Date.now();
    for (const url of gateways()) {
      const ms = await msUntil(
        patched,
        async () => (await answers(url)).v1 === 'https://swift.example.net/v1/AUTH_carol',
      );
      expect([url, ms < WITHIN_MS]).toEqual([url, true]);
      expect(await answers(url)).toEqual({
        statuses: [200, 201, 200, 200],
        v1: 'https://swift.example.net/v1/AUTH_carol',
        v3: 'https://swift.example.net/v1/AUTH_carol',
        v3Region: 'RegionTwo',
        v3Identity: 'https://auth.example.net/auth/v3',
        validation: 'https://swift.example.net/v1/AUTH_carol',
        v2: 'https://swift.example.net/v1/AUTH_carol',
        v2Region: 'RegionTwo',
      });
      // Discovery and the 401 challenge name the new public URL too.
      const root = await fetch(`${url}/auth/`, { redirect: 'manual' });
      expect(root.headers.get('location')).toBe('https://auth.example.net/auth/v3/');
      const refused = await fetch(`${url}/auth/v3/auth/tokens`, {
        headers: { 'X-Auth-Token': 'nope', 'X-Subject-Token': 'nope' },
      });
      expect(refused.headers.get('www-authenticate')).toBe('Keystone uri="https://auth.example.net/auth/v3"');
    }
    expect(stack.gatewayDeps.cluster.settings.name).toBe('renamed');
    expect(Date.now() - from).toBeLessThan(30_000);
  });

  it('when the row is changed with plain SQL, then the replicas follow it as well', async () => {
    await stack.db('clusters').where({ id: 1 }).update({ storage_url: 'http://sql.example.net:8080/v1' });
    const changed = Date.now();
    for (const url of gateways()) {
      const ms = await msUntil(
        changed,
        async () => (await answers(url)).v1 === 'http://sql.example.net:8080/v1/AUTH_carol',
      );
      expect([url, ms < WITHIN_MS]).toEqual([url, true]);
    }
  });

  it('when the notice connections are cut, then a change still reaches every replica within a second, and they listen again by themselves', async () => {
    const before = await listenBackends();
    expect(before).toHaveLength(3);
    await admin.raw(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'cairn-auth-gateway-listen' AND datname = current_database()`,
    );
    await msUntil(Date.now(), async () => !stack.gatewayDeps.users.isFollowing);
    expect(stack.gatewayDeps.cluster.isFollowing).toBe(false);
    expect(await patchCluster(stack.apiUrl, 1, { storage_url: 'http://unheard.example.net/v1' })).toBe(202);
    const patched = Date.now();
    for (const url of gateways()) {
      const ms = await msUntil(
        patched,
        async () => (await answers(url)).v1 === 'http://unheard.example.net/v1/AUTH_carol',
      );
      expect([url, ms < WITHIN_MS]).toEqual([url, true]);
    }
    await msUntil(Date.now(), async () => (await listenBackends()).length === 3);
    await msUntil(Date.now(), async () => stack.gatewayDeps.users.isFollowing);
    expect(stack.gatewayDeps.cluster.isFollowing).toBe(true);
    expect(await patchCluster(stack.apiUrl, 1, { storage_url: 'http://heard.example.net/v1' })).toBe(202);
    const again = Date.now();
    for (const url of gateways())
      expect([
        url,
        (await msUntil(again, async () => (await answers(url)).v1 === 'http://heard.example.net/v1/AUTH_carol')) <
          WITHIN_MS,
      ]).toEqual([url, true]);
  });

  it('when the gateway is configured with its own storage and public URLs, then they still win over the row, and the region follows it', async () => {
    const config = {
      ...gateway.readConfig({
        DATABASE_URL: stack.databaseUrl!,
        CAIRN_GATEWAY_HOST: '127.0.0.1',
        CAIRN_GATEWAY_PORT: '0',
        LOG_LEVEL: 'silent',
      }),
      cluster: '1',
    };
    const pinned = {
      ...config,
      storageUrl: 'https://pinned.example.org/v1',
      publicUrl: 'https://pinned.example.org/auth',
    };
    const deps = await gateway.createDeps(pinned, { db: stack.db, log: gateway.createLogger('silent') });
    const running = await gateway.startAuthGateway(pinned, deps);
    const url = `http://127.0.0.1:${running.port}`;
    try {
      expect(
        await patchCluster(stack.apiUrl, 1, {
          storage_url: 'http://ignored.example.net/v1',
          auth_url: 'http://ignored.example.net/auth',
          region: 'RegionThree',
        }),
      ).toBe(202);
      const patched = Date.now();
      expect(await msUntil(patched, async () => (await answers(url)).v3Region === 'RegionThree')).toBeLessThan(
        WITHIN_MS,
      );
      expect(await answers(url)).toMatchObject({
        v1: 'https://pinned.example.org/v1/AUTH_carol',
        v3: 'https://pinned.example.org/v1/AUTH_carol',
        v3Identity: 'https://pinned.example.org/auth/v3',
        v2Region: 'RegionThree',
      });
    } finally {
      await running.close(0);
    }
  });

  it('when its cluster is deleted, then a gateway answers 503 saying so on every route (Keystone shape on Keystone routes) and is not ready', async () => {
    const made = await fetch(`${stack.apiUrl}/api/v1/clusters/`, {
      method: 'POST',
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'doomed',
        auth_url: 'http://doomed.example/auth',
        storage_url: 'http://doomed.example/v1',
      }),
    });
    expect(made.status).toBe(201);
    const { id } = (await made.json()) as { id: number };
    const doomed = await startService('auth-gateway', {
      DATABASE_URL: stack.databaseUrl!,
      CAIRN_GATEWAY_CLUSTER: 'doomed',
    });
    try {
      expect(
        (await fetch(`${doomed.url}/auth/v1.0`, { headers: { 'X-Auth-User': 'nobody', 'X-Auth-Key': PW } })).status,
      ).toBe(401);
      expect((await fetch(`${doomed.url}/readyz`)).status).toBe(200);
      const res = await fetch(`${stack.apiUrl}/api/v1/clusters/${id}/`, {
        method: 'DELETE',
        headers: { Authorization: ADMIN_AUTH },
      });
      expect(res.status).toBe(204);
      const deleted = Date.now();
      expect(
        await msUntil(
          deleted,
          async () =>
            (await fetch(`${doomed.url}/auth/v1.0`, { headers: { 'X-Auth-User': 'nobody', 'X-Auth-Key': PW } }))
              .status === 503,
        ),
      ).toBeLessThan(WITHIN_MS);

      const v1 = await fetch(`${doomed.url}/auth/v1.0`, { headers: { 'X-Auth-User': 'nobody', 'X-Auth-Key': PW } });
      expect(v1.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await v1.text()).toMatch(
        /^The cluster this gateway serves \('doomed', uuid [0-9a-f-]{36}\) has been deleted/,
      );
      for (const [method, path] of [
        ['POST', '/auth/v3/auth/tokens'],
        ['GET', '/auth/v3/auth/tokens'],
        ['POST', '/auth/v2.0/tokens'],
        ['GET', '/auth/'],
        ['GET', '/auth/v3'],
      ] as const) {
        const answer = await fetch(`${doomed.url}${path}`, {
          method,
          headers: { 'Content-Type': 'application/json', 'X-Auth-Token': 'x', 'X-Subject-Token': 'x' },
          body: method === 'POST' ? '{}' : undefined,
        });
        const body = (await answer.json()) as { error: { code: number; title: string; message: string } };
        expect([path, answer.status, body.error.code, body.error.title]).toEqual([
          path,
          503,
          503,
          'Service Unavailable',
        ]);
        expect(body.error.message).toContain("('doomed'");
      }
      const ready = await fetch(`${doomed.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toMatchObject({ status: 'unavailable', cluster: 'deleted', postgres: 'ok' });
      expect((await fetch(`${doomed.url}/healthz`)).status).toBe(200);
      // The other cluster's gateways are untouched.
      expect((await answers(stack.gatewayUrl)).statuses).toEqual([200, 201, 200, 200]);
    } finally {
      await doomed.stop();
    }
  });
});

describe('cluster settings and the gateway on embedded PGlite (one shared handle, no notices)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ database: 'pglite' });
    await stack.createUser('carol', PW);
  });
  afterAll(() => stack.close());

  it('when storage_url is PATCHed through the API, then the gateway answers with it within a second', async () => {
    expect(stack.gatewayDeps.userChanges).toBeUndefined();
    expect(stack.gatewayDeps.cluster.isFollowing).toBe(false);
    expect((await answers(stack.gatewayUrl)).v1).toBe('http://127.0.0.1:8080/v1/AUTH_carol');
    expect(await patchCluster(stack.apiUrl, 1, { storage_url: 'http://lite.example.net/v1', region: 'Lite' })).toBe(
      202,
    );
    const patched = Date.now();
    expect(
      await msUntil(
        patched,
        async () => (await answers(stack.gatewayUrl)).v1 === 'http://lite.example.net/v1/AUTH_carol',
      ),
    ).toBeLessThan(WITHIN_MS);
    expect(await answers(stack.gatewayUrl)).toMatchObject({
      v3: 'http://lite.example.net/v1/AUTH_carol',
      v2Region: 'Lite',
      v3Region: 'Lite',
    });
  });

  const logged = (msg: string) =>
    stack.gatewayLogs.lines.filter((l) => (JSON.parse(l) as { msg?: string }).msg === msg).length;

  it('when the cluster row cannot be read, then the gateway keeps serving its last settings rather than calling the cluster deleted', async () => {
    await stack.db.raw('ALTER TABLE clusters RENAME TO clusters_elsewhere');
    try {
      // Once its poll has tried to read the row and failed (however late on a busy machine), and
      // two reads more have failed too: the warning is said once per outage.
      await msUntil(
        Date.now(),
        async () => logged("could not read this gateway's cluster row; keeping its last settings") > 0,
      );
      await stack.gatewayDeps.cluster.refresh();
      await stack.gatewayDeps.cluster.refresh();
      expect(stack.gatewayDeps.cluster.deleted).toBe(false);
      expect((await answers(stack.gatewayUrl)).v1).toBe('http://lite.example.net/v1/AUTH_carol');
      expect(logged("could not read this gateway's cluster row; keeping its last settings")).toBe(1);
    } finally {
      await stack.db.raw('ALTER TABLE clusters_elsewhere RENAME TO clusters');
    }
    await msUntil(Date.now(), async () => logged('cluster row readable again') === 1);
  });
});
