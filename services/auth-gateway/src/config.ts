import { readFileSync } from 'node:fs';
import Joi from 'joi';
import {
  ConfigError,
  loadConfig,
  passwordHashConfig,
  s3KeyringConfig,
  trustProxySchema,
  type ConfigSpec,
  type Env,
  type PasswordHashSettings,
} from '@cairn/config';
import { logFormatConfig, postgresUrlWithCa, readCaFile, type LogFormat } from '@cairn/runtime';
import { parseRedisUrl, RedisUrlError } from './redis';

/** The only place auth-gateway reads the environment. Every key: env name, doc, default. */
export const configSpec = {
  host: {
    env: 'CAIRN_GATEWAY_HOST',
    doc: 'Address auth-gateway listens on.',
    schema: Joi.string().hostname().default('0.0.0.0'),
  },
  port: {
    env: 'CAIRN_GATEWAY_PORT',
    doc: 'Port auth-gateway listens on (0 picks a free one).',
    schema: Joi.number().integer().min(0).max(65535).default(5000),
  },
  cluster: {
    env: 'CAIRN_GATEWAY_CLUSTER',
    doc: "The cluster this gateway authenticates for: its id, name or uuid. Unset: 'default' (in the all-in-one `pnpm start`: the cluster named by CAIRN_DEFAULT_CLUSTER, else the only one). A running gateway follows that cluster's row by id (renames included).",
    schema: Joi.string()
      .max(255)
      .pattern(/^[^/\u0000-\u001f\u007f-\u009f]+$/u) // eslint-disable-line no-control-regex
      .message("must be a cluster id, name or uuid: 1 to 255 characters with no '/' and no control characters"),
  },
  publicUrl: {
    env: 'CAIRN_GATEWAY_PUBLIC_URL',
    doc: "Public URL of the gateway's /auth root as clients reach it (e.g. https://auth.example.com/auth); used in catalogs and discovery. Unset: the cluster's auth_url.",
    schema: Joi.string()
      .uri({ scheme: ['http', 'https'] })
      .max(2048)
      .replace(/\/+$/, ''),
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    doc: "Postgres connection URL the gateway reads clusters, storage users and S3 credentials from: the primary, or a hot standby in the gateway's region (then it follows the change log and the heartbeat there, see docs/deployment.md#regions); give it the gateway's role, not the owner's (see docs/deployment.md).",
    schema: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
    secret: true,
  },
  primaryDatabaseUrl: {
    env: 'CAIRN_PRIMARY_DATABASE_URL',
    doc: "Postgres connection URL of the primary, where the gateway's few writes go (the OS-EC2 API's S3 credentials and their audit records; its list and show read there too, to see their own writes). While it is unreachable those answer 503 and logins and token validation carry on from DATABASE_URL. Unset: DATABASE_URL.",
    schema: Joi.string().uri({ scheme: ['postgres', 'postgresql'] }),
    secret: true,
  },
  databaseCaFile: {
    env: 'CAIRN_DATABASE_CA_FILE',
    doc: "PEM file of the CA that signed Postgres' server certificate. Set: connections (DATABASE_URL and CAIRN_USER_NOTICES_URL) use TLS and verify the certificate and the URL's host name with it (sslmode=verify-full, unless the URL sets its own sslmode). The URLs' own sslmode and sslrootcert work too.",
    schema: Joi.string(),
  },
  userNoticesUrl: {
    env: 'CAIRN_USER_NOTICES_URL',
    doc: "Postgres URL of a direct session on the primary where the gateway LISTENs for user changes, so logins can skip reading each user's row (PgBouncer in transaction mode cannot carry LISTEN). Unset: DATABASE_URL. `off`: every login reads its row from Postgres. Not used when DATABASE_URL is a hot standby: the gateway then follows the change log there.",
    schema: Joi.alternatives().try(Joi.string().valid('off'), Joi.string().uri({ scheme: ['postgres', 'postgresql'] })),
    secret: true,
  },
  standbyMaxLag: {
    env: 'CAIRN_STANDBY_MAX_LAG',
    doc: 'Seconds a gateway reading a hot standby lets its copy fall behind the primary (measured by the heartbeat the management API writes every second) before CAIRN_STANDBY_STALE applies. A user disabled on the primary can still log in here for up to this long while the copy is behind. Ignored on the primary.',
    schema: Joi.number()
      .min(1)
      .max(30 * 86400)
      .default(5),
  },
  standbyStale: {
    env: 'CAIRN_STANDBY_STALE',
    doc: "What a gateway reading a hot standby does while its copy is more than CAIRN_STANDBY_MAX_LAG behind (a cut link to the primary, a paused or slow replay): 'refuse' answers 503 on every auth route and /readyz fails, so no change made on the primary meanwhile (a user disabled, deleted, its password changed) is missed; 'serve' keeps logging users in and validating tokens from the copy as it is, so logins survive a long cut but such changes wait until the link is back. Back within the limit, it serves again by itself.",
    schema: Joi.string().valid('refuse', 'serve').default('refuse'),
  },
  redisUrl: {
    env: 'REDIS_URL',
    doc: 'Redis for the token store: one server `redis://[user:pass@]host[:6379][/db]`, a Redis Cluster `redis+cluster://[user:pass@]host1:port1,host2:port2`, or a Sentinel set `redis+sentinel://[user:pass@]sentinel1:26379,sentinel2:26379/<master-name>[/db][?sentinel_username=…&sentinel_password=…]`; `rediss…` for TLS. Unset: tokens in process memory (one instance only).',
    schema: Joi.string()
      .max(4096)
      .custom((value: string, helpers) => {
        try {
          parseRedisUrl(value);
          return value;
        } catch (e) {
          if (!(e instanceof RedisUrlError)) throw e;
          return helpers.error('redisUrl.invalid', { reason: e.message });
        }
      })
      .messages({ 'redisUrl.invalid': 'is not a usable Redis URL: {#reason}' }),
    secret: true,
  },
  redisCaFile: {
    env: 'CAIRN_REDIS_CA_FILE',
    doc: "PEM file of the CA that signed Redis' certificates (servers, and sentinels with rediss+sentinel://), for a REDIS_URL that uses TLS (rediss…); the certificate must name the host the URL connects to. Unset: the system's CAs.",
    schema: Joi.string(),
  },

  storageUrl: {
    env: 'CAIRN_GATEWAY_STORAGE_URL',
    doc: "Swift proxy base URL handed out (…/v1); accounts are <this>/AUTH_<user>. Unset: the cluster's storage_url.",
    schema: Joi.string()
      .uri({ scheme: ['http', 'https'] })
      .max(2048)
      .replace(/\/+$/, ''),
  },
  signingKey: {
    env: 'CAIRN_GATEWAY_SIGNING_KEY',
    doc: "Key that signs this cluster's tokens (≥ 32 characters), shared by its replicas. Unset: one random key per cluster, kept in Redis (or in memory without Redis).",
    schema: Joi.string().min(32).max(1024),
    secret: true,
  },
  tokenLifetime: {
    env: 'CAIRN_TOKEN_LIFETIME',
    doc: 'Token lifetime in seconds.',
    schema: Joi.number()
      .integer()
      .min(60)
      .max(30 * 86400)
      .default(86400),
  },
  tokensPerUser: {
    env: 'CAIRN_TOKENS_PER_USER',
    doc: "Live tokens one storage user may hold; a new one pushes out (revokes) that user's oldest beyond it. Bounds what a client that logs in over and over, or a flood of logins, can keep in the token store. A client whose token was pushed out gets 401 and logs in again, as for an expired token.",
    schema: Joi.number().integer().min(1).max(1_000_000).default(1000),
  },
  v1TokenReuse: {
    env: 'CAIRN_V1_TOKEN_REUSE',
    doc: 'Whether a V1 login (`GET /auth/v1.0`) is handed the live token of an earlier V1 login of the same user and account, as tempauth does, instead of a new one: only while that token has at least half its lifetime left and the user (row, generation) is unchanged. false: every login gets a new token.',
    schema: Joi.boolean().default(true),
  },
  verifyCacheSeconds: {
    env: 'CAIRN_VERIFY_CACHE_SECONDS',
    doc: "How long a successful password check is remembered in memory (0 disables); keyed by an HMAC of the user's row id, generation and stored hash with the password, so a re-created user never matches.",
    schema: Joi.number().integer().min(0).max(3600).default(60),
  },
  userCacheMs: {
    env: 'CAIRN_USER_CACHE_MS',
    doc: 'How long a user row read from Postgres (enabled flag, generation) may be used before reading it again; a change notice drops it sooner. Token validation uses it freely, logins only behind the notice fence (see docs/auth-gateway.md).',
    schema: Joi.number().integer().min(0).max(1000).default(250),
  },
  failureLimit: {
    env: 'CAIRN_LOGIN_FAILURE_LIMIT',
    doc: 'Failed logins allowed per username from one client address (IPv6: per /64) within the window; past it the gateway answers 429 to that address for that username, even with the right password. Other addresses are not affected: a guesser cannot lock the owner out.',
    schema: Joi.number().integer().min(1).max(100000).default(10),
  },
  failureWindow: {
    env: 'CAIRN_LOGIN_FAILURE_WINDOW',
    doc: 'The window, in seconds, over which failed logins per username and client address are counted.',
    schema: Joi.number().integer().min(1).max(86400).default(300),
  },
  addressFailureLimit: {
    env: 'CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT',
    doc: 'Failed logins allowed per client address (IPv6: per /64) within its window, whatever the usernames; past it the gateway answers 429 to that address. High enough for an office behind one NAT address.',
    schema: Joi.number().integer().min(1).max(1000000).default(100),
  },
  addressFailureWindow: {
    env: 'CAIRN_LOGIN_ADDRESS_FAILURE_WINDOW',
    doc: 'The window, in seconds, over which failed logins per client address are counted.',
    schema: Joi.number().integer().min(1).max(86400).default(300),
  },
  userFailureLimit: {
    env: 'CAIRN_LOGIN_USER_FAILURE_LIMIT',
    doc: 'Failed logins allowed per username from all addresses together within its window, not counting addresses the user has logged in from (see CAIRN_LOGIN_KNOWN_ADDRESS_DAYS); past it only those addresses may still try that username, all others get 429. Bounds guessing spread over many addresses (see SECURITY.md).',
    schema: Joi.number().integer().min(1).max(10000000).default(100),
  },
  userFailureWindow: {
    env: 'CAIRN_LOGIN_USER_FAILURE_WINDOW',
    doc: 'The window, in seconds, over which failed logins per username from all addresses are counted.',
    schema: Joi.number()
      .integer()
      .min(1)
      .max(30 * 86400)
      .default(3600),
  },
  knownAddressDays: {
    env: 'CAIRN_LOGIN_KNOWN_ADDRESS_DAYS',
    doc: 'How long, in days, an address (IPv6: a /64) a user logged in from stays exempt from CAIRN_LOGIN_USER_FAILURE_LIMIT for that user; each login from it renews it.',
    schema: Joi.number().integer().min(1).max(365).default(30),
  },
  ...passwordHashConfig,
  ...s3KeyringConfig,
  s3tokensRequireServiceToken: {
    env: 'CAIRN_S3TOKENS_REQUIRE_SERVICE_TOKEN',
    doc: "Whether `POST /v3/s3tokens` requires X-Auth-Token of a superuser (the Swift proxy's service user), as Keystone does. Set false for Swift releases whose s3token cannot send one (those without the s3tokens service-auth fix): then anyone who reaches the gateway can ask whether a signature is right (see SECURITY.md).",
    schema: Joi.boolean().default(true),
  },
  ec2ChangeLimit: {
    env: 'CAIRN_EC2_CHANGE_LIMIT',
    doc: 'S3 credential changes (creations and deletions together) one storage user may make through the OS-EC2 API within CAIRN_EC2_CHANGE_WINDOW; past it the gateway answers 429 with Retry-After. Each change writes an audit record: this bounds how fast one user can add to the audit trail.',
    schema: Joi.number().integer().min(1).max(100000).default(20),
  },
  ec2ChangeWindow: {
    env: 'CAIRN_EC2_CHANGE_WINDOW',
    doc: "The window, in seconds, over which one storage user's OS-EC2 credential changes are counted (fixed, opened by its first change).",
    schema: Joi.number()
      .integer()
      .min(1)
      .max(30 * 86400)
      .default(3600),
  },
  trustProxy: {
    env: 'CAIRN_TRUST_PROXY',
    doc: "Which X-Forwarded-For entries name the client (for the per-address login limit): 'false' (the socket's address), a hop count of trusted proxies in front, or a comma-separated list of the load balancers' addresses or CIDR ranges (also loopback, linklocal, uniquelocal). 'true' is refused: any client could then choose its address.",
    schema: trustProxySchema().default(false),
  },
  poolMax: {
    env: 'DATABASE_POOL_MAX',
    doc: 'Postgres connections per gateway process.',
    schema: Joi.number().integer().min(1).max(200).default(10),
  },
  startupTimeout: {
    env: 'CAIRN_STARTUP_TIMEOUT',
    doc: 'Seconds to keep retrying Postgres, the cluster row and Redis at start (capped backoff, each failure logged) before exiting 1; 0: fail at once.',
    schema: Joi.number().integer().min(0).max(3600).default(60),
  },
  logLevel: {
    env: 'LOG_LEVEL',
    doc: 'pino log level.',
    schema: Joi.string().valid('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent').default('info'),
  },
  logFormat: logFormatConfig,
} satisfies ConfigSpec;

