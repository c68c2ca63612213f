import { readFileSync } from 'node:fs';
import Joi from 'joi';
import { ConfigError, loadConfig, s3KeyringConfig, type ConfigSpec, type Env } from '@cairn/config';
import { logFormatConfig, type LogFormat } from '@cairn/runtime';
import { apiKeySchema, clusterCreateSchema, operatorNameSchema, parseS3SecretKeys, type S3SecretKeyring } from '@cairn/domain';

/** The default cluster obeys the API's own rules for a cluster, checked before anything starts. */
const clusterField = (key: 'name' | 'auth_url' | 'storage_url', env: string) => (clusterCreateSchema.extract(key) as Joi.StringSchema).optional().label(env);

/** The only place management-api reads the environment. Every key: env name, doc, default. */
export const configSpec = {
  host: { env: 'CAIRN_API_HOST', doc: 'Address management-api listens on.', schema: Joi.string().default('0.0.0.0') },
  port: { env: 'CAIRN_API_PORT', doc: 'Port management-api listens on (0 picks a free one).', schema: Joi.number().integer().min(0).max(65535).default(8000) },
  databaseUrl: {
    env: 'DATABASE_URL',
    doc: 'Postgres connection URL. Unset: embedded PGlite with data under CAIRN_DATA_DIR.',
    schema: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
    secret: true,
  },
  dataDir: { env: 'CAIRN_DATA_DIR', doc: 'Where embedded PGlite keeps its data (only without DATABASE_URL).', schema: Joi.string().default('./data/pglite') },
  poolMax: { env: 'DATABASE_POOL_MAX', doc: 'Postgres connections per process.', schema: Joi.number().integer().min(1).max(200).default(10) },
  migrateOnStart: { env: 'CAIRN_MIGRATE_ON_START', doc: 'Apply pending migrations at start (set false when a migrate job does it).', schema: Joi.boolean().default(true) },
  adminUser: { env: 'CAIRN_ADMIN_USER', doc: 'With CAIRN_ADMIN_KEY: the first admin operator, created only while no operator exists.', schema: operatorNameSchema },
  adminKey: { env: 'CAIRN_ADMIN_KEY', doc: 'API key of CAIRN_ADMIN_USER (at least 32 printable characters).', schema: apiKeySchema, secret: true },
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
  defaultAuthUrl: { env: 'CAIRN_DEFAULT_AUTH_URL', doc: 'auth_url of that default cluster.', schema: clusterField('auth_url', 'CAIRN_DEFAULT_AUTH_URL').default('http://127.0.0.1:5000/auth') },
  defaultStorageUrl: { env: 'CAIRN_DEFAULT_STORAGE_URL', doc: 'storage_url of that default cluster (the Swift proxy, ending in /v1).', schema: clusterField('storage_url', 'CAIRN_DEFAULT_STORAGE_URL').default('http://127.0.0.1:8080/v1') },
  apiKeyCacheSeconds: {
    env: 'CAIRN_API_KEY_CACHE_SECONDS',
    doc: 'How long a replica may reuse an operator\'s key hashes before reading them again (a revoked key can work that long on other replicas; 0: read on every request).',
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
    doc: "Days the audit trail keeps storage users' own entries (S3 credentials they created or deleted through the gateway's OS-EC2 API), deleted like operators' entries but on their own clock. 0: kept for ever.",
    schema: Joi.number().integer().min(0).max(36600).default(90),
  },
  heartbeatMs: {
    env: 'CAIRN_HEARTBEAT_MS',
    doc: "How often, in milliseconds, each replica sets the one-row replication_heartbeat table to now(); a gateway reading a hot standby measures how far behind its copy is by it (see docs/deployment.md#regions), so this bounds how precisely it can. 0: no heartbeat (no gateway reads a standby).",
    schema: Joi.number().integer().min(0).max(60_000).default(1000),
  },
  ...s3KeyringConfig,
  logLevel: { env: 'LOG_LEVEL', doc: 'pino log level.', schema: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info') },
  logFormat: logFormatConfig,
} satisfies ConfigSpec;

export interface ManagementApiConfig {
  host: string;
  port: number;
  databaseUrl?: string;
  dataDir: string;
  poolMax: number;
  migrateOnStart: boolean;
  adminUser?: string;
  adminKey?: string;
  defaultCluster: string;
  createDefaultCluster: boolean;
  defaultAuthUrl: string;
  defaultStorageUrl: string;
  apiKeyCacheSeconds: number;
  /** Seconds start-up retries Postgres before giving up. */
  startupTimeout: number;
  utilizationHourlyDays: number;
  utilizationDailyDays: number;
  auditRetentionDays: number;
  auditStorageUserRetentionDays: number;
  /** Milliseconds; 0: none. */
  heartbeatMs: number;
  s3SecretKeys?: string;
  s3CurrentKeyId?: string;
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
  return config;
}

/** The keyring CAIRN_S3_SECRET_KEYS describes; undefined when unset; a ConfigError that lists every problem. */
export function s3KeyringOf(config: Pick<ManagementApiConfig, 's3SecretKeys' | 's3CurrentKeyId'>): S3SecretKeyring | undefined {
  if (config.s3SecretKeys === undefined) return undefined;
  const parsed = parseS3SecretKeys(config.s3SecretKeys, config.s3CurrentKeyId);
  if (!parsed.ok) throw new ConfigError(parsed.problems);
  return parsed.keyring;
}
