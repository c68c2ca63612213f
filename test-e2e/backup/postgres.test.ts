import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { startService, type ServiceProcess } from '../support/processes';
import { expectRestored, populate, type Populated } from './support';
import { POSTGRES_ADMIN_URL as ADMIN_URL, REDIS_URL } from '../support/local-services';

/**
 * docs/backup.md's small set-up recipe, run as written: pg_dump of a live Cairn database, then
 * pg_restore into a new database, with both services started on the copy as a deployment starts
 * them. The copy must let users log in, verify S3 signatures and read back utilization history.
 */
const ADMIN_KEY = randomBytes(24).toString('base64url');
const AUTH = `ApiKey admin:${ADMIN_KEY}`;
const S3_KEYS = `k1:${randomBytes(32).toString('base64')}`;

const urlOf = (name: string) => {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
};

async function startBoth(databaseUrl: string): Promise<[ServiceProcess, ServiceProcess]> {
  const shared = { DATABASE_URL: databaseUrl, CAIRN_S3_SECRET_KEYS: S3_KEYS };
  const api = await startService('management-api', {
    ...shared,
    CAIRN_ADMIN_USER: 'admin',
    CAIRN_ADMIN_KEY: ADMIN_KEY,
  });
  const gateway = await startService('auth-gateway', {
    ...shared,
    REDIS_URL,
    CAIRN_GATEWAY_CLUSTER: 'default',
    CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'false',
  });
  return [api, gateway];
}

describe('Postgres: pg_dump, then pg_restore into a new database', () => {
  const suffix = `${process.pid}_${randomBytes(4).toString('hex')}`;
  const source = `cairn_backup_src_${suffix}`;
  const copy = `cairn_backup_copy_${suffix}`;
  let admin: Knex;
  let dir: string;

  beforeAll(async () => {
    admin = knex({ client: 'pg', connection: ADMIN_URL, pool: { min: 0, max: 1 } });
    await admin.raw(`CREATE DATABASE ${source}`);
    dir = mkdtempSync(join(tmpdir(), 'cairn-e2e-pgdump-'));
  });
  afterAll(async () => {
    for (const name of [source, copy]) await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('when a live database is dumped with pg_dump and restored into a new one, then users log in, S3 signatures verify and utilization reads back', async () => {
    const file = join(dir, 'cairn.dump');
    let populated: Populated;
    let running = await startBoth(urlOf(source));
    try {
      populated = await populate(running[0].url, AUTH);
      // On Postgres the API takes no backups itself: it says which tools do.
      const refused = await fetch(`${running[0].url}/api/v1/backup/`, {
        method: 'POST',
        headers: { Authorization: AUTH },
      });
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as { error: string }).error).toContain('back it up with pg_dump');

      // While both services run, as docs/backup.md says to.
      execFileSync('pg_dump', ['--format=custom', `--file=${file}`, `--dbname=${urlOf(source)}`]);
    } finally {
      await Promise.all(running.map((s) => s.stop()));
    }

    await admin.raw(`CREATE DATABASE ${copy}`);
    execFileSync('pg_restore', ['--exit-on-error', '--no-owner', '--no-acl', `--dbname=${urlOf(copy)}`, file]);

    running = await startBoth(urlOf(copy));
    try {
      await expectRestored(running[0].url, running[1].url, AUTH, populated);
    } finally {
      await Promise.all(running.map((s) => s.stop()));
    }
  });
});
