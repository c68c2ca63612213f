import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Knex } from 'knex';
import request from 'supertest';
import { createApp } from '../../src/app';
import { bootstrap } from '../../src/bootstrap';
import { createDatabase, migrateLatest } from '../../src/db/database';
import { createLogger } from '../../src/deps';
import { hashPassword } from '@cairn/domain';
import { ADMIN, ADMIN_AUTH, POSTGRES_ADMIN_URL, createTestDatabase, type TestDatabase } from '../support/harness';

/**
 * Deployments often put PgBouncer in transaction mode between the API and Postgres: consecutive
 * statements of one client may run on different server connections, so session state (named
 * prepared statements among it) does not survive between them. Every list must work there.
 * Debian's package `pgbouncer` installs the binary (.ci/run installs it); this test runs its own
 * instance on a free loopback port in front of the test's Postgres.
 */
const PGBOUNCER = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, child: ChildProcess, log: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null) throw new Error(`pgbouncer exited ${child.exitCode}: ${readFileSync(log, 'utf8')}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' }, () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('pgbouncer did not listen');
}

interface Bouncer {
  url: (database: string) => string;
  stop: () => Promise<void>;
}

/** Two server connections for up to 100 clients, in transaction mode. */
async function startPgBouncer(): Promise<Bouncer> {
  const dir = mkdtempSync(join(tmpdir(), 'cairn-pgbouncer-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const upstream = new URL(POSTGRES_ADMIN_URL);
  writeFileSync(join(dir, 'users.txt'), `"${upstream.username || 'postgres'}" ""\n`);
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    `[databases]
* = host=${upstream.hostname} port=${upstream.port || 5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/users.txt
pool_mode = transaction
default_pool_size = 2
max_client_conn = 100
ignore_startup_parameters = extra_float_digits
logfile = ${dir}/pgbouncer.log
`,
  );
  // PgBouncer refuses to run as root; -u drops to an unprivileged user when started as root.
  const asRoot = process.getuid?.() === 0;
  const child = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
    stdio: 'ignore',
  });
  await waitForPort(port, child, join(dir, 'pgbouncer.log'));
  return {
    url: (database) => `postgres://${upstream.username || 'postgres'}@127.0.0.1:${port}/${database}`,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('management API behind PgBouncer in transaction mode', () => {
  let direct: TestDatabase;
  let bouncer: Bouncer;
  let viaBouncer: Knex;
  let server: Server;
  let clusters: number[];
  const statements: string[] = [];

  beforeAll(async () => {
    direct = await createTestDatabase('postgres');
    await migrateLatest(direct.db);
    await bootstrap(direct.db, {
      adminUser: ADMIN.name,
      adminKey: ADMIN.key,
      defaultCluster: 'default',
      defaultAuthUrl: 'http://127.0.0.1:5000/auth',
      defaultStorageUrl: 'http://127.0.0.1:8080/v1',
    });
    const rows = (await direct
      .db('clusters')
      .insert(
        ['north', 'south'].map((name, i) => ({
          name,
          uuid: `00000000-0000-4000-8000-00000000000${i}`,
          auth_url: `http://${name}/auth`,
          storage_url: `http://${name}/v1`,
        })),
      )
      .returning('id')) as Array<{ id: number }>;
    clusters = [1, ...rows.map((r) => r.id)];
    await direct.db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash, enabled)
       SELECT (?::int[])[1 + g % 3], 'user' || g, 'x', g % 4 <> 0 FROM generate_series(1, 12000) AS g`,
      [clusters],
    );
    bouncer = await startPgBouncer();
    viaBouncer = createDatabase({
      url: bouncer.url(new URL(direct.url!).pathname.slice(1)),
      poolMax: 10,
      // PgBouncer 1.18 (Debian 12) carries no prepared statement across server connections.
      preparedStatements: false,
    });
    viaBouncer.on('query', (q: { sql: string }) => statements.push(q.sql));
    const app = createApp({
      db: viaBouncer,
      log: createLogger('silent'),
      hashPassword: (p) => hashPassword(p),
      apiKeyCacheMs: 5000,
    });
    server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await viaBouncer?.destroy();
    await bouncer?.stop();
    await direct?.drop();
  });

  it('when many clients share two server connections, then they really are multiplexed (the setting under test is in force)', async () => {
    const pids = await Promise.all(
      Array.from({ length: 30 }, () => viaBouncer.raw('SELECT pg_backend_pid() AS pid, pg_sleep(0.01)')),
    );
    const distinct = new Set(pids.map((r) => (r as { rows: Array<{ pid: number }> }).rows[0]!.pid));
    expect(distinct.size).toBeLessThanOrEqual(2);
  });

  it('when lists of every kind are read concurrently through it, then each answers 200 with the same page as alone, and the totals and rows of a direct connection', async () => {
    const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const queries = [
      '',
      `cluster=${clusters[1]}`,
      'cluster__name=south',
      'cluster__uuid=00000000-0000-4000-8000-000000000000',
      `cluster__in=${clusters[0]},${clusters[2]}`,
      `cluster__id=${clusters[2]}`,
      'user=user77',
      'user__startswith=user11',
      'order_by=-id&offset=7000',
      `cluster=${clusters[0]}&offset=3500&limit=7`,
      'order_by=user&offset=6000',
      'enabled=false&order_by=-user',
    ];
    statements.length = 0;
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        queries.map((q) => request(base).get(`/api/v1/users/?${q}`).set('Authorization', ADMIN_AUTH)),
      ).flat(),
    );
    const alone = await Promise.all(
      queries.map((q) => request(base).get(`/api/v1/users/?${q}`).set('Authorization', ADMIN_AUTH)),
    );
    for (const [i, res] of answers.entries()) {
      expect({ q: queries[i % queries.length], status: res.status }).toEqual({
        q: queries[i % queries.length],
        status: 200,
      });
      expect(res.body).toEqual(alone[i % queries.length]!.body);
    }
    // Every statement went through knex (its query events saw them).
    expect(statements.some((s) => s.includes('storage_user_id_buckets'))).toBe(true);
    expect(statements.some((s) => s.includes('from "clusters" as "c"'))).toBe(true);
    const truth = async (sql: string, bindings: unknown[] = []) =>
      Number(((await direct.db.raw(sql, bindings as never[])) as { rows: Array<{ n: string }> }).rows[0]!.n);
    expect(alone[0]!.body.meta.total_count).toBe(12000);
    expect(alone[2]!.body.meta.total_count).toBe(
      await truth('SELECT count(*) AS n FROM storage_users u JOIN clusters c ON c.id = u.cluster_id WHERE c.name = ?', [
        'south',
      ]),
    );
    expect(alone[7]!.body.meta.total_count).toBe(
      await truth("SELECT count(*) AS n FROM storage_users WHERE username LIKE 'user11%'"),
    );
    expect(alone[8]!.body.objects[0].id).toBe(
      String(await truth('SELECT id AS n FROM storage_users ORDER BY id DESC OFFSET 7000 LIMIT 1')),
    );
  });
});
