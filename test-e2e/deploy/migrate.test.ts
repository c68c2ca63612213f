import { randomBytes } from 'node:crypto';
import knex, { type Knex } from 'knex';
import { Client } from 'pg';
import request from 'supertest';
import { hashPassword, verifyPassword } from '@cairn/domain';
import * as api from '@cairn/management-api';
import { POSTGRES_ADMIN_URL as ADMIN_URL } from '../support/local-services';

/**
 * The deployment's migrate job (services/management-api/src/migrate.ts, run by docker-compose.yml's
 * `migrate` service and by `pnpm cairn migrate`) on a fresh real Postgres database: it declares the
 * clusters the gateways need, the gateways' read-only role and the storage collectors' credentials.
 */

const EAST = {
  name: 'east',
  auth_url: 'http://127.0.0.1:5001/auth',
  storage_url: 'http://127.0.0.1:8081/v1',
  region: 'RegionOne',
};

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
    expect(await api.ensureClusters(db, [EAST])).toEqual([
      { name: 'east', id: expect.any(Number), outcome: 'created' },
    ]);
    const [again] = await api.ensureClusters(db, [EAST]);
    expect(again?.outcome).toBe('unchanged');
    expect(await db('clusters').where({ name: 'east' }).count({ n: '*' })).toEqual([{ n: '1' }]);
  });

  it('when a declared cluster exists with other URLs, then they are brought to the declared ones and its id is kept', async () => {
    const [before] = await api.ensureClusters(db, [EAST]);
    const moved = {
      ...EAST,
      auth_url: 'https://auth.example.com/auth',
      storage_url: 'https://swift.example.com/v1',
      region: 'RegionTwo',
    };
    const [after] = await api.ensureClusters(db, [moved]);
    expect(after).toEqual({ name: 'east', id: before?.id, outcome: 'updated' });
    const row = await db('clusters').where({ name: 'east' }).first();
    expect([row.auth_url, row.storage_url, row.region]).toEqual([moved.auth_url, moved.storage_url, 'RegionTwo']);
    await api.ensureClusters(db, [EAST]);
  });

  it('when declared clusters are created or moved, then each change is in the audit trail as done by migrate', async () => {
    const entries = await db('audit_log')
      .where({ operator_name: 'migrate', target_type: 'clusters', target_name: 'east' })
      .orderBy('id')
      .select('action', 'operator_id');
    // Created, moved, moved back; declaring it unchanged wrote nothing.
    expect(entries).toEqual([
      { action: 'create', operator_id: null },
      { action: 'update', operator_id: null },
      { action: 'update', operator_id: null },
    ]);
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
    await expect(
      api.ensureGatewayRole(db, { name: 'x"; DROP TABLE clusters; --', password: 'a'.repeat(20) }),
    ).rejects.toThrow(/Invalid gateway role/);
    await expect(
      api.ensureGatewayRole(db, { name: 'cairn_gw', password: "x' SUPERUSER --aaaaaaaaaaaa" }),
    ).rejects.toThrow(/Invalid gateway role/);
    const read = () => "it's-not-safe-at-all";
    expect(() => api.parseMigrateArgs(['--gateway-role', 'cairn_gw', '--gateway-password-file', '/p'], read)).toThrow(
      /letters, digits, _ or -/,
    );
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
    const twice = [
      '--cluster',
      'name=a,auth_url=http://h/auth,storage_url=http://h/v1',
      '--cluster',
      'name=a,auth_url=http://h/auth,storage_url=http://h/v1',
    ];
    expect(() => api.parseMigrateArgs(twice)).toThrow(/once/);
    expect(() => api.parseMigrateArgs(['--gateway-password-file', '/p'])).toThrow(/needs --gateway-role/);
  });

  describe('a declared collector', () => {
    const WEST = {
      ...EAST,
      name: 'west',
      auth_url: 'http://127.0.0.1:5002/auth',
      storage_url: 'http://127.0.0.1:8082/v1',
    };
    const spec = {
      cluster: 'east',
      user: 'cairn-collector',
      apiKey: `collector-east:${randomBytes(24).toString('hex')}`,
      password: randomBytes(24).toString('hex'),
    };
    // Cheap scrypt parameters: this is about what is stored, not how hard it is to crack.
    const cheapHash = (password: string) => hashPassword(password, { logN: 10, r: 8, p: 1 });
    const authAs = (apiKey: string) => ({ Authorization: `ApiKey ${apiKey}` });

    it('when declared before any API replica started, then its operator writes east only, its user is a superuser with the password, and the first start still creates the unlimited admin', async () => {
      await api.ensureClusters(db, [EAST, WEST]);
      expect(await api.ensureCollector(db, spec, cheapHash)).toEqual({ operator: 'created', user: 'created' });

      const east = await db('clusters').where({ name: 'east' }).first();
      const user = await db('storage_users').where({ cluster_id: east.id, username: 'cairn-collector' }).first();
      expect([user.is_superuser, user.enabled]).toEqual([true, true]);
      expect(await verifyPassword(spec.password, user.password_hash)).toBe(true);

      const deps = api.createDeps(api.readConfig({ DATABASE_URL: dbUrl.toString(), LOG_LEVEL: 'silent' }));
      try {
        const started = await api.bootstrap(deps.db, {
          adminUser: 'admin',
          defaultCluster: 'east',
          defaultAuthUrl: EAST.auth_url,
          defaultStorageUrl: EAST.storage_url,
        });
        expect(started.generatedAdmin?.name).toBe('admin');
        const app = api.createApp(deps);
        const accounts = await request(app)
          .get(`/api/v1/clusters/${east.id}/utilization/accounts/`)
          .set(authAs(spec.apiKey));
        expect(accounts.status).toBe(200);
        expect(accounts.body.objects.map((o: { account: string }) => o.account)).toContain('AUTH_cairn-collector');
        const clusters = await request(app).get('/api/v1/clusters/').set(authAs(spec.apiKey));
        expect(clusters.body.objects.map((c: { name: string }) => c.name)).toEqual(['east']);
        const operators = await request(app).get('/api/v1/operators/').set(authAs(spec.apiKey));
        expect(operators.status).toBe(403);
      } finally {
        await deps.db.destroy();
      }
    });

    it('when declared again unchanged, then nothing changes; with a new key and password, then the key is added, the password replaced, and the audit trail holds neither', async () => {
      expect(await api.ensureCollector(db, spec, cheapHash)).toEqual({ operator: 'unchanged', user: 'unchanged' });
      const rotated = {
        ...spec,
        apiKey: `collector-east:${randomBytes(24).toString('hex')}`,
        password: randomBytes(24).toString('hex'),
      };
      expect(await api.ensureCollector(db, rotated, cheapHash)).toEqual({ operator: 'updated', user: 'updated' });
      const op = await db('operators').where({ name: 'collector-east' }).first();
      expect(await db('api_keys').where({ operator_id: op.id }).count({ n: '*' })).toEqual([{ n: '2' }]);
      const user = await db('storage_users').where({ username: 'cairn-collector' }).first();
      expect(await verifyPassword(rotated.password, user.password_hash)).toBe(true);
      const trail = JSON.stringify(await db('audit_log').where({ operator_name: 'migrate' }).select('*'));
      expect(trail).toContain('password_changed');
      for (const secret of [spec.password, rotated.password, spec.apiKey.split(':')[1]!, rotated.apiKey.split(':')[1]!])
        expect(trail).not.toContain(secret);
    });

    it('when a collector spec or its secrets are wrong, then migrate says which and writes nothing', async () => {
      const files: Record<string, string> = {
        '/k': 'collector-west:' + 'k'.repeat(40) + '\n',
        '/p': 'p'.repeat(30) + '\n',
        '/short': 'collector-west:short\n',
      };
      const read = (path: string) => {
        if (!(path in files)) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
        return files[path]!;
      };
      expect(
        api.parseMigrateArgs(['--collector', 'cluster=west,user=meter,api_key_file=/k,password_file=/p'], read)
          .collectors,
      ).toEqual([
        { cluster: 'west', user: 'meter', apiKey: 'collector-west:' + 'k'.repeat(40), password: 'p'.repeat(30) },
      ]);
      expect(() => api.parseMigrateArgs(['--collector', 'cluster=west,user=meter,api_key_file=/k'], read)).toThrow(
        /needs cluster=, user=, api_key_file= and password_file=/,
      );
      expect(() =>
        api.parseMigrateArgs(['--collector', 'cluster=west,user=meter,api_key_file=/k,password_file=/p,role=x'], read),
      ).toThrow(/unknown key 'role'/);
      expect(() =>
        api.parseMigrateArgs(['--collector', 'cluster=west,user=meter,api_key_file=/missing,password_file=/p'], read),
      ).toThrow(/cannot read \/missing \(ENOENT\)/);
      const before = await db('operators').count({ n: '*' });
      await expect(
        api.ensureCollector(
          db,
          { cluster: 'west', user: 'meter', apiKey: 'collector-west:short', password: 'p'.repeat(30) },
          cheapHash,
        ),
      ).rejects.toThrow(/API key must be "<operator>:<key>"/);
      await expect(
        api.ensureCollector(
          db,
          { cluster: 'north', user: 'meter', apiKey: 'collector-north:' + 'k'.repeat(40), password: 'p'.repeat(30) },
          cheapHash,
        ),
      ).rejects.toThrow(/no cluster named 'north'/);
      await expect(
        api.ensureCollector(
          db,
          { cluster: 'west', user: 'meter', apiKey: 'collector-west:' + 'k'.repeat(40), password: 'short' },
          cheapHash,
        ),
      ).rejects.toThrow(/password/i);
      expect(await db('operators').count({ n: '*' })).toEqual(before);
    });
  });
});
