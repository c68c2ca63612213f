import { randomBytes } from 'node:crypto';
import knex, { type Knex } from 'knex';
import request from 'supertest';
import * as api from '@cairn/management-api';
import { signedBody, v3Token } from '../s3/s3-client';
import { startService, type ServiceProcess } from '../support/processes';
import { POSTGRES_ADMIN_URL as ADMIN_URL, REDIS_URL } from '../support/local-services';

/**
 * This release's services on a database a newer release has migrated: what a rolling upgrade
 * asks of the release being replaced (docs/releasing.md, expand/contract). The next release's
 * `previous-release.test.ts` runs this file from this release's checkout with
 * CAIRN_SMOKE_DATABASE_URL naming a database its own code migrated; on its own it stands in for
 * that by recording a migration this release does not know, as a newer migrate job would.
 */
const GIVEN = process.env.CAIRN_SMOKE_DATABASE_URL;
const ADMIN_KEY = randomBytes(24).toString('base64url');
const AUTH = `ApiKey smoke-admin:${ADMIN_KEY}`;
const S3_KEYS = `k1:${randomBytes(32).toString('base64')}`;

describe('smoke: the services on a database migrated by a newer release', () => {
  let admin: Knex | undefined;
  let dbName: string | undefined;
  let databaseUrl: string;
  const running: ServiceProcess[] = [];

  beforeAll(async () => {
    if (GIVEN) {
      databaseUrl = GIVEN;
      return;
    }
    admin = knex({ client: 'pg', connection: ADMIN_URL, pool: { min: 0, max: 1 } });
    dbName = `cairn_smoke_${process.pid}_${randomBytes(4).toString('hex')}`;
    await admin.raw(`CREATE DATABASE ${dbName}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
    const db = api.createDatabase({ url: databaseUrl, poolMax: 1 });
    try {
      await api.migrateLatest(db);
      const { max } = (await db('knex_migrations').max('batch as max').first()) as { max: number };
      await db('knex_migrations').insert({
        name: '29991231000000_from_a_newer_release',
        batch: max + 1,
        migration_time: new Date(),
      });
    } finally {
      await db.destroy();
    }
  });
  afterAll(async () => {
    await Promise.all(running.map((s) => s.stop()));
    if (admin && dbName) await admin.raw(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin?.destroy();
  });

  it('when both services start on it (migrating at start), then a user is created, logs in with V1 and V3, its token validates and its S3 signature verifies', async () => {
    const shared = { DATABASE_URL: databaseUrl, CAIRN_S3_SECRET_KEYS: S3_KEYS };
    // CAIRN_MIGRATE_ON_START stays on: a replica of the older release restarting mid-upgrade runs it.
    const apiProc = await startService('management-api', {
      ...shared,
      CAIRN_ADMIN_USER: 'smoke-admin',
      CAIRN_ADMIN_KEY: ADMIN_KEY,
    });
    running.push(apiProc);
    const gateway = await startService('auth-gateway', {
      ...shared,
      REDIS_URL,
      CAIRN_GATEWAY_CLUSTER: 'default',
      CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'false',
    });
    running.push(gateway);

    const user = `smoke${randomBytes(3).toString('hex')}`;
    const password = `${randomBytes(18).toString('base64url')}-pw`;
    const made = await request(apiProc.url)
      .post('/api/v1/users/')
      .set('Authorization', AUTH)
      .send({ cluster: '/api/v1/clusters/1/', user, password });
    expect(made.status).toBe(201);
    const listed = await request(apiProc.url).get(`/api/v1/users/?user=${user}`).set('Authorization', AUTH);
    expect(listed.body.objects.map((u: { user: string }) => u.user)).toEqual([user]);

    const v1 = await request(gateway.url).get('/auth/v1.0').set('X-Auth-User', user).set('X-Auth-Key', password);
    expect(v1.status).toBe(200);
    const token = await v3Token(gateway.url, user, password);
    const validated = await request(gateway.url)
      .get('/auth/v3/auth/tokens')
      .set('X-Auth-Token', token)
      .set('X-Subject-Token', token);
    expect(validated.status).toBe(200);

    const cred = await request(apiProc.url)
      .post('/api/v1/s3_credentials/')
      .set('Authorization', AUTH)
      .send({ user: made.body.resource_uri });
    expect(cred.status).toBe(201);
    const s3 = await request(gateway.url)
      .post('/auth/v3/s3tokens')
      .send(signedBody(cred.body.access_key, cred.body.secret, 'v4'));
    expect(s3.status).toBe(200);
  });
});
