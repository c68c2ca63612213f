import { readFileSync } from 'node:fs';
import Joi from 'joi';
import {
  ConfigError,
  loadConfig,
  passwordHashConfig,
  type PasswordHashSettings,
  s3KeyringConfig,
  trustProxySchema,
  type ConfigSpec,
  type Env,
  type TrustProxy,
} from '@cairn/config';
import { logFormatConfig, postgresUrlWithCa, readCaFile, type LogFormat } from '@cairn/runtime';
import type { ResellerCredentials } from './services/swift-reseller';
import {
  apiKeySchema,
  clusterCreateSchema,
  operatorNameSchema,
  parseS3SecretKeys,
  type S3SecretKeyring,
} from '@cairn/domain';

/** The default cluster obeys the API's own rules for a cluster, checked before anything starts. */
const clusterField = (key: 'name' | 'auth_url' | 'storage_url', env: string) =>
  (clusterCreateSchema.extract(key) as Joi.StringSchema).optional().label(env);

/** The only place management-api reads the environment. Every key: env name, doc, default. */
/** The default cluster's auth_url when nothing says where its gateway is: the gateway's default port on this host. */
export const DEFAULT_AUTH_URL = 'http://127.0.0.1:5000/auth';

export const configSpec = {
  host: { env: 'CAIRN_API_HOST', doc: 'Address management-api listens on.', schema: Joi.string().default('0.0.0.0') },
  port: {
    env: 'CAIRN_API_PORT',
    doc: 'Port management-api listens on (0 picks a free one).',
    schema: Joi.number().integer().min(0).max(65535).default(8000),
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    doc: 'Postgres connection URL. Unset: embedded PGlite with data under CAIRN_DATA_DIR.',
    schema: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
    secret: true,
  },
  databaseCaFile: {
    env: 'CAIRN_DATABASE_CA_FILE',
    doc: "PEM file of the CA that signed Postgres' server certificate. Set: connections use TLS and verify the certificate and DATABASE_URL's host name with it (sslmode=verify-full, unless DATABASE_URL sets its own sslmode). DATABASE_URL's own sslmode and sslrootcert work too.",
    schema: Joi.string(),
  },
  dataDir: {
    env: 'CAIRN_DATA_DIR',
    doc: 'Where embedded PGlite keeps its data (only without DATABASE_URL).',
    schema: Joi.string().default('./data/pglite'),
  },
  poolMax: {
    env: 'DATABASE_POOL_MAX',
    doc: 'Postgres connections per process.',
    schema: Joi.number().integer().min(1).max(200).default(10),
  },
  preparedStatements: {
    env: 'CAIRN_DATABASE_PREPARED_STATEMENTS',
    doc: 'Prepare the statements each list and detail route repeats (Postgres plans them once per connection, not at every request). Set false behind PgBouncer in transaction mode older than 1.21, or with its max_prepared_statements at 0.',
    schema: Joi.boolean().default(true),
  },
  migrateOnStart: {
    env: 'CAIRN_MIGRATE_ON_START',
    doc: 'Apply pending migrations at start (set false when a migrate job does it).',
    schema: Joi.boolean().default(true),
  },
  adminUser: {
    env: 'CAIRN_ADMIN_USER',
    doc: 'With CAIRN_ADMIN_KEY: the first admin operator, created only while no operator exists.',
    schema: operatorNameSchema,
  },
  adminKey: {
    env: 'CAIRN_ADMIN_KEY',
    doc: 'API key of CAIRN_ADMIN_USER (at least 32 printable characters).',
    schema: apiKeySchema,
    secret: true,
  },
  defaultCluster: {
    env: 'CAIRN_DEFAULT_CLUSTER',
    doc: 'Name of the cluster the first start creates when the database has none.',
    schema: clusterField('name', 'CAIRN_DEFAULT_CLUSTER').default('default'),
  },
  createDefaultCluster: {
    env: 'CAIRN_CREATE_DEFAULT_CLUSTER',
    doc: 'Whether the first start creates that default cluster (false: clusters come only from the API or the migrate job).',
    schema: Joi.boolean().default(true),
  },
  defaultAuthUrl: {
    env: 'CAIRN_DEFAULT_AUTH_URL',
    doc: `auth_url of that default cluster. Unset: the gateway's own address in the all-in-one \`cairn start\` (http://127.0.0.1:<CAIRN_GATEWAY_PORT>/auth, or its CAIRN_GATEWAY_HOST), else ${DEFAULT_AUTH_URL}.`,
    schema: clusterField('auth_url', 'CAIRN_DEFAULT_AUTH_URL'),
  },
  defaultStorageUrl: {
    env: 'CAIRN_DEFAULT_STORAGE_URL',
    doc: 'storage_url of that default cluster (the Swift proxy, ending in /v1).',
    schema: clusterField('storage_url', 'CAIRN_DEFAULT_STORAGE_URL').default('http://127.0.0.1:8080/v1'),
  },
  apiKeyCacheSeconds: {
    env: 'CAIRN_API_KEY_CACHE_SECONDS',
    doc: "How long a replica may reuse an operator's key hashes before reading them again (a revoked key can work that long on other replicas; 0: read on every request).",
    schema: Joi.number().integer().min(0).max(300).default(5),
  },
  startupTimeout: {
    env: 'CAIRN_STARTUP_TIMEOUT',
    doc: 'Seconds to keep retrying Postgres at start (connection, migrations, bootstrap; capped backoff, each failure logged) before exiting 1; 0: fail at once.',
    schema: Joi.number().integer().min(0).max(3600).default(60),
  },
  utilizationHourlyDays: {
    env: 'CAIRN_UTILIZATION_HOURLY_DAYS',
    doc: 'Days hourly utilization records are kept (older days remain as daily rollups); lists and details reaching further back are refused with 400.',
    schema: Joi.number().integer().min(2).max(3660).default(90),
  },
  utilizationDailyDays: {
    env: 'CAIRN_UTILIZATION_DAILY_DAYS',
    doc: 'Days daily utilization rollups are kept (at least the hourly retention); summaries reaching further back are refused with 400.',
    schema: Joi.number().integer().min(2).max(36600).default(1095),
  },
  auditRetentionDays: {
    env: 'CAIRN_AUDIT_RETENTION_DAYS',
    doc: "Days the audit trail keeps operators' entries and those of commands run on the host (cli, bootstrap, migrate); older ones are deleted by the maintenance every replica runs each 15 minutes. 0: kept for ever.",
    schema: Joi.number().integer().min(0).max(36600).default(730),
  },
  auditStorageUserRetentionDays: {
    env: 'CAIRN_AUDIT_STORAGE_USER_RETENTION_DAYS',
    doc: "Days the audit trail keeps storage users' own entries (S3 credentials they created or deleted through the gateway's OS-EC2 API, their console sign-ins, sign-outs and failed sign-ins), deleted like operators' entries but on their own clock. 0: kept for ever.",
    schema: Joi.number().integer().min(0).max(36600).default(90),
  },
  consoleSessionIdleSeconds: {
    env: 'CAIRN_CONSOLE_SESSION_IDLE_SECONDS',
    doc: "Seconds without a request after which a console session ends (the operator signs in again). A session's last use is recorded at most once a minute, so it may end up to a minute sooner.",
    schema: Joi.number().integer().min(1).max(86400).default(1800),
  },
  consoleSessionMaxSeconds: {
    env: 'CAIRN_CONSOLE_SESSION_MAX_SECONDS',
    doc: 'Seconds after sign-in at which a console session ends however busy it is.',
    schema: Joi.number()
      .integer()
      .min(1)
      .max(7 * 86400)
      .default(43200),
  },
  consoleStepUpSeconds: {
    env: 'CAIRN_CONSOLE_STEP_UP_SECONDS',
    doc: "Seconds a console session may mint lasting credentials (API keys, operators, an operator's wider role or clusters, a backup) after the operator typed the API key again to confirm; requests made with an API key need no confirmation.",
    schema: Joi.number().integer().min(1).max(3600).default(300),
  },
  tempUrlMaxSeconds: {
    env: 'CAIRN_TEMP_URL_MAX_SECONDS',
    doc: "The longest lifetime, in seconds, of a temporary URL a storage user makes on the console's Sharing page (POST /api/v1/self/temp_urls/); longer ones are refused with 400. A link works until it ends or its key is replaced: there is no revoking one link alone.",
    schema: Joi.number()
      .integer()
      .min(1)
      .max(366 * 86400)
      .default(7 * 86400),
  },
  trustProxy: {
    env: 'CAIRN_TRUST_PROXY',
    doc: "Which proxies' X-Forwarded-Proto, X-Forwarded-Host and X-Forwarded-For to believe (the console's session cookie is marked Secure when the request reached the proxy over HTTPS, and the console's writes must come from the scheme and host the request reached): 'false' (only the socket itself), a hop count of trusted proxies in front, or a comma-separated list of the load balancers' addresses or CIDR ranges (also loopback, linklocal, uniquelocal). 'true' is refused: any client could then claim HTTPS or an address.",
    schema: trustProxySchema().default(false),
  },
  heartbeatMs: {
    env: 'CAIRN_HEARTBEAT_MS',
    doc: 'How often, in milliseconds, each replica sets the one-row replication_heartbeat table to now(); a gateway reading a hot standby measures how far behind its copy is by it (see docs/deployment.md#regions), so this bounds how precisely it can. 0: no heartbeat (no gateway reads a standby).',
    schema: Joi.number().integer().min(0).max(60_000).default(1000),
  },
  ...passwordHashConfig,
  ...s3KeyringConfig,
  quotaCredentials: {
    env: 'CAIRN_QUOTA_CREDENTIALS',
    doc:
      'Per cluster, the superuser storage user whose reseller token applies quotas to its Swift, as JSON: {"<cluster name>": {"user": "…", "password": "…"}} ' +
      '(optional "auth_url" and "storage_url" when the cluster is reached by other addresses from here). Set: this process runs the quota reconciler (one replica at a time leads). Unset: quotas are stored but not applied.',
    schema: Joi.string().max(1_000_000),
    secret: true,
  },
  quotaResyncSeconds: {
    env: 'CAIRN_QUOTA_RESYNC_SECONDS',
    doc: "Seconds between the quota reconciler's drift checks (a HEAD of every account with a quota; changes made in Swift behind Cairn's back are put back) and its reads of each Swift's /info.",
    schema: Joi.number().integer().min(1).max(86400).default(300),
  },
  quotaPollMs: {
    env: 'CAIRN_QUOTA_POLL_MS',
    doc: "Milliseconds between the quota reconciler's polls for pending quotas and for the lock (changes also wake it at once).",
    schema: Joi.number().integer().min(50).max(60000).default(1000),
  },
  quotaConcurrency: {
    env: 'CAIRN_QUOTA_CONCURRENCY',
    doc: 'Account requests the quota reconciler has in flight at once, per cluster.',
    schema: Joi.number().integer().min(1).max(256).default(16),
  },
  quotaTimeoutMs: {
    env: 'CAIRN_QUOTA_TIMEOUT_MS',
    doc: 'Timeout of one request of the quota reconciler to Swift or the auth gateway.',
    schema: Joi.number().integer().min(100).max(120000).default(10000),
  },
  quotaSessionUrl: {
    env: 'CAIRN_QUOTA_SESSION_URL',
    doc: 'Postgres URL of a direct session where the quota reconciler holds its lock and LISTENs (PgBouncer in transaction mode cannot carry either). Unset: DATABASE_URL.',
    schema: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
    secret: true,
  },
  logLevel: {
    env: 'LOG_LEVEL',
    doc: 'pino log level.',
    schema: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  },
  logFormat: logFormatConfig,
} satisfies ConfigSpec;

