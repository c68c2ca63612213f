import pino, { type DestinationStream, type Logger } from 'pino';
import { randomBytes } from 'node:crypto';
import knex, { type Knex } from 'knex';
import { ConfigError } from '@cairn/config';
import {
  censorSecrets,
  CREDENTIAL_HEADERS,
  isTlsFailure,
  logDestination,
  retryStartup,
  TlsFailure,
  type Secrets,
} from '@cairn/runtime';
import { GatewayMetrics } from './http/metrics';
import type { GatewayConfig } from './config';
import { closeRedis, createRedis, type RedisClient } from './redis';
import { resolveCluster } from './credentials/cluster';
import { ServedCluster } from './credentials/served-cluster';
import { LoginService } from './credentials/logins';
import { UserChangeFeed } from './credentials/user-changes';
import { ChangeLogFeed, readsStandby, type StalePolicy } from './credentials/change-log';
import { UserDirectory, type UserRecord } from './credentials/users';
import { PasswordVerifier } from './credentials/verifier';
import { BcryptWorker } from './credentials/bcrypt-worker';
import { RedisTokenStore } from './tokens/redis-store';
import { TokenService } from './tokens/service';
import { MemoryTokenStore } from './tokens/memory-store';
import type { TokenStore } from './tokens/store';
import { createS3Deps, type S3Deps } from './s3/s3-deps';
import { ApplicationCredentialStore } from './app-credentials/store';
import { isCurrent } from './app-credentials/login';

/** Everything the app needs from the outside world, built once from config and passed in. */
export interface Deps {
  log: Logger;
  /** Read-only use: clusters and storage_users. */
  db: Knex;
  /** Whether close() should end `db` (false when the launcher shares its own). */
  ownsDb: boolean;
  /**
   * Where the gateway's writes go (the OS-EC2 API's credentials and audit records): the primary
   * (CAIRN_PRIMARY_DATABASE_URL), or `db` itself when that is unset.
   */
  primaryDb: Knex;
  /** Whether close() should end `primaryDb` (true only when it is a handle of its own). */
  ownsPrimaryDb: boolean;
  /** The token store's Redis connection (one server, Sentinel or Cluster); absent when REDIS_URL is unset. */
  redis?: RedisClient;
  /**
   * The cluster served: its id and uuid, and its current settings (`cluster.settings.endpoints`:
   * the public URL of the /auth root and the Swift proxy base, configured or else the row's, and
   * the region), kept current as the row changes; `deleted` once the row is gone.
   */
  cluster: ServedCluster;
  store: TokenStore;
  users: UserDirectory;
  /**
   * Keeps `users` and `cluster` told of changes as they commit (Postgres only: embedded PGlite has no second
   * connection).
   */
  userChanges?: UserChangeFeed;
  /**
   * Instead of `userChanges` when DATABASE_URL is a hot standby: the change log read there, and how
   * far behind the copy is (http/standby-gate.ts, /readyz, the lag gauge).
   */
  changeLog?: ChangeLogFeed;
  /** CAIRN_STANDBY_STALE: what the gateway does while `changeLog` says its copy is stale. */
  stalePolicy: StalePolicy;
  tokens: TokenService;
  logins: LoginService;
  /** express's `trust proxy` (CAIRN_TRUST_PROXY): which X-Forwarded-For entries name the client. */
  trustProxy?: false | number | string[];
  /** This app's Prometheus registry and the counters routes increment. */
  metrics: GatewayMetrics;
  /** S3 credentials: s3tokens and the OS-EC2 credential API (src/s3). */
  s3: S3Deps;
  /** Keystone V3 application credentials: their API, logins and the check of their tokens (src/app-credentials). */
  appCredentials: ApplicationCredentialStore;
}

/** Secrets never reach a log line, whatever logs them: credentials, tokens and connection URLs. */
export const LOGGED_SECRETS: Secrets = {
  fields: [
    'password',
    'passwordHash',
    'databaseUrl',
    'primaryDatabaseUrl',
    'redisUrl',
    'signingKey',
    // S3: a secret in an OS-EC2 answer, a sealed one, or the keys that open them.
    'secret',
    'sealedSecret',
    's3SecretKeys',
  ],
  headers: CREDENTIAL_HEADERS,
  // Keystone's password and application-credential logins, the credential's creation, and the
  // signatures of EC2 credentials (s3tokens, OS-EC2).
  bodyFields: [
    ['auth', 'passwordCredentials', 'password'],
    ['auth', 'identity', 'password', 'user', 'password'],
    ['auth', 'identity', 'application_credential', 'secret'],
    ['application_credential', 'secret'],
    ['credentials', 'signature'],
    ['credential', 'signature'],
    ['ec2Credentials', 'signature'],
  ],
};

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, formatters: { log: censorSecrets(LOGGED_SECRETS) }, base: { service: 'auth-gateway' } };
  return destination ? pino(options, destination) : pino(options);
}

