import * as api from '@cairn/management-api';
import * as gateway from '@cairn/auth-gateway';
import knex from 'knex';
import { rmSync } from 'node:fs';
import { makeTestCa, TlsPostgres, TlsRedis, type TestCa } from './support/tls-servers';

/**
 * TLS on the hops to Postgres and Redis, with a private CA made at test time: a Postgres instance
 * that accepts only TLS connections (hostssl) and a redis-server with only its TLS port, both
 * showing a certificate for 127.0.0.1 signed by that CA. The services are configured through
 * their environment (readConfig), as in production.
 */
const ADMIN = 'ApiKey tls-admin:tls-admin-key-0123456789abcdefghijklmnop';
const PASSWORD = 'tls-password-0123456789';

describe('TLS to Postgres and Redis with a private CA', () => {
  let ca: TestCa;
  let postgres: TlsPostgres;
  let redis: TlsRedis;
  let apiRunning: api.RunningApi | undefined;
  let apiUrl: string;

  const apiEnv = (caFile: string): Record<string, string> => ({
    DATABASE_URL: postgres.url('cairn'),
    CAIRN_DATABASE_CA_FILE: caFile,
    CAIRN_API_HOST: '127.0.0.1',
    CAIRN_API_PORT: '0',
    CAIRN_ADMIN_USER: 'tls-admin',
    CAIRN_ADMIN_KEY: 'tls-admin-key-0123456789abcdefghijklmnop',
    CAIRN_STARTUP_TIMEOUT: '30',
    LOG_LEVEL: 'silent',
  });
  const gatewayEnv = (databaseCa: string, redisCa: string): Record<string, string> => ({
    DATABASE_URL: postgres.url('cairn'),
    CAIRN_DATABASE_CA_FILE: databaseCa,
    REDIS_URL: redis.url,
    CAIRN_REDIS_CA_FILE: redisCa,
    CAIRN_GATEWAY_HOST: '127.0.0.1',
    CAIRN_GATEWAY_PORT: '0',
    CAIRN_STARTUP_TIMEOUT: '30',
    LOG_LEVEL: 'silent',
  });

  beforeAll(async () => {
    ca = await makeTestCa();
    postgres = new TlsPostgres(ca);
    await postgres.start();
    redis = new TlsRedis(ca);
    await redis.start();
    // The database itself, made over TLS with the CA given in the URL the way libpq takes it.
    const admin = knex({
      client: 'pg',
      connection: `${postgres.url()}?sslmode=verify-full&sslrootcert=${encodeURIComponent(ca.caFile)}`,
      pool: { min: 0, max: 1 },
    });
    await admin.raw('CREATE DATABASE cairn').finally(() => admin.destroy());
  }, 120_000);

  afterAll(async () => {
    await apiRunning?.close();
    await redis?.stop();
    await postgres?.stop();
    if (ca) rmSync(ca.dir, { recursive: true, force: true });
  });

  it("when the management API is given the CA that signed Postgres' certificate, then it starts, migrates and serves over a verified TLS connection", async () => {
    const config = api.readConfig(apiEnv(ca.caFile));
    expect(config.databaseUrl).toContain('sslmode=verify-full');
    const deps = api.createDeps(config);
    apiRunning = await api.startManagementApi(config, deps);
    apiUrl = `http://127.0.0.1:${apiRunning.port}`;
    expect((await fetch(`${apiUrl}/readyz`)).status).toBe(200);
    const { rows } = (await deps.db.raw('SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')) as {
      rows: Array<{ ssl: boolean }>;
    };
    expect(rows).toEqual([{ ssl: true }]);
    const created = await fetch(`${apiUrl}/api/v1/users/`, {
      method: 'POST',
      headers: { Authorization: ADMIN, 'Content-Type': 'application/json' },
      body: JSON.stringify({ cluster: '/api/v1/clusters/1/', user: 'tls-alice', password: PASSWORD }),
    });
    expect(created.status).toBe(201);
  });

  it('when the management API is given another CA, then it refuses to start at once, saying the certificate did not verify and which setting to check', async () => {
    const config = api.readConfig(apiEnv(ca.wrongCaFile));
    const deps = api.createDeps(config);
    const started = Date.now();
    const failure = await api.startManagementApi(config, deps).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    await deps.db.destroy();
    expect(failure?.message).toMatch(
      /^The TLS connection to Postgres failed \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE): .*\)\. Check that CAIRN_DATABASE_CA_FILE/,
    );
    // Not retried until CAIRN_STARTUP_TIMEOUT (30 s): a certificate does not start verifying later.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('when the gateway has both CAs, then a user logs in and a token validates through TLS to Postgres (its pool and its LISTEN session) and to Redis', async () => {
    const config = gateway.readConfig(gatewayEnv(ca.caFile, ca.caFile));
    const deps = await gateway.createDeps(config);
    const running = await gateway.startAuthGateway(config, deps);
    try {
      const url = `http://127.0.0.1:${running.port}`;
      const login = await fetch(`${url}/auth/v3/auth/tokens`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          auth: {
            identity: {
              methods: ['password'],
              password: { user: { name: 'tls-alice', domain: { id: 'default' }, password: PASSWORD } },
            },
          },
        }),
      });
      expect(login.status).toBe(201);
      const token = login.headers.get('x-subject-token')!;
      const validated = await fetch(`${url}/auth/v3/auth/tokens`, {
        headers: { 'X-Auth-Token': token, 'X-Subject-Token': token },
      });
      expect(validated.status).toBe(200);
      // The token went to Redis over TLS.
      expect(await deps.redis!.dbsize()).toBeGreaterThan(0);
      const { rows } = (await deps.db.raw(
        `SELECT a.application_name, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid) WHERE a.application_name LIKE 'cairn-auth-gateway%' ORDER BY 1`,
      )) as { rows: Array<{ application_name: string; ssl: boolean }> };
      expect(rows.map((r) => r.application_name)).toContain('cairn-auth-gateway-listen');
      expect(rows.every((r) => r.ssl)).toBe(true);
    } finally {
      await running.close();
    }
  });

  it('when the gateway has another CA for Redis, then it refuses to start at once, naming CAIRN_REDIS_CA_FILE', async () => {
    const started = Date.now();
    const failure = await gateway.createDeps(gateway.readConfig(gatewayEnv(ca.caFile, ca.wrongCaFile))).then(
      async (deps) => {
        await gateway
          .startAuthGateway(gateway.readConfig(gatewayEnv(ca.caFile, ca.wrongCaFile)), deps)
          .then((r) => r.close());
        return undefined;
      },
      (e: unknown) => e as Error,
    );
    expect(failure?.message).toMatch(
      /^The TLS connection to Redis failed \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE): .*\)\. Check that CAIRN_REDIS_CA_FILE/,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('when the gateway has another CA for Postgres, then it refuses to start at once, naming CAIRN_DATABASE_CA_FILE', async () => {
    const started = Date.now();
    const failure = await gateway.createDeps(gateway.readConfig(gatewayEnv(ca.wrongCaFile, ca.caFile))).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(failure?.message).toMatch(
      /^The TLS connection to Postgres failed \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE): .*\)\. Check that CAIRN_DATABASE_CA_FILE/,
    );
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('when a CA file is missing or the Redis URL does not use TLS, then the configuration is refused with a sentence saying so', () => {
    expect(() => api.readConfig(apiEnv(`${ca.dir}/missing.pem`))).toThrow(
      /CAIRN_DATABASE_CA_FILE \(.*missing\.pem\) cannot be read: ENOENT/,
    );
    expect(() =>
      gateway.readConfig({ ...gatewayEnv(ca.caFile, ca.caFile), REDIS_URL: 'redis://127.0.0.1:6379' }),
    ).toThrow(/CAIRN_REDIS_CA_FILE is set, but REDIS_URL does not use TLS/);
    expect(() => gateway.readConfig(gatewayEnv(ca.caFile, ca.keyFile))).toThrow(/holds no PEM certificate/);
  });
});
