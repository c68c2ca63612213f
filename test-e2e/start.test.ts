import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { cairn, launch } from './support/processes';

const PASSWORD = 'a-password-of-twenty-plus';
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function api(base: string, auth: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: auth, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, text, json: text ? JSON.parse(text.startsWith('<') ? 'null' : text) : null, headers: res.headers };
}

describe('pnpm start (the all-in-one launcher) as a real process', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'cairn-e2e-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('when started on embedded PGlite, then the seed walk-through works and data survives a restart', async () => {
    const env = { CAIRN_DATA_DIR: join(dataDir, 'pglite') };
    const first = await launch(env);
    try {
      expect(first.adminAuth).toBeDefined();
      const auth = first.adminAuth!;
      expect(first.output()).toContain(`curl -H 'Authorization: ${auth}' ${first.apiUrl}/api/v1/clusters/`);

      const clusters = await api(first.apiUrl, auth, 'GET', '/api/v1/clusters/');
      expect(clusters.status).toBe(200);
      expect(clusters.json.objects[0].name).toBe('default');

      const created = await api(first.apiUrl, auth, 'POST', '/api/v1/users/', { cluster: '/api/v1/clusters/1/', user: 'alice', password: PASSWORD });
      expect(created.status).toBe(201);
      expect(created.json.password).toBe(PASSWORD);
      const id = created.json.id as string;

      const shown = await api(first.apiUrl, auth, 'GET', `/api/v1/users/${id}/`);
      expect(shown.status).toBe(200);
      expect(shown.json).not.toHaveProperty('password');

      expect((await api(first.apiUrl, auth, 'PATCH', `/api/v1/users/${id}/`, { enabled: false })).status).toBe(202);
      const xml = await api(first.apiUrl, auth, 'GET', '/api/v1/users/?format=xml');
      expect(xml.text.startsWith("<?xml version='1.0' encoding='utf-8'?>\n<response><meta type=\"hash\">")).toBe(true);

      expect(await first.stop()).toBe(0);

      const second = await launch(env);
      try {
        expect(second.adminAuth).toBeUndefined();
        const again = await api(second.apiUrl, auth, 'GET', `/api/v1/users/${id}/`);
        expect(again.status).toBe(200);
        expect(again.json).toMatchObject({ user: 'alice', enabled: false });
        const deleted = await api(second.apiUrl, auth, 'DELETE', `/api/v1/users/${id}`);
        expect(deleted.status).toBe(204);
      } finally {
        await second.stop();
      }
    } finally {
      if (first.child.exitCode === null) await first.stop();
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
      const running = await launch({ DATABASE_URL: url.toString(), CAIRN_ADMIN_USER: 'automation', CAIRN_ADMIN_KEY: key });
      try {
        expect(running.output()).not.toContain(key);
        expect(running.output()).toContain('Cairn is running (Postgres)');
        const res = await api(running.apiUrl, `ApiKey automation:${key}`, 'GET', '/api/v1/clusters/');
        expect(res.status).toBe(200);
      } finally {
        expect(await running.stop()).toBe(0);
      }

      const made = await cairn(['operator', 'create', '--name', 'reader-bot', '--role', 'reader', '--cluster', 'default'], { DATABASE_URL: url.toString() });
      expect(made.code).toBe(0);
      const reader = /Authorization: (ApiKey reader-bot:\S+)/.exec(made.out)![1]!;
      const again = await launch({ DATABASE_URL: url.toString() });
      try {
        expect((await api(again.apiUrl, reader, 'GET', '/api/v1/users/')).status).toBe(200);
        expect((await api(again.apiUrl, reader, 'POST', '/api/v1/users/', { cluster: 1, user: 'x', password: PASSWORD })).status).toBe(403);
      } finally {
        await again.stop();
      }

      const bad = await cairn(['operator', 'create', '--name', 'bad name', '--role', 'admin'], { DATABASE_URL: url.toString() });
      expect(bad.code).toBe(1);
      expect(bad.out).toContain("'name' field must be 1 to 64 characters");
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('when the configuration is invalid, then it refuses to start and names every problem', async () => {
    const res = await cairn(['start'], { CAIRN_API_PORT: 'eighty', LOG_LEVEL: 'loud' });
    expect(res.code).toBe(1);
    expect(res.out).toContain('CAIRN_API_PORT="eighty"');
    expect(res.out).toContain('LOG_LEVEL="loud"');
  });
});