/** The cluster a gateway serves when CAIRN_GATEWAY_CLUSTER is unset. */
export const DEFAULT_CLUSTER = 'default';

export interface CreateDepsOptions {
  /** A knex handle to share (the all-in-one launcher passes the management API's embedded PGlite). */
  db?: Knex;
  log?: Logger;
}

/**
 * Builds everything from config: the database (read-only use), the cluster row, the token store
 * (Redis, or memory without REDIS_URL), the signing key and the services on top of them.
 */
export async function createDeps(config: GatewayConfig, options: CreateDepsOptions = {}): Promise<Deps> {
  const log =
    options.log ?? createLogger(config.logLevel, logDestination(config.logFormat, process.stdout.isTTY === true));
  const ownsDb = !options.db;
  if (!options.db && !config.databaseUrl) {
    throw new ConfigError([
      'DATABASE_URL is required: the gateway reads the storage users of its cluster from Postgres.',
    ]);
  }
  const db =
    options.db ??
    knex({
      client: 'pg',
      connection: { connectionString: config.databaseUrl, application_name: 'cairn-auth-gateway' },
      pool: { min: 0, max: config.poolMax },
      acquireConnectionTimeout: 5000,
    });
  // Its own handle only when it names another database: a standby reads here, writes go there.
  const ownsPrimaryDb = config.primaryDatabaseUrl !== undefined && config.primaryDatabaseUrl !== config.databaseUrl;
  const primaryDb = ownsPrimaryDb
    ? knex({
        client: 'pg',
        connection: { connectionString: config.primaryDatabaseUrl, application_name: 'cairn-auth-gateway-writes' },
        pool: { min: 0, max: Math.min(config.poolMax, 4) },
        acquireConnectionTimeout: 5000,
      })
    : db;
  const redis = config.redisUrl ? createRedis(config.redisUrl, log, config.redisCa) : undefined;
  // A command that fails only says it timed out; why the connection failed comes as an event.
  let redisError: unknown;
  redis?.on('error', (e: unknown) => void (redisError = e));
  const metrics = new GatewayMetrics({ db, ...(redis ? { redis } : {}) });
  // Postgres, its tables and the cluster row (made by the migrate job) and Redis may come up after
  // us: retried until CAIRN_STARTUP_TIMEOUT. A shared handle was made ready by its owner.
  // A certificate that does not verify will not verify on the next try either: stop at once.
  const startup = {
    log,
    deadlineMs: config.startupTimeout * 1000,
    isFatal: (e: unknown) => e instanceof ConfigError || e instanceof TlsFailure,
  };
  const postgresTls =
    <T>(attempt: () => Promise<T>) =>
    () =>
      attempt().catch((e: unknown) => {
        throw isTlsFailure(e)
          ? new TlsFailure('Postgres', 'CAIRN_DATABASE_CA_FILE (or sslrootcert in DATABASE_URL)', e)
          : e;
      });
  let userChanges: UserChangeFeed | undefined;
  let changeLog: ChangeLogFeed | undefined;
  let served: ServedCluster | undefined;
  try {
    const cluster = await retryStartup(
      'cluster lookup in Postgres',
      postgresTls(() => resolveCluster(db, config.cluster ?? DEFAULT_CLUSTER)),
      {
        ...startup,
        deadlineMs: ownsDb ? startup.deadlineMs : 0,
      },
    );
    served = new ServedCluster(db, cluster, { publicUrl: config.publicUrl, storageUrl: config.storageUrl }, log);
    const store: TokenStore = redis ? new RedisTokenStore(redis, `cairn:${cluster.uuid}:`) : new MemoryTokenStore();
    if (!redis) log.warn('REDIS_URL is not set: tokens live in this process only (single instance, lost on restart)');
    if (redis) {
      const ping = () =>
        redis.ping().catch((e: unknown) => {
          throw isTlsFailure(redisError) ? new TlsFailure('Redis', 'CAIRN_REDIS_CA_FILE', redisError) : e;
        });
      await retryStartup('Redis connection', ping, startup);
    }
    const signingKey =
      config.signingKey ??
      (await retryStartup(
        'signing key in Redis',
        () => store.getOrSet('signing-key', randomBytes(32).toString('base64')),
        startup,
      ));
    const users = new UserDirectory(db, cluster.id, config.userCacheMs);
    const s3 = createS3Deps(config, { db, clusterId: cluster.id, store, log, metrics });
    const appCredentials = new ApplicationCredentialStore(db, cluster.id, config.userCacheMs, primaryDb);
    // NOTIFY never reaches a standby, and hearing the primary's before the standby has replayed the
    // change would re-read the old row: on a standby, only what was replayed there is followed.
    if (config.databaseUrl && (await retryStartup('standby check', () => readsStandby(db), startup))) {
      if (config.userNoticesUrl)
        log.info('DATABASE_URL is a hot standby: following its change log; CAIRN_USER_NOTICES_URL is not used');
      changeLog = new ChangeLogFeed(config.databaseUrl, cluster.id, users, log, {
        maxLagMs: config.standbyMaxLag * 1000,
        cluster: served,
        s3: s3.credentials,
      });
      metrics.watchStandby(changeLog);
      const feed = changeLog;
      s3.credentials.watchReplay(() => feed.replayedUpTo);
      await changeLog.start();
    } else {
      const noticesUrl = config.userNoticesUrl ?? config.databaseUrl;
      userChanges =
        noticesUrl && noticesUrl !== 'off'
          ? new UserChangeFeed(noticesUrl, cluster.id, users, log, served, s3.credentials, appCredentials)
          : undefined;
      await userChanges?.start();
    }
    // A failed replacement (a role without the grant, a database hiccup) costs the login nothing:
    // the foreign hash stays, and the next login tries again. Written to the primary.
    const replaceForeignHash = async (user: UserRecord, hash: string) => {
      try {
        const replaced = await users.replaceForeignHash(user, hash, primaryDb);
        log.info({ user: user.username, replaced }, 'imported password hash replaced by scrypt at login');
      } catch (e) {
        // The code only (42501: the role lacks EXECUTE): a driver's message may quote the statement.
        const code = (e as { code?: unknown }).code;
        log.warn(
          { user: user.username, code: typeof code === 'string' ? code : undefined },
          'could not replace an imported password hash; it is kept until the next login',
        );
      }
    };
    const verifier = new PasswordVerifier(
      config.verifyCacheSeconds,
      Date.now,
      metrics.observeKdf,
      replaceForeignHash,
      (fields, message) => log.warn(fields, message),
      new BcryptWorker().compare,
      undefined,
      config.passwordHashParams,
    );
    await verifier.warmUp();
    const tokens = new TokenService(
      store,
      users,
      signingKey,
      cluster.uuid,
      { lifetimeSeconds: config.tokenLifetime, perUser: config.tokensPerUser, reuseV1: config.v1TokenReuse },
      Date.now,
      async (id, userId) => {
        const credential = await appCredentials.findRecent(id);
        return credential !== null && credential.userId === userId && isCurrent(credential, Date.now());
      },
    );
    return {
      log,
      db,
      ownsDb,
      primaryDb,
      ownsPrimaryDb,
      ...(redis ? { redis } : {}),
      cluster: served,
      store,
      users,
      ...(userChanges ? { userChanges } : {}),
      ...(changeLog ? { changeLog } : {}),
      stalePolicy: config.standbyStale,
      tokens,
      trustProxy: config.trustProxy,
      metrics,
      s3,
      appCredentials,
      logins: new LoginService(users, verifier, store, {
        limit: config.failureLimit,
        windowMs: config.failureWindow * 1000,
        addressLimit: config.addressFailureLimit,
        addressWindowMs: config.addressFailureWindow * 1000,
        userLimit: config.userFailureLimit,
        userWindowMs: config.userFailureWindow * 1000,
        knownAddressMs: config.knownAddressDays * 86_400_000,
      }),
    };
  } catch (e) {
    served?.close();
    await userChanges?.close();
    await changeLog?.close();
    if (redis) await closeRedis(redis);
    if (ownsDb) await db.destroy();
    if (ownsPrimaryDb) await primaryDb.destroy();
    throw e;
  }
}