export interface ManagementApiConfig extends PasswordHashSettings {
  host: string;
  port: number;
  /** With databaseCaFile, readConfig has added it to this URL (sslrootcert, sslmode). */
  databaseUrl?: string;
  databaseCaFile?: string;
  dataDir: string;
  poolMax: number;
  preparedStatements: boolean;
  migrateOnStart: boolean;
  adminUser?: string;
  adminKey?: string;
  defaultCluster: string;
  createDefaultCluster: boolean;
  /** Unset: the launcher derives it from the gateway's address; bootstrap falls back to DEFAULT_AUTH_URL. */
  defaultAuthUrl?: string;
  defaultStorageUrl: string;
  apiKeyCacheSeconds: number;
  /** Seconds start-up retries Postgres before giving up. */
  startupTimeout: number;
  utilizationHourlyDays: number;
  utilizationDailyDays: number;
  auditRetentionDays: number;
  auditStorageUserRetentionDays: number;
  consoleSessionIdleSeconds: number;
  consoleSessionMaxSeconds: number;
  consoleStepUpSeconds: number;
  tempUrlMaxSeconds: number;
  /** express's `trust proxy`: false, a hop count, or the trusted proxies' addresses/ranges. */
  trustProxy: TrustProxy;
  /** Milliseconds; 0: none. */
  heartbeatMs: number;
  s3SecretKeys?: string;
  s3CurrentKeyId?: string;
  quotaCredentials?: string;
  quotaResyncSeconds: number;
  quotaPollMs: number;
  quotaConcurrency: number;
  quotaTimeoutMs: number;
  quotaSessionUrl?: string;
  logLevel: string;
  logFormat: LogFormat;
}

