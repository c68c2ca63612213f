import { randomBytes } from 'node:crypto';
import knex, { type Knex } from 'knex';
import { Client } from 'pg';
import * as api from '@cairn/management-api';

/**
 * The deployment's migrate job (services/management-api/src/migrate.ts, run by docker-compose.yml's
 * `migrate` service and by `pnpm cairn migrate`) on a fresh real Postgres database: it declares the
 * clusters the gateways need and the gateways' read-only role.
 */
const ADMIN_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const EAST = { name: 'east', auth_url: 'http://127.0.0.1:5001/auth', storage_url: 'http://127.0.0.1:8081/v1', region: 'RegionOne' };

describe('the migrate job', () => {
  let admin: Knex;
  let db: Knex;
  let dbName: string;
  let dbUrl: URL;
  const roles: string[] = [];

  beforeAll(async () => {
    admin = knex({ client: 'pg', connection: ADMIN_URL, pool: { min: 0, max: 1 } });
    dbName = `cairn_migrate_${process.pid}_${randomBytes(4).toString('hex')}`;
    await admin.raw(`CREATE DATABASE ${dbName}`);
    dbUrl = new URL(ADMIN_URL);
    dbUrl.pathname = `/${dbName}`;
    db = api.createDatabase({ url: dbUrl.toString(), poolMax: 2 });
    await api.migrateLatest(db);
  });

  afterAll(async () => {
    await db.destroy();
    await admin.raw(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    for (const role of roles) await admin.raw('DROP ROLE IF EXISTS ??', [role]);
    await admin.destroy();
  });

  it('when a cluster is declared twice, then it is created once and then found unchanged', async () => {
    expect(await api.ensureClusters(db, [EAST])).toEqual([{ name: 'east', id: expect.any(Number), outcome: 'created' }]);
    const [again] = await api.ensureClusters(db, [EAST]);
    expect(again?.outcome).toBe('unchanged');
    expect(await db('clusters').where({ name: 'east' }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });

  it('when a declared cluster exists with other URLs, then they are brought to the declared ones and its id is kept', async () => {
    const [before] = await api.ensureClusters(db, [EAST]);
    const moved = { ...EAST, auth_url: 'https://auth.example.com/auth', storage_url: 'https://swift.example.com/v1', region: 'RegionTwo' };
    const [after] = await api.ensureClusters(db, [moved]);
    expect(after).toEqual({ name: 'east', id: before?.id, outcome: 'updated' });
    const row = await db('clusters').where({ name: 'east' }).first();
    expect([row.auth_url, row.storage_url, row.region]).toEqual([moved.auth_url, moved.storage_url, 'RegionTwo']);
    await api.ensureClusters(db, [EAST]);
  });

  it('when the gateway role is ensured, then it can read clusters and storage users and nothing else', async () => {
    const role = `cairn_gw_test_${randomBytes(4).toString('hex')}`;
    roles.push(role);
    const password = randomBytes(16).toString('hex');
    expect(await api.ensureGatewayRole(db, { name: role, password })).toBe('created');
    expect(await api.ensureGatewayRole(db, { name: role, password })).toBe('updated');

    const url = new URL(dbUrl);
    url.username = role;
    url.password = password;
    const client = new Client({ connectionString: url.toString() });
    await client.connect();
    try {
      expect((await client.query('SELECT name FROM clusters')).rows).toEqual([{ name: 'east' }]);
      await client.query('SELECT count(*) FROM storage_users');
      await expect(client.query('SELECT * FROM api_keys')).rejects.toThrow(/permission denied/);
      await expect(client.query('SELECT * FROM operators')).rejects.toThrow(/permission denied/);
      await expect(client.query("UPDATE clusters SET name = 'x'")).rejects.toThrow(/permission denied/);
    } finally {
      await client.end();
    }
  });

  it('when a role name or password would need quoting, then it is refused before any SQL runs', async () => {
    await expect(api.ensureGatewayRole(db, { name: 'x"; DROP TABLE clusters; --', password: 'a'.repeat(20) })).rejects.toThrow(/Invalid gateway role/);
    await expect(api.ensureGatewayRole(db, { name: 'cairn_gw', password: "x' SUPERUSER --aaaaaaaaaaaa" })).rejects.toThrow(/Invalid gateway role/);
    const read = () => "it's-not-safe-at-all";
    expect(() => api.parseMigrateArgs(['--gateway-role', 'cairn_gw', '--gateway-password-file', '/p'], read)).toThrow(/letters, digits, _ or -/);
    expect(() => api.parseMigrateArgs(['--gateway-role', 'Robert"'], read)).toThrow(/lower-case letters/);
    expect(await db('clusters').count({ n: '*' })).toEqual([{ n: '1' }]);
  });

  it('when a cluster spec is malformed or invalid, then the arguments are refused with the reason', () => {
    expect(api.parseClusterSpec('name=west,auth_url=http://h:5002/auth,storage_url=http://h:8082/v1')).toEqual({
      name: 'west',
      auth_url: 'http://h:5002/auth',
      storage_url: 'http://h:8082/v1',
      region: 'RegionOne',
    });
    expect(() => api.parseClusterSpec('west')).toThrow(/key=value/);
    expect(() => api.parseClusterSpec('name=west,auth_url=ftp://h/auth,storage_url=http://h/v1')).toThrow(/auth_url/);
    expect(() => api.parseClusterSpec('name=west,storage_url=http://h/v1')).toThrow(/auth_url/);
    const twice = ['--cluster', 'name=a,auth_url=http://h/auth,storage_url=http://h/v1', '--cluster', 'name=a,auth_url=http://h/auth,storage_url=http://h/v1'];
    expect(() => api.parseMigrateArgs(twice)).toThrow(/once/);
    expect(() => api.parseMigrateArgs(['--gateway-password-file', '/p'])).toThrow(/needs --gateway-role/);
  });
});