export interface GatewayConfig extends PasswordHashSettings {
  host: string;
  port: number;
  /** Unset: DEFAULT_CLUSTER (deps.ts), or the launcher's choice. */
  cluster?: string;
  /** Without a trailing slash. */
  publicUrl?: string;
  /** With databaseCaFile, readConfig has added it to this URL and userNoticesUrl (sslrootcert, sslmode). */
  databaseUrl?: string;
  databaseCaFile?: string;
  /** Unset: the gateway writes through DATABASE_URL. */
  primaryDatabaseUrl?: string;
  /** Seconds. */
  standbyMaxLag: number;
  standbyStale: 'refuse' | 'serve';
  /** `off`, a Postgres URL, or unset (then DATABASE_URL). */
  userNoticesUrl?: string;
  redisUrl?: string;
  redisCaFile?: string;
  /** The PEM text of redisCaFile, read by readConfig. */
  redisCa?: string;
  /** Without a trailing slash. */
  storageUrl?: string;
  signingKey?: string;
  tokenLifetime: number;
  tokensPerUser: number;
  v1TokenReuse: boolean;
  verifyCacheSeconds: number;
  userCacheMs: number;
  failureLimit: number;
  failureWindow: number;
  addressFailureLimit: number;
  addressFailureWindow: number;
  userFailureLimit: number;
  userFailureWindow: number;
  knownAddressDays: number;
  s3SecretKeys?: string;
  s3CurrentKeyId?: string;
  s3tokensRequireServiceToken: boolean;
  ec2ChangeLimit: number;
  /** Seconds. */
  ec2ChangeWindow: number;
  /** express's `trust proxy`: false, a hop count, or the trusted proxies' addresses/ranges. */
  trustProxy: false | number | string[];
  poolMax: number;
  /** Seconds start-up retries Postgres and Redis before giving up. */
  startupTimeout: number;
  logLevel: string;
  logFormat: LogFormat;
}