export function readConfig(env: Env = process.env): ManagementApiConfig {
  const config = loadConfig<ManagementApiConfig>(configSpec, env, (p) => readFileSync(p, 'utf8'));
  if (Boolean(config.adminUser) !== Boolean(config.adminKey)) {
    throw new ConfigError(['CAIRN_ADMIN_USER and CAIRN_ADMIN_KEY must be set together.']);
  }
  if (config.utilizationDailyDays < config.utilizationHourlyDays) {
    throw new ConfigError(['CAIRN_UTILIZATION_DAILY_DAYS must be at least CAIRN_UTILIZATION_HOURLY_DAYS.']);
  }
  s3KeyringOf(config);
  if (config.databaseCaFile !== undefined) {
    if (!config.databaseUrl)
      throw new ConfigError([
        'CAIRN_DATABASE_CA_FILE needs DATABASE_URL: embedded PGlite has no connection to secure.',
      ]);
    const ca = readCaFile('CAIRN_DATABASE_CA_FILE', config.databaseCaFile);
    if ('problem' in ca) throw new ConfigError([ca.problem]);
    config.databaseUrl = postgresUrlWithCa(config.databaseUrl, config.databaseCaFile);
  }
  quotaCredentialsOf(config);
  return config;
}

const resellerCredentials = Joi.object({
  user: Joi.string().min(1).max(255).required(),
  password: Joi.string().min(1).max(1024).required(),
  auth_url: Joi.string().uri({ scheme: ['http', 'https'] }),
  storage_url: Joi.string().uri({ scheme: ['http', 'https'] }),
});

