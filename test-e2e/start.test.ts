/**
 * @slow: a cairn start per test (jest.sequencer.js starts it first)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createHmac, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { cairn, freePort, launch, NO_KEEP_ALIVE, REPO_ROOT } from './support/processes';
import { migratedDataDir } from './support/data-dir';
import { chmodTree, notOwnerOnly } from '../services/management-api/test/support/file-modes';
import { POSTGRES_ADMIN_URL as ADMIN_URL } from './support/local-services';

const PASSWORD = 'a-password-of-twenty-plus';
const API_LINE = /management API\s+http:\/\/\S+\/api\/v1\//;

/** Resident memory of a process in MB, as `ps` reports it. */
async function rssMb(pid: number): Promise<number> {
  return Number(await shell(`ps -o rss= -p ${pid}`)) / 1024;
}

/**
 * What the launcher may hold just after its first start. Setting up a new PGlite data directory in
 * the process itself leaves ~700 MB (its WebAssembly memory never shrinks); set up in a child, the
 * first start is the size of any later one, ~250–350 MB here (more under tsx than built).
 */
const FIRST_START_MAX_RSS_MB = 500;

/** Runs a command line as an operator pastes it into a shell. */
function shell(line: string): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('/bin/sh', ['-c', line], (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
}

async function v1(gatewayUrl: string, user: string) {
  const res = await fetch(`${gatewayUrl}/auth/v1.0`, {
    headers: { 'X-Auth-User': user, 'X-Auth-Key': PASSWORD, ...NO_KEEP_ALIVE },
  });
  return { status: res.status, storageUrl: res.headers.get('x-storage-url') };
}

async function api(base: string, auth: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: auth, ...NO_KEEP_ALIVE, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return {
    status: res.status,
    text,
    json: text ? JSON.parse(text.startsWith('<') ? 'null' : text) : null,
    headers: res.headers,
  };
}

describe('pnpm start (the all-in-one launcher) as a real process', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cairn-e2e-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  // One first start serves both the walk-through and the modes: a first start runs every
  // migration on PGlite, the slowest start there is.
  it("when started on embedded PGlite under umask 022 on a relative CAIRN_DATA_DIR, then the seed walk-through works, the banner names the directory absolute, all in it is its owner's only, and after a restart the data is there and what was left open to others is made so, saying so", async () => {
    const dir = join(dataDir, 'pglite');
    const env = { CAIRN_DATA_DIR: relative(REPO_ROOT, dir), CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'false' };
    // The processes inherit the umask under which PGlite used to leave everything readable by all.
    const umask = process.umask(0o022);
    try {
      const first = await launch(env);
      let id = '';
      try {
        expect(first.adminAuth).toBeDefined();
        expect(await rssMb(first.child.pid!)).toBeLessThan(FIRST_START_MAX_RSS_MB);
        expect(first.output()).toContain(`Cairn is running (embedded PGlite in ${dir}).`);
        const auth = first.adminAuth!;
        expect(first.output()).toContain(`curl -H 'Authorization: ${auth}' ${first.apiUrl}/api/v1/clusters/`);
        // The banner gives the console's address (the management API's own), and the API serves it there.
        expect(first.output()).toContain(`\n  console         ${first.apiUrl}/console/\n`);
        expect((await fetch(`${first.apiUrl}/console/`, { headers: NO_KEEP_ALIVE })).status).not.toBe(404);

        const clusters = await api(first.apiUrl, auth, 'GET', '/api/v1/clusters/');
        expect(clusters.status).toBe(200);
        expect(clusters.json.objects[0].name).toBe('default');

        const created = await api(first.apiUrl, auth, 'POST', '/api/v1/users/', {
          cluster: '/api/v1/clusters/1/',
          user: 'alice',
          password: PASSWORD,
        });
        expect(created.status).toBe(201);
        expect(created.json.password).toBe(PASSWORD);
        id = created.json.id as string;
        expect(statSync(dir).mode & 0o777).toBe(0o700);

        // S3 out of the box: the API seals the secret with the embedded key, the gateway opens it.
        const s3 = await api(first.apiUrl, auth, 'POST', '/api/v1/s3_credentials/', { user: `/api/v1/users/${id}/` });
        expect(s3.status).toBe(201);
        const stringToSign = `GET\n\n\n${new Date().toUTCString()}\n/bucket`;
        const signed = (secret: string) => ({
          credentials: {
            access: s3.json.access_key,
            token: Buffer.from(stringToSign).toString('base64url'),
            signature: createHmac('sha1', secret).update(stringToSign).digest('base64'),
          },
        });
        const s3tokens = (secret: string) =>
          fetch(`${first.gatewayUrl}/auth/v3/s3tokens`, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', ...NO_KEEP_ALIVE },
            body: JSON.stringify(signed(secret)),
          });
        expect((await s3tokens(s3.json.secret)).status).toBe(200);
        expect((await s3tokens(`${s3.json.secret}x`)).status).toBe(401);

        const shown = await api(first.apiUrl, auth, 'GET', `/api/v1/users/${id}/`);
        expect(shown.status).toBe(200);
        expect(shown.json).not.toHaveProperty('password');

        expect((await api(first.apiUrl, auth, 'PATCH', `/api/v1/users/${id}/`, { enabled: false })).status).toBe(202);
        const xml = await api(first.apiUrl, auth, 'GET', '/api/v1/users/?format=xml');
        expect(xml.text.startsWith("<?xml version='1.0' encoding='utf-8'?>\n<response><meta type=\"hash\">")).toBe(
          true,
        );
      } finally {
        expect(await first.stop()).toBe(0);
      }
      expect(notOwnerOnly(dir)).toEqual([]);
      expect(statSync(join(dirname(dir), 's3-secret-keys')).mode & 0o777).toBe(0o600);

      chmodTree(dir, 0o755, 0o644);
      const loose = notOwnerOnly(dir);
      const second = await launch(env);
      try {
        const said = second
          .output()
          .match(
            /the embedded data directory was open to other users: (\d+) directories made 0700 and (\d+) files made 0600/g,
          );
        expect(said).toHaveLength(1);
        expect(said![0]).toContain(
          `${loose.filter((l) => l.startsWith('755 ')).length} directories made 0700 and ${loose.filter((l) => l.startsWith('644 ')).length} files made 0600`,
        );
        expect(second.adminAuth).toBeUndefined();
        const auth = first.adminAuth!;
        const again = await api(second.apiUrl, auth, 'GET', `/api/v1/users/${id}/`);
        expect(again.status).toBe(200);
        expect(again.json).toMatchObject({ user: 'alice', enabled: false });
        const deleted = await api(second.apiUrl, auth, 'DELETE', `/api/v1/users/${id}`);
        expect(deleted.status).toBe(204);
      } finally {
        expect(await second.stop()).toBe(0);
      }
      expect(notOwnerOnly(dir)).toEqual([]);
    } finally {
      process.umask(umask);
    }
  });

  it('when DATABASE_URL and CAIRN_ADMIN_USER/KEY are set, then the same command uses Postgres with that admin', async () => {
    const name = `cairn_e2e_${randomBytes(4).toString('hex')}`;
    const admin = new Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    const key = randomBytes(24).toString('base64url');
    try {
      const running = await launch({
        DATABASE_URL: url.toString(),
        CAIRN_ADMIN_USER: 'automation',
        CAIRN_ADMIN_KEY: key,
      });
      try {
        expect(running.output()).not.toContain(key);
        expect(running.output()).toContain('Cairn is running (Postgres)');
        const res = await api(running.apiUrl, `ApiKey automation:${key}`, 'GET', '/api/v1/clusters/');
        expect(res.status).toBe(200);
      } finally {
        expect(await running.stop()).toBe(0);
      }

      const made = await cairn(
        ['operator', 'create', '--name', 'reader-bot', '--role', 'reader', '--cluster', 'default'],
        { DATABASE_URL: url.toString() },
      );
      expect(made.code).toBe(0);
      const reader = /Authorization: (ApiKey reader-bot:\S+)/.exec(made.out)![1]!;
      const again = await launch({ DATABASE_URL: url.toString() });
      try {
        expect((await api(again.apiUrl, reader, 'GET', '/api/v1/users/')).status).toBe(200);
        expect(
          (await api(again.apiUrl, reader, 'POST', '/api/v1/users/', { cluster: 1, user: 'x', password: PASSWORD }))
            .status,
        ).toBe(403);
      } finally {
        await again.stop();
      }

      const bad = await cairn(['operator', 'create', '--name', 'bad name', '--role', 'admin'], {
        DATABASE_URL: url.toString(),
      });
      expect(bad.code).toBe(5); // refused input
      expect(bad.out).toContain("'name' field must be 1 to 64 characters");
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it("when CAIRN_GATEWAY_PORT is set at the first start, then the default cluster, the gateway's discovery and its catalog name that port", async () => {
    const port = await freePort();
    const running = await launch({
      CAIRN_DATA_DIR: await migratedDataDir(join(dataDir, 'port')),
      CAIRN_GATEWAY_PORT: String(port),
    });
    try {
      const authUrl = `http://127.0.0.1:${port}/auth`;
      expect(running.gatewayUrl).toBe(`http://127.0.0.1:${port}`);
      // The console shows the cluster's auth_url in its connection lines.
      const cluster = await api(running.apiUrl, running.adminAuth!, 'GET', '/api/v1/clusters/1/');
      expect(cluster.json.auth_url).toBe(authUrl);
      const discovery = await api(running.gatewayUrl, '', 'GET', '/auth/v3/');
      expect(discovery.text).toContain(`${authUrl}/v3/`);
      expect(discovery.text).not.toContain(':5000');
      // A login's catalog hands the identity service out at that address too.
      expect(
        (
          await api(running.apiUrl, running.adminAuth!, 'POST', '/api/v1/users/', {
            cluster: 1,
            user: 'porter',
            password: PASSWORD,
          })
        ).status,
      ).toBe(201);
      const login = await api(running.gatewayUrl, '', 'POST', '/auth/v3/auth/tokens', {
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: 'porter', domain: { id: 'default' }, password: PASSWORD } },
          },
        },
      });
      expect(login.status).toBe(201);
      const identity = (login.json.token.catalog as { type: string; endpoints: { url: string }[] }[]).find(
        (e) => e.type === 'identity',
      );
      expect(identity?.endpoints.map((e) => e.url)).toContain(`${authUrl}/v3`);
    } finally {
      expect(await running.stop()).toBe(0);
    }
  });

  it('when CAIRN_DEFAULT_CLUSTER renames the default cluster, then the gateway serves the cluster created under that name', async () => {
    const running = await launch({
      CAIRN_DATA_DIR: await migratedDataDir(join(dataDir, 'east')),
      CAIRN_DEFAULT_CLUSTER: 'east',
      CAIRN_DEFAULT_STORAGE_URL: 'http://east.example:8080/v1',
    });
    try {
      const auth = running.adminAuth!;
      const clusters = await api(running.apiUrl, auth, 'GET', '/api/v1/clusters/');
      expect(clusters.json.objects.map((c: { name: string }) => c.name)).toEqual(['east']);
      expect(
        (await api(running.apiUrl, auth, 'POST', '/api/v1/users/', { cluster: 1, user: 'erin', password: PASSWORD }))
          .status,
      ).toBe(201);
      expect(await v1(running.gatewayUrl, 'erin')).toEqual({
        status: 200,
        storageUrl: 'http://east.example:8080/v1/AUTH_erin',
      });
    } finally {
      expect(await running.stop()).toBe(0);
    }
  });

  it('when there is no cluster, then the management API runs, one line says how to create one, and the gateway serves it once it exists', async () => {
    const env = {
      CAIRN_DATA_DIR: await migratedDataDir(join(dataDir, 'none')),
      CAIRN_CREATE_DEFAULT_CLUSTER: 'false',
    };
    const running = await launch(env, 60_000, API_LINE);
    try {
      expect(running.gatewayUrl).toBe('');
      expect(running.output()).toContain('auth gateway    not started: waiting for a cluster (below)');
      const told = await running.waitFor(
        /^No cluster exists yet; the auth gateway starts once one does\. Create it: (curl .*)$/m,
      );
      expect(told![1]).toContain(`-H 'Authorization: ${running.adminAuth!}'`);
      // The line works as given.
      const made = JSON.parse(await shell(told![1]!)) as { name: string; id: number };
      expect(made).toMatchObject({ name: 'default', id: 1 });
      const [, gatewayUrl] = await running.waitFor(
        /auth gateway\s+(http:\/\/\S+)\/auth\/ now serves cluster 'default'\./,
        10_000,
      );
      expect(
        (
          await api(running.apiUrl, running.adminAuth!, 'POST', '/api/v1/users/', {
            cluster: 1,
            user: 'nina',
            password: PASSWORD,
          })
        ).status,
      ).toBe(201);
      expect(await v1(gatewayUrl!, 'nina')).toEqual({ status: 200, storageUrl: 'http://127.0.0.1:8080/v1/AUTH_nina' });
    } finally {
      expect(await running.stop()).toBe(0);
    }

    // Later starts: CAIRN_DEFAULT_CLUSTER names no cluster, so the only one is served ...
    const again = await launch({ ...env, CAIRN_DEFAULT_CLUSTER: 'east' });
    try {
      expect((await v1(again.gatewayUrl, 'nina')).status).toBe(200);
    } finally {
      expect(await again.stop()).toBe(0);
    }
    // ... but one explicitly asked for and missing is waited for, with the choices named.
    const west = await launch({ ...env, CAIRN_GATEWAY_CLUSTER: 'west' }, 60_000, API_LINE);
    try {
      await west.waitFor(/^The auth gateway waits: .*$/m);
      expect(west.output()).toContain(
        "The auth gateway waits: no cluster matches CAIRN_GATEWAY_CLUSTER='west', and there are 1 ('default'). Set CAIRN_GATEWAY_CLUSTER to one of them and restart, or create 'west'.",
      );
    } finally {
      expect(await west.stop()).toBe(0);
    }
  });

  it('when a default cluster setting is invalid, then nothing starts and the setting is named', async () => {
    const dir = join(dataDir, 'never');
    const res = await cairn(['start'], {
      CAIRN_DATA_DIR: dir,
      CAIRN_DEFAULT_CLUSTER: 'east/west',
      CAIRN_DEFAULT_STORAGE_URL: 'swift.example/v1',
      CAIRN_GATEWAY_CLUSTER: 'a/b',
    });
    expect(res.code).toBe(1);
    expect(res.out).toContain('CAIRN_DEFAULT_CLUSTER="east/west"');
    expect(res.out).toContain(
      'CAIRN_DEFAULT_STORAGE_URL="swift.example/v1": The "CAIRN_DEFAULT_STORAGE_URL" field must be an http:// or https:// URL of a host',
    );
    expect(res.out).not.toContain('Cairn is running');
    expect(existsSync(dir)).toBe(false);
  });

  it('when the configuration is invalid, then it refuses to start and names every problem', async () => {
    const res = await cairn(['start'], { CAIRN_API_PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(res.code).toBe(1);
    expect(res.out).toContain('CAIRN_API_PORT="eighty"');
    expect(res.out).toContain('LOG_LEVEL="loud"');
  });
});