/** Reads and validates the whole configuration at once; throws a ConfigError listing every problem. */
export function readConfig(env: Env = process.env): GatewayConfig {
  const config = loadConfig<GatewayConfig>(configSpec, env, (p) => readFileSync(p, 'utf8'));
  if (config.databaseCaFile !== undefined) {
    const ca = readCaFile('CAIRN_DATABASE_CA_FILE', config.databaseCaFile);
    if ('problem' in ca) throw new ConfigError([ca.problem]);
    if (config.databaseUrl) config.databaseUrl = postgresUrlWithCa(config.databaseUrl, config.databaseCaFile);
    if (config.userNoticesUrl && config.userNoticesUrl !== 'off')
      config.userNoticesUrl = postgresUrlWithCa(config.userNoticesUrl, config.databaseCaFile);
  }
  if (config.redisCaFile !== undefined) {
    if (!config.redisUrl || !/^rediss/i.test(config.redisUrl))
      throw new ConfigError([
        'CAIRN_REDIS_CA_FILE is set, but REDIS_URL does not use TLS: use rediss://, rediss+cluster:// or rediss+sentinel://.',
      ]);
    const ca = readCaFile('CAIRN_REDIS_CA_FILE', config.redisCaFile);
    if ('problem' in ca) throw new ConfigError([ca.problem]);
    config.redisCa = ca.pem;
  }
  return config;
}