/**
 * The reconciler's credentials by cluster name; undefined when unset (no reconciler). Problems name clusters, never
 * values.
 */
export function quotaCredentialsOf(
  config: Pick<ManagementApiConfig, 'quotaCredentials'>,
): Record<string, ResellerCredentials> | undefined {
  if (config.quotaCredentials === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(config.quotaCredentials);
  } catch {
    throw new ConfigError([
      'CAIRN_QUOTA_CREDENTIALS must be JSON: {"<cluster name>": {"user": "…", "password": "…"}}.',
    ]);
  }
  const { error, value } = Joi.object()
    .pattern(Joi.string().min(1), resellerCredentials)
    .required()
    .validate(parsed, { abortEarly: false });
  if (error)
    throw new ConfigError(
      error.details.map(
        (d) =>
          `CAIRN_QUOTA_CREDENTIALS: cluster '${String(d.path[0] ?? '')}': ${d.path.slice(1).join('.') || 'value'} is missing or invalid.`,
      ),
    );
  return value as Record<string, ResellerCredentials>;
}

/** The keyring CAIRN_S3_SECRET_KEYS describes; undefined when unset; a ConfigError that lists every problem. */
export function s3KeyringOf(
  config: Pick<ManagementApiConfig, 's3SecretKeys' | 's3CurrentKeyId'>,
): S3SecretKeyring | undefined {
  if (config.s3SecretKeys === undefined) return undefined;
  const parsed = parseS3SecretKeys(config.s3SecretKeys, config.s3CurrentKeyId);
  if (!parsed.ok) throw new ConfigError(parsed.problems);
  return parsed.keyring;
}
