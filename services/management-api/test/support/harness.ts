import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import knex, { type Knex } from 'knex';
import request from 'supertest';
import { createApp } from '../../src/app';
import { bootstrap } from '../../src/bootstrap';
import { createDatabase } from '../../src/db/database';
import { createLogger, type Deps } from '../../src/deps';
import { createApiMetrics } from '../../src/http/metrics';
import { hashPassword } from '@cairn/domain';
import { createMigratedPostgres, emptyPglite, migratedPglite } from './migrated-template';
import { responseCheckerFor } from './openapi-responses';

/**
 * Integration tests run every scenario twice: against a real Postgres (a fresh database per test
 * file, dropped afterwards) and against embedded PGlite. Requests go over real HTTP to the app
 * listening on an ephemeral port.
 */
export type DbKind = 'postgres' | 'pglite';
export const DB_KINDS: DbKind[] = ['postgres', 'pglite'];

export const ADMIN = { name: 'root', key: 'test-admin-key-0123456789abcdefghijklmnop' };
export const ADMIN_AUTH = `ApiKey ${ADMIN.name}:${ADMIN.key}`;

/** Where to create throwaway databases; override with TEST_DATABASE_URL. */
export const POSTGRES_ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestDatabase {
  db: Knex;
  url?: string;
  drop: () => Promise<void>;
}

/** An empty database; `migrated`: holding the schema the migrations make (a copy of a template). */
export async function createTestDatabase(kind: DbKind, { migrated = false } = {}): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const db = migrated ? await migratedPglite() : await emptyPglite();
    return { db, drop: () => db.destroy() };
  }
  const name = `cairn_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = knex({ client: 'pg', connection: POSTGRES_ADMIN_URL, pool: { min: 0, max: 1 } });
  if (migrated) await createMigratedPostgres(POSTGRES_ADMIN_URL, name);
  else await admin.raw(`CREATE DATABASE ${name}`);
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  const db = createDatabase({ url: url.toString(), poolMax: 10 });
  return {
    db,
    url: url.toString(),
    drop: async () => {
      await db.destroy();
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    },
  };
}

export type TestDatabaseWithClusters = TestDatabase & { clusters: number[] };

/**
 * A fresh migrated database (see createTestDatabase) holding the clusters named, with made-up
 * URLs and UUIDs; their ids come back in the order of `names`.
 */
export async function createDatabaseWithClusters(
  kind: DbKind,
  names: readonly string[],
): Promise<TestDatabaseWithClusters> {
  const database = await createTestDatabase(kind, { migrated: true });
  const rows = (await database
    .db('clusters')
    .insert(
      names.map((name, i) => ({
        name,
        uuid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        auth_url: `http://${name}/auth`,
        storage_url: `http://${name}/v1`,
      })),
    )
    .returning('id')) as Array<{ id: number }>;
  return { ...database, clusters: rows.map((r) => r.id) };
}

export interface TestApp {
  kind: DbKind;
  db: Knex;
  deps: Deps;
  /** supertest agent bound to the running server; every answer is checked against the OpenAPI document. */
  http: () => request.Agent;
  baseUrl: string;
  close: () => Promise<void>;
}

/**
 * A `hashPassword` for startTestApp's `extra` with cheap scrypt parameters (ln=10, as the e2e and
 * interop stacks' CHEAP_HASH_PARAMS): a user made costs milliseconds instead of a second of CPU,
 * for files that make many users and do not test the hash itself (users.test.ts does).
 */
export const cheapHashPassword = (password: string): Promise<string> =>
  hashPassword(password, { logN: 10, r: 8, p: 1 });

/** `extra`: deps beyond the defaults (a logger that captures, an S3 keyring). */
export async function startTestApp(kind: DbKind, extra: Partial<Deps> = {}): Promise<TestApp> {
  const database = await createTestDatabase(kind, { migrated: true });
  await bootstrap(database.db, {
    adminUser: ADMIN.name,
    adminKey: ADMIN.key,
    defaultCluster: 'default',
    defaultAuthUrl: 'http://127.0.0.1:5000/auth',
    defaultStorageUrl: 'http://127.0.0.1:8080/v1',
  });
  // The app's metrics are the deps' (as createDeps makes them), so a test can feed and read them.
  const deps: Deps = {
    db: database.db,
    log: createLogger('silent'),
    hashPassword: (p) => hashPassword(p),
    apiKeyCacheMs: 5000,
    metrics: createApiMetrics(database.db),
    ...extra,
  };
  const app = createApp(deps);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const address = server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const openapi = await fetch(`${baseUrl}/api/v1/openapi.json`);
  if (openapi.status !== 200) throw new Error(`GET /api/v1/openapi.json: ${openapi.status}`);
  const checker = responseCheckerFor(await openapi.text());
  return {
    kind,
    db: database.db,
    deps,
    baseUrl,
    http: () => request.agent(baseUrl).use(checker.plugin()),
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await database.drop();
    },
  };
}

export const PASSWORD = 'correct-horse-battery-staple';

/** Creates a user through the API and returns its JSON. */
export async function createUser(
  app: TestApp,
  user: string,
  extra: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const res = await app
    .http()
    .post('/api/v1/users/')
    .set('Authorization', ADMIN_AUTH)
    .send({ cluster: '/api/v1/clusters/1/', user, password: PASSWORD, ...extra });
  if (res.status !== 201) throw new Error(`creating ${user}: ${res.status} ${res.text}`);
  return res.body as Record<string, unknown>;
}

export async function createCluster(app: TestApp, name: string): Promise<Record<string, unknown>> {
  const res = await app
    .http()
    .post('/api/v1/clusters/')
    .set('Authorization', ADMIN_AUTH)
    .send({ name, auth_url: `https://${name}.example.com/auth`, storage_url: `https://${name}.example.com/v1` });
  if (res.status !== 201) throw new Error(`creating cluster ${name}: ${res.status} ${res.text}`);
  return res.body as Record<string, unknown>;
}

/** Creates an operator and returns its Authorization header value. */
export async function createOperator(
  app: TestApp,
  name: string,
  role: 'admin' | 'reader',
  clusters: string[] = [],
): Promise<string> {
  const res = await app
    .http()
    .post('/api/v1/operators/')
    .set('Authorization', ADMIN_AUTH)
    .send({ name, role, clusters });
  if (res.status !== 201) throw new Error(`creating operator ${name}: ${res.status} ${res.text}`);
  return `ApiKey ${name}:${(res.body as { api_key: string }).api_key}`;
}

export async function countRows(db: Knex, table: string): Promise<number> {
  const [row] = await db(table).count({ count: '*' });
  return Number((row as { count: string | number }).count);
}
