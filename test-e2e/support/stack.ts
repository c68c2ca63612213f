import { randomBytes } from 'node:crypto';
import knex, { type Knex } from 'knex';
import { createMigratedPostgres, migratedPglite } from '../../services/management-api/test/support/migrated-template';
import * as gateway from '@cairn/auth-gateway';
import * as api from '@cairn/management-api';
import { hashPassword, parseS3SecretKeys, type ScryptParams } from '@cairn/domain';
import { LogCapture, listen } from '@cairn/runtime';
import { CHEAP_HASH_PARAMS } from './processes';
import { POSTGRES_ADMIN_URL, REDIS_URL } from './local-services';

/**
 * The two services in this process, each listening on a free port of 127.0.0.1 and built by its
 * own createDeps/createApp from real parts: a fresh Postgres database (or in-memory PGlite) and,
 * when asked, the real Redis. Tests talk to both over HTTP as clients would.
 */
export const ADMIN_AUTH_NAME = 'root';
export const ADMIN_KEY = 'stack-admin-key-0123456789abcdefghijklmn';
export const ADMIN_AUTH = `ApiKey ${ADMIN_AUTH_NAME}:${ADMIN_KEY}`;
export { POSTGRES_ADMIN_URL, REDIS_URL };

export interface StackOptions {
  database?: 'postgres' | 'pglite';
  redis?: boolean;
  /** The gateway's REDIS_URL when `redis` is true (a Cluster or Sentinel URL too); default REDIS_URL above. */
  redisUrl?: string;
  /** Gateway settings over the defaults; a function gets the database's URL (Postgres only). */
  gateway?: Partial<gateway.GatewayConfig> | ((databaseUrl?: string) => Partial<gateway.GatewayConfig>);
  /** Both services' log level (default: the API silent, the gateway info); lines land in apiLogs / gatewayLogs. */
  logLevel?: string;
  /**
   * scrypt parameters the management API hashes passwords with, and the gateway its unknown users'
   * check and imported users' new hashes. Default CHEAP_HASH_PARAMS: a test about hashing's cost
   * passes DEFAULT_SCRYPT_PARAMS (production's).
   */
  hashParams?: ScryptParams;
  /** The console's built files for the management API to serve under /console/ (default: none). */
  consoleDir?: string;
  /** CAIRN_S3_SECRET_KEYS of both services (default: none, so no S3 credential can be created or checked). */
  s3SecretKeys?: string;
  /** The management API's console session lifetimes (default: 30 minutes idle, 12 hours at most). */
  consoleSessions?: api.Deps['consoleSessions'];
  /** The longest temporary URL a storage user may make (CAIRN_TEMP_URL_MAX_SECONDS; default 7 days). */
  tempUrlMaxSeconds?: number;
}

export interface Stack {
  db: Knex;
  databaseUrl?: string;
  apiUrl: string;
  /** Every path under /api/v1/ the management API serves, with its methods (its route table). */
  apiRoutes: Array<{ path: string; methods: string[] }>;
  gatewayUrl: string;
  gatewayDeps: gateway.Deps;
  gatewayLogs: LogCapture;
  /** The management API's log lines (none unless `logLevel` is set). */
  apiLogs: LogCapture;
  /** Creates a storage user in the default cluster through the management API. */
  createUser: (user: string, password: string, extra?: Record<string, unknown>) => Promise<{ id: string }>;
  /** PATCH or DELETE a user through the management API. */
  patchUser: (id: string, body: Record<string, unknown>) => Promise<number>;
  deleteUser: (id: string) => Promise<number>;
  close: () => Promise<void>;
}

