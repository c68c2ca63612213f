import { createHmac, randomBytes } from 'node:crypto';
import knex, { type Knex } from 'knex';
import request from 'supertest';
import * as api from '@cairn/management-api';
import * as gateway from '@cairn/auth-gateway';
import { POSTGRES_ADMIN_URL, startStack, type Stack } from '../support/stack';

/**
 * The gateway connected to Postgres as its role (the one `cairn migrate --gateway-role` creates,
 * SQL in docs/deployment.md): it serves logins, validations, s3tokens and the OS-EC2 API with
 * SELECT on the tables it reads and the OS-EC2 writes (s3_credentials, audit records), and the
 * role can change nothing else.
 */
const PW = 'role-password-0123456789';
const SERVICE_PW = 'service-password-0123456789';

describe('auth-gateway as the gateway role', () => {
  let stack: Stack;
  let admin: Knex;
  let asRole: Knex;
  let roleUrl: string;
  let running: gateway.RunningGateway | undefined;
  let roleDeps: gateway.Deps;
  const role = `cairn_gw_scale_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    stack = await startStack({ database: 'postgres' });
    admin = knex({ client: 'pg', connection: POSTGRES_ADMIN_URL, pool: { min: 0, max: 1 } });
    // A hardened database: PUBLIC may neither connect nor use the schema, so the role's own grants
    // are all it has (Postgres' defaults would hide a missing CONNECT or USAGE).
    const dbName = new URL(stack.databaseUrl!).pathname.slice(1);
    await stack.db.raw('REVOKE CONNECT, TEMPORARY ON DATABASE ?? FROM PUBLIC', [dbName]);
    await stack.db.raw('REVOKE ALL ON SCHEMA public FROM PUBLIC');
    expect(await api.ensureGatewayRole(stack.db, { name: role, password: randomBytes(16).toString('hex') })).toBe(
      'created',
    );
    // ensureGatewayRole's own grants (CONNECT, USAGE, SELECT) are all the role has.

    const url = new URL(stack.databaseUrl!);
    url.username = role;
    url.password = '';
    roleUrl = url.toString();
    asRole = knex({ client: 'pg', connection: roleUrl, pool: { min: 0, max: 1 } });

    await stack.createUser('alice', PW);
    await stack.createUser('swift-service', SERVICE_PW, { is_superuser: true });
    await stack.createUser('bob', PW);
    // A second gateway that owns its database connection, as a deployed one does: DATABASE_URL = the role.
    const config = gateway.readConfig({
      CAIRN_GATEWAY_HOST: '127.0.0.1',
      CAIRN_GATEWAY_PORT: '0',
      DATABASE_URL: roleUrl,
      LOG_LEVEL: 'silent',
      CAIRN_S3_SECRET_KEYS: `k:${randomBytes(32).toString('base64')}`,
      CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN: 'false',
    });
    roleDeps = await gateway.createDeps(config);
    running = await gateway.startAuthGateway(config, roleDeps);
  });
  afterAll(async () => {
    await running?.close(0);
    await asRole?.destroy();
    await stack?.close();
    await admin?.raw('DROP ROLE IF EXISTS ??', [role]);
    await admin?.destroy();
  });

  const gw = () => request(`http://127.0.0.1:${running!.port}`);
  const login = async (user: string, password: string) => {
    const res = await gw().get('/auth/v1.0').set('X-Auth-User', user).set('X-Auth-Key', password);
    expect(res.status).toBe(200);
    return res.headers['x-auth-token'] as string;
  };

  it('when the gateway connects as the role, then it issues and validates tokens and notices a disabled user', async () => {
    expect(await asRole.raw('SELECT current_user AS u').then((r) => r.rows[0].u)).toBe(role);
    const service = await login('swift-service', SERVICE_PW);
    const token = await login('alice', PW);
    const validate = () => gw().get('/auth/v3/auth/tokens').set('X-Auth-Token', service).set('X-Subject-Token', token);
    expect((await validate()).status).toBe(200);
    const v3 = await gw()
      .post('/auth/v3/auth/tokens')
      .send({ auth: { identity: { methods: ['password'], password: { user: { name: 'alice', password: PW } } } } });
    expect(v3.status).toBe(201);

    const alice = await stack.db('storage_users').where({ username: 'alice' }).first();
    expect(await stack.patchUser(String(alice.id), { enabled: false })).toBe(202);
    const deadline = Date.now() + 2000;
    while ((await validate()).status !== 404) {
      if (Date.now() > deadline) throw new Error('the disabled user was not noticed within 2 s');
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  it('when a user creates, uses and deletes an S3 credential through the gateway as the role, then each step works and the audit trail has both writes', async () => {
    const v3 = await gw()
      .post('/auth/v3/auth/tokens')
      .send({ auth: { identity: { methods: ['password'], password: { user: { name: 'bob', password: PW } } } } });
    expect(v3.status).toBe(201);
    const token = v3.headers['x-subject-token'] as string;
    const created = await gw().post('/auth/v3/users/bob/credentials/OS-EC2').set('X-Auth-Token', token).send({});
    expect(created.status).toBe(201);
    const { access, secret } = created.body.credential as { access: string; secret: string };
    const sts = `GET\n\n\n${new Date().toUTCString()}\n/bucket`;
    const signature = createHmac('sha1', secret).update(sts).digest('base64');
    const s3 = await gw()
      .post('/auth/v3/s3tokens')
      .send({ credentials: { access, token: Buffer.from(sts).toString('base64url'), signature } });
    expect(s3.status).toBe(200);
    expect(
      (await gw().get('/auth/v3/users/bob/credentials/OS-EC2').set('X-Auth-Token', token)).body.credentials,
    ).toHaveLength(1);
    expect(
      (await gw().delete(`/auth/v3/users/bob/credentials/OS-EC2/${access}`).set('X-Auth-Token', token)).status,
    ).toBe(204);
    const audit = (await stack.db('audit_log').where({ target_name: access }).orderBy('id')) as Array<{
      action: string;
      operator_name: string;
    }>;
    expect(audit.map((a) => [a.action, a.operator_name])).toEqual([
      ['create', 'storage user bob'],
      ['delete', 'storage user bob'],
    ]);
  });

  it('when a user deletes an application credential with a bound EC2 key through the gateway as the role, then both are gone, each with its audit record', async () => {
    await stack.createUser('carl', PW);
    const v3 = await gw()
      .post('/auth/v3/auth/tokens')
      .send({ auth: { identity: { methods: ['password'], password: { user: { name: 'carl', password: PW } } } } });
    const token = v3.headers['x-subject-token'] as string;
    const made = await gw()
      .post('/auth/v3/users/carl/application_credentials')
      .set('X-Auth-Token', token)
      .send({ application_credential: { name: 's3', unrestricted: true } });
    expect(made.status).toBe(201);
    const c = made.body.application_credential as { id: string; secret: string };
    const appToken = (
      await gw()
        .post('/auth/v3/auth/tokens')
        .send({
          auth: {
            identity: { methods: ['application_credential'], application_credential: { id: c.id, secret: c.secret } },
          },
        })
    ).headers['x-subject-token'] as string;
    const created = await gw().post('/auth/v3/users/carl/credentials/OS-EC2').set('X-Auth-Token', appToken).send({});
    expect(created.status).toBe(201);
    const access = (created.body.credential as { access: string }).access;
    expect(
      (await gw().delete(`/auth/v3/users/carl/application_credentials/${c.id}`).set('X-Auth-Token', token)).status,
    ).toBe(204);
    expect(await stack.db('s3_credentials').where({ access_key: access })).toHaveLength(0);
    const audit = (await stack.db('audit_log').whereIn('target_name', [access, 's3']).orderBy('id')) as Array<{
      action: string;
      target_type: string;
    }>;
    expect(audit.map((a) => [a.action, a.target_type])).toEqual([
      ['create', 'application_credentials'],
      ['create', 's3_credentials'],
      ['delete', 's3_credentials'],
      ['delete', 'application_credentials'],
    ]);
  });

  it('when the role tries to write or to read operators and API keys, then Postgres refuses', async () => {
    expect((await asRole.raw('SELECT count(*) AS n FROM storage_users')).rows[0].n).not.toBe('0');
    const refusals = [
      "INSERT INTO clusters (name, uuid, auth_url, storage_url) VALUES ('x', gen_random_uuid(), 'http://a/auth', 'http://a/v1')",
      "UPDATE storage_users SET enabled = true WHERE username = 'alice'",
      // Its one change of a user goes through the compare-and-set function, never a direct UPDATE.
      "UPDATE storage_users SET password_hash = '$scrypt$' WHERE username = 'alice'",
      "UPDATE clusters SET storage_url = 'http://evil/v1'",
      'DELETE FROM storage_users',
      'SELECT * FROM api_keys',
      'SELECT * FROM operators',
      'CREATE TABLE gateway_owned (id int)',
      // The audit trail: written one record at a time, never read, changed or emptied.
      'SELECT * FROM audit_log',
      'UPDATE audit_log SET operator_name = operator_name',
      'DELETE FROM audit_log',
      // S3 credentials: created and deleted, never changed (a secret swapped under an access key).
      "UPDATE s3_credentials SET secret_sealed = 'x'",
      // Application credentials: created and deleted, never changed (a hash or a role swapped).
      "UPDATE application_credentials SET secret_hash = 'x'",
    ];
    for (const sql of refusals) await expect(asRole.raw(sql)).rejects.toThrow(/permission denied/);
    const alice = await stack.db('storage_users').where({ username: 'alice' }).first();
    expect(alice.enabled).toBe(false);
  });

  it('when the role writes what the OS-EC2 endpoints write, then Postgres allows a credential and its audit record', async () => {
    const alice = await stack.db('storage_users').where({ username: 'alice' }).first();
    const [row] = await asRole('s3_credentials')
      .insert({ storage_user_id: alice.id, access_key: 'ROLETEST000000000001', secret_sealed: 'v1:x' })
      .returning(['id']);
    await asRole('audit_log').insert({
      operator_name: 'storage user alice',
      action: 'create',
      target_type: 's3_credentials',
      target_id: String(row.id),
      target_name: 'ROLETEST000000000001',
      target_uri: '/x/',
    });
    expect(await asRole('s3_credentials').where({ id: row.id }).delete()).toBe(1);
  });

  it('when the role writes what the application credential endpoints write, then Postgres allows reading, creating and deleting one', async () => {
    const alice = await stack.db('storage_users').where({ username: 'alice' }).first();
    const id = 'ab'.repeat(16);
    await asRole('application_credentials').insert({
      id,
      storage_user_id: alice.id,
      name: 'role-test',
      secret_hash: 'sha256:x',
      roles: JSON.stringify([]),
    });
    expect(await asRole('application_credentials').where({ id }).first()).toMatchObject({ name: 'role-test' });
    expect(await asRole('application_credentials').where({ id }).delete()).toBe(1);
  });

  it('when the role lacks CONNECT on a hardened database, then it cannot even connect (the grant is needed)', async () => {
    const dbName = new URL(stack.databaseUrl!).pathname.slice(1);
    await stack.db.raw('REVOKE CONNECT ON DATABASE ?? FROM ??', [dbName, role]);
    const quiet = { warn: () => {}, error: () => {}, debug: () => {}, deprecate: () => {} };
    const fresh = knex({ client: 'pg', connection: roleUrl, pool: { min: 0, max: 1 }, log: quiet });
    try {
      await expect(fresh.raw('SELECT 1')).rejects.toThrow(/permission denied for database/);
    } finally {
      await fresh.destroy();
      await stack.db.raw('GRANT CONNECT ON DATABASE ?? TO ??', [dbName, role]);
    }
  });

  describe('imported users', () => {
    /** passlib's bcrypt (Keystone's default scheme), cost 4, of the password 'pw'. */
    const BCRYPT = '$2y$04$mg6ee4TepYJKmiGWRMGL4OUSck7Clc7z5WSRrx66rXpvWi3mRu3/S';
    const row = (username: string) => stack.db('storage_users').where({ username }).first();

    it('when an imported user logs in through the gateway as the role, then its hash becomes scrypt without a new generation, and its token stays valid', async () => {
      await stack.createUser('imported', '', { password: undefined, password_hash: BCRYPT });
      const before = await row('imported');
      expect(before.password_scheme).toBe('bcrypt');
      const token = await login('imported', 'pw');
      const after = await row('imported');
      expect(after.password_scheme).toBe('scrypt');
      expect(after.password_hash).not.toBe(BCRYPT);
      expect(after.generation).toBe(before.generation);
      const service = await login('swift-service', SERVICE_PW);
      expect(
        (await gw().get('/auth/v3/auth/tokens').set('X-Auth-Token', service).set('X-Subject-Token', token)).status,
      ).toBe(200);
      // The new hash is the same password.
      await login('imported', 'pw');
      expect((await gw().get('/auth/v1.0').set('X-Auth-User', 'imported').set('X-Auth-Key', 'not-pw')).status).toBe(
        401,
      );
    });

    it('when the role calls the replacement itself, then only a foreign hash still in place is replaced, and only by a Cairn scrypt hash', async () => {
      await stack.createUser('imported2', '', { password: undefined, password_hash: BCRYPT });
      const user = await row('imported2');
      const own = (await row('bob')).password_hash as string;
      const replace = async (id: string, oldHash: string, newHash: string) =>
        (await asRole.raw('SELECT cairn_replace_foreign_password_hash(?::bigint, ?, ?) AS r', [id, oldHash, newHash]))
          .rows[0].r as boolean;
      // Not a Cairn hash as the replacement, not the hash in place, not a user whose hash is already Cairn's.
      expect(await replace(user.id, BCRYPT, BCRYPT)).toBe(false);
      expect(await replace(user.id, BCRYPT.replace('mg6', 'xx6'), own)).toBe(false);
      const bob = await row('bob');
      expect(await replace(bob.id, bob.password_hash, own)).toBe(false);
      expect(await replace(user.id, BCRYPT, own)).toBe(true);
      expect((await row('imported2')).password_scheme).toBe('scrypt');
      expect(await replace(user.id, BCRYPT, own)).toBe(false);
    });

    it('when the hash was changed by an operator while the old one was being verified, then the compare-and-set leaves the new one', async () => {
      await stack.createUser('imported3', '', { password: undefined, password_hash: BCRYPT });
      const user = await row('imported3');
      expect(await stack.patchUser(String(user.id), { password: 'an-operator-set-password-now' })).toBe(202);
      const changed = await row('imported3');
      const record = {
        id: String(user.id),
        username: 'imported3',
        passwordHash: BCRYPT,
        enabled: true,
        isSuperuser: false,
        generation: String(user.generation),
      };
      expect(await roleDeps.users.replaceForeignHash(record, (await row('bob')).password_hash)).toBe(false);
      expect((await row('imported3')).password_hash).toBe(changed.password_hash);
    });
  });
});
