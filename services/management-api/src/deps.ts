import type { Knex } from 'knex';
import pino, { type DestinationStream, type Logger } from 'pino';
import { censorSecrets, CREDENTIAL_HEADERS, logDestination, type Secrets } from '@cairn/runtime';
import { hashPassword, type S3SecretKeyring, type UtilizationRetention } from '@cairn/domain';
import { s3KeyringOf, type ManagementApiConfig } from './config';
import { createDatabase } from './db/database';
import { builtConsoleDir } from './http/console';
import type { AuditRetention } from './repositories/audit-retention';
import type { ConsoleSessionSettings } from './services/console-sessions';
import type { TrustProxy } from '@cairn/config';
import { createApiMetrics, type ApiMetrics } from './http/metrics';

/** Everything the app needs from the outside world, built once from config and passed in. */
export interface Deps {
  db: Knex;
  log: Logger;
  hashPassword: (password: string) => Promise<string>;
  /** How long an operator's key hashes may be reused without reading them again. */
  apiKeyCacheMs: number;
  /** Utilization retention; defaults (90 days hourly, 1095 days daily) when absent. */
  utilization?: UtilizationRetention;
  /** Audit trail retention; defaults (730 days for operators' entries, 90 for storage users') when absent. */
  auditRetention?: AuditRetention;
  /**
   * Accounts a utilization CSV export reads per query; default 5000 (tests cross batch boundaries with a small one).
   */
  utilizationExportBatch?: number;
  /** This app's Prometheus registry; createApp makes one when absent (tests building deps by hand). */
  metrics?: ApiMetrics;
  /** The console's built files, served under /console/; absent: /console/ says it is not built. */
  consoleDir?: string;
  /**
   * How long console sessions (and their step-ups) live; defaults (30 minutes idle, 12 hours at most, 5 minutes)
   * when absent.
   */
  consoleSessions?: ConsoleSessionSettings;
  /** The longest temporary URL lifetime a storage user may ask for (CAIRN_TEMP_URL_MAX_SECONDS); default 7 days. */
  tempUrlMaxSeconds?: number;
  /** express's `trust proxy` (CAIRN_TRUST_PROXY): whose X-Forwarded-Proto/-For to believe; default none. */
  trustProxy?: TrustProxy;
  /**
   * Seals the secrets of new S3 credentials; absent: creating one is refused with a sentence that says what to
   * configure.
   */
  s3Keyring?: S3SecretKeyring;
}

/** Secrets never reach a log line, whatever logs them. */
export const LOGGED_SECRETS: Secrets = {
  fields: [
    'password',
    'password_hash',
    'key_hash',
    'api_key',
    'key',
    'adminKey',
    'databaseUrl',
    'secret',
    's3SecretKeys',
    'quotaCredentials',
    'quotaSessionUrl',
  ],
  headers: CREDENTIAL_HEADERS,
};

/** `destination`: where lines go (default stdout); tests pass a LogCapture to read them back. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, formatters: { log: censorSecrets(LOGGED_SECRETS) }, base: { service: 'management-api' } };
  return destination ? pino(options, destination) : pino(options);
}

export function createDeps(config: ManagementApiConfig): Deps {
  const s3Keyring = s3KeyringOf(config);
  const log = createLogger(config.logLevel, logDestination(config.logFormat, process.stdout.isTTY === true));
  const db = createDatabase({
    url: config.databaseUrl,
    dataDir: config.dataDir,
    poolMax: config.poolMax,
    preparedStatements: config.preparedStatements,
    onModesRestricted: (dir, { directories, files }) =>
      log.warn(
        { dataDir: dir, directories, files },
        `the embedded data directory was open to other users: ${directories} directories made 0700 and ${files} files made 0600 (its owner's only)`,
      ),
  });
  return {
    db,
    log,
    hashPassword: (password) => hashPassword(password, config.passwordHashParams),
    apiKeyCacheMs: config.apiKeyCacheSeconds * 1000,
    utilization: { hourlyDays: config.utilizationHourlyDays, dailyDays: config.utilizationDailyDays },
    auditRetention: { operatorDays: config.auditRetentionDays, storageUserDays: config.auditStorageUserRetentionDays },
    metrics: createApiMetrics(db),
    consoleDir: builtConsoleDir(),
    consoleSessions: {
      idleSeconds: config.consoleSessionIdleSeconds,
      maxSeconds: config.consoleSessionMaxSeconds,
      stepUpSeconds: config.consoleStepUpSeconds,
    },
    tempUrlMaxSeconds: config.tempUrlMaxSeconds,
    trustProxy: config.trustProxy,
    ...(s3Keyring ? { s3Keyring } : {}),
  };
}