export { CHEAP_HASH_PARAMS };

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const hashParams = options.hashParams ?? CHEAP_HASH_PARAMS;
  const kind = options.database ?? 'postgres';
  let db: Knex;
  let databaseUrl: string | undefined;
  let dropDatabase = async () => {};
  if (kind === 'pglite') {
    db = await migratedPglite();
  } else {
    const name = `cairn_stack_${process.pid}_${randomBytes(4).toString('hex')}`;
    const admin = knex({ client: 'pg', connection: POSTGRES_ADMIN_URL, pool: { min: 0, max: 1 } });
    await createMigratedPostgres(POSTGRES_ADMIN_URL, name);
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    db = api.createDatabase({ url: databaseUrl, poolMax: 10 });
    dropDatabase = async () => {
      await admin.raw(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.destroy();
    };
  }
  // Already migrated: a copy of the migrated template (see migrated-template.ts).
  await api.bootstrap(db, {
    adminUser: ADMIN_AUTH_NAME,
    adminKey: ADMIN_KEY,
    defaultCluster: 'default',
    defaultAuthUrl: 'http://127.0.0.1:5000/auth',
    defaultStorageUrl: 'http://127.0.0.1:8080/v1',
  });
  const apiLogs = new LogCapture();
  const keyring = options.s3SecretKeys === undefined ? undefined : parseS3SecretKeys(options.s3SecretKeys);
  if (keyring && !keyring.ok) throw new Error(keyring.problems.join(' '));
  const apiApp = api.createApp({
    db,
    log: api.createLogger(options.logLevel ?? 'silent', apiLogs),
    hashPassword: (p) => hashPassword(p, hashParams),
    apiKeyCacheMs: 5000,
    consoleDir: options.consoleDir,
    ...(options.consoleSessions ? { consoleSessions: options.consoleSessions } : {}),
    ...(options.tempUrlMaxSeconds ? { tempUrlMaxSeconds: options.tempUrlMaxSeconds } : {}),
    ...(keyring?.ok ? { s3Keyring: keyring.keyring } : {}),
  });
  const listening = await listen(apiApp, 0, '127.0.0.1');
  const apiServer = { server: listening.server, url: `http://127.0.0.1:${listening.port}` };

  const gatewayLogs = new LogCapture();
  const config = gateway.readConfig({
    CAIRN_GATEWAY_HOST: '127.0.0.1',
    CAIRN_GATEWAY_PORT: '0',
    LOG_LEVEL: 'info',
    // Shares `db` below, but with the URL it also follows user changes on a connection of its own.
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    ...(options.redis ? { REDIS_URL: options.redisUrl ?? REDIS_URL } : {}),
  });
  const gatewayConfig: gateway.GatewayConfig = {
    ...config,
    passwordHashParams: hashParams,
    ...(options.s3SecretKeys === undefined ? {} : { s3SecretKeys: options.s3SecretKeys }),
    ...(typeof options.gateway === 'function' ? options.gateway(databaseUrl) : options.gateway),
  };
  const gatewayDeps = await gateway.createDeps(gatewayConfig, {
    db,
    log: gateway.createLogger(options.logLevel ?? 'info', gatewayLogs),
  });
  const running = await gateway.startAuthGateway(gatewayConfig, gatewayDeps);
  const gatewayUrl = `http://127.0.0.1:${running.port}`;

  const call = async (method: string, path: string, body?: unknown) =>
    fetch(`${apiServer.url}${path}`, {
      method,
      headers: { Authorization: ADMIN_AUTH, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  return {
    db,
    databaseUrl,
    apiUrl: apiServer.url,
    apiRoutes: api.routeTableOf(apiApp),
    gatewayUrl,
    gatewayDeps,
    gatewayLogs,
    apiLogs,
    createUser: async (user, password, extra = {}) => {
      const res = await call('POST', '/api/v1/users/', { cluster: '/api/v1/clusters/1/', user, password, ...extra });
      if (res.status !== 201) throw new Error(`create ${user}: ${res.status} ${await res.text()}`);
      return (await res.json()) as { id: string };
    },
    patchUser: async (id, body) => (await call('PATCH', `/api/v1/users/${id}/`, body)).status,
    deleteUser: async (id) => (await call('DELETE', `/api/v1/users/${id}`)).status,
    close: async () => {
      // No clients left to wait for in a test: idle connections close at once.
      await running.close(0);
      await new Promise<void>((resolve) => apiServer.server.close(() => resolve()));
      await db.destroy();
      await dropDatabase();
    },
  };
}
