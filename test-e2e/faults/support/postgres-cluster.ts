import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import knex, { type Knex } from 'knex';
import { FAULTS_CLUSTER, workerPort } from './ports';

const run = promisify(execFile);

/**
 * A Postgres cluster of our own (Debian's postgresql-common), so the fault tests can restart and
 * stop it without touching the machine's shared cluster on 5432 that other tests use. Created on
 * first use, loopback only, trust authentication like the development machines.
 */
export const FAULTS_PG_PORT = workerPort(process.env.CAIRN_FAULTS_PG_PORT, 5433);
const CLUSTER = FAULTS_CLUSTER;

function version(): string {
  const versions = existsSync('/etc/postgresql') ? readdirSync('/etc/postgresql').filter((v) => /^\d+$/.test(v)) : [];
  if (versions.length === 0)
    throw new Error('No Debian Postgres installation (/etc/postgresql): install postgresql (see .ci/run).');
  return versions.sort((a, b) => Number(a) - Number(b)).at(-1)!;
}

async function ctl(action: 'start' | 'stop' | 'restart'): Promise<void> {
  // --skip-systemctl-redirect: act on the cluster directly, also where systemd is not PID 1.
  // Stops use pg_ctlcluster's default "fast" mode: sessions are ended, transactions rolled back.
  await run('pg_ctlcluster', ['--skip-systemctl-redirect', version(), CLUSTER, action]);
}

export const adminUrl = (database = 'postgres'): string =>
  `postgres://postgres@127.0.0.1:${FAULTS_PG_PORT}/${database}`;

/** True when a new connection gets an answer to a query. */
export async function postgresReady(): Promise<boolean> {
  const db = knex({
    client: 'pg',
    connection: { connectionString: adminUrl(), connectionTimeoutMillis: 1000 },
    pool: { min: 0, max: 1 },
  });
  try {
    await db.raw('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await db.destroy();
  }
}

async function waitReady(timeoutMs = 30_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await postgresReady())) {
    if (Date.now() > until)
      throw new Error(`Postgres cluster ${CLUSTER} on port ${FAULTS_PG_PORT} did not become ready`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Creates the cluster when missing and starts it when down. */
export async function ensurePostgres(): Promise<void> {
  const v = version();
  if (!existsSync(`/etc/postgresql/${v}/${CLUSTER}`)) {
    await run('pg_createcluster', [v, CLUSTER, '-p', String(FAULTS_PG_PORT), '--', '--auth=trust']);
  }
  if (!(await postgresReady())) await ctl('start');
  await waitReady();
  await dropLeftovers();
}

/** Databases of earlier runs whose process is gone (killed before it could drop them). */
async function dropLeftovers(): Promise<void> {
  const admin = knex({ client: 'pg', connection: adminUrl(), pool: { min: 0, max: 1 } });
  try {
    const { rows } = (await admin.raw(`SELECT datname FROM pg_database WHERE datname LIKE 'cairn\\_faults\\_%'`)) as {
      rows: Array<{ datname: string }>;
    };
    for (const { datname } of rows) {
      const pid = Number(/^cairn_faults_(\d+)_/.exec(datname)?.[1]);
      if (pid && pid !== process.pid && !existsSync(`/proc/${pid}`))
        await admin.raw(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
  } finally {
    await admin.destroy();
  }
}

/**
 * The fault scenarios. Each resolves with the moment the database answers again, measured by a
 * fresh connection, from which the services' recovery is timed.
 */
export async function restartPostgres(): Promise<number> {
  await ctl('restart');
  await waitReady();
  return Date.now();
}

export async function stopPostgres(): Promise<void> {
  await ctl('stop');
}

export async function startPostgres(): Promise<number> {
  await ctl('start');
  await waitReady();
  return Date.now();
}

/** A fresh database in the cluster, for one test file; dropped by the returned function. */
export async function createDatabase(): Promise<{ url: string; db: Knex; drop: () => Promise<void> }> {
  const name = `cairn_faults_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = knex({ client: 'pg', connection: adminUrl(), pool: { min: 0, max: 1 } });
  await admin.raw(`CREATE DATABASE ${name}`);
  await admin.destroy();
  const url = adminUrl(name);
  const db = knex({ client: 'pg', connection: url, pool: { min: 0, max: 2 } });
  return {
    url,
    db,
    drop: async () => {
      await db.destroy();
      const a = knex({ client: 'pg', connection: adminUrl(), pool: { min: 0, max: 1 } });
      await a.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => a.destroy());
    },
  };
}
