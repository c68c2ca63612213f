import type { Server } from 'node:http';
import {
  closeGracefully,
  exitOnSignals,
  isTlsFailure,
  listen,
  logsAreJson,
  retryStartup,
  TlsFailure,
} from '@cairn/runtime';
import { ConfigError } from '@cairn/config';
import { quotaCredentialsOf, readConfig, type ManagementApiConfig } from './config';
import { createApp } from './app';
import { bootstrap } from './bootstrap';
import { migrateLatest, isEmbedded } from './db/database';
import { createDeps, type Deps } from './deps';
import { createApiMetrics } from './http/metrics';
import { heartbeat, runMaintenance } from './maintenance';
import { QuotaReconciler } from './services/quota-reconciler';
import { unopenableSecrets, type UnopenableSecrets } from './services/s3-credentials';

/**
 * Utilization partitions, rollups and retention, and the audit trail's retention, are kept up by every replica (runs
 * are idempotent).
 */
const MAINTENANCE_MS = 15 * 60_000;

export interface RunningApi {
  server: Server;
  port: number;
  /** Set when this start created the first admin: the caller prints it once (never logs it). */
  generatedAdmin?: { name: string; key: string };
  /**
   * Graceful: see closeGracefully; `idleGraceMs` bounds how long idle keep-alive connections are left to their clients.
   */
  close: (idleGraceMs?: number) => Promise<void>;
}

/** The one-time banner for a generated admin key, printed on the terminal, not through the logger. */
export const adminKeyBanner = (admin: { name: string; key: string }): string =>
  `\nFirst admin operator created. Its API key is shown only now:\n\n  Authorization: ApiKey ${admin.name}:${admin.key}\n\n`;

/**
 * Refused at start: the database holds S3 secrets that the configured keys cannot open. Serving
 * anyway would fail every signature of those credentials (and say so only at their first use);
 * the start stops instead, naming each key id and what to set.
 */
export class UnopenableSecretsError extends ConfigError {
  constructor(readonly unopenable: UnopenableSecrets[]) {
    super(unopenable.map(unopenableProblem));
  }
}

function unopenableProblem(u: UnopenableSecrets): string {
  const held = `The database holds ${u.credentials} S3 credential(s) whose secret is sealed under key id '${u.keyId}'`;
  if (u.why === 'other-key')
    return `${held}, and they do not open under the key CAIRN_S3_SECRET_KEYS gives that id (it is another key than the one they were sealed with): set '${u.keyId}' to the key they were sealed with (docs/s3.md) and start again. Nothing was changed.`;
  return `${held}, which is not in CAIRN_S3_SECRET_KEYS: add that key (the one in use when they were sealed, docs/s3.md) and start again. Nothing was changed.`;
}

export interface StartOptions {
  /**
   * The first maintenance pass waits for this. The all-in-one launcher resolves it a while after
   * its banner: on embedded PGlite's one connection, the pass (partitions, rollups, retention)
   * would otherwise run ahead of the gateway's start and the first requests, which do not need it.
   */
  maintenanceAfter?: Promise<unknown>;
}

/** Migrates (when configured), checks the S3 keys, bootstraps, and listens. The caller owns signal handling. */
export async function startManagementApi(
  config: ManagementApiConfig,
  deps: Deps,
  options: StartOptions = {},
): Promise<RunningApi> {
  const { db, log } = deps;
  // Postgres may come up after us (and, with CAIRN_MIGRATE_ON_START=false, the migrate job later
  // still): the whole preparation is retried until CAIRN_STARTUP_TIMEOUT. Migrations are
  // transactional and bootstrap is idempotent, so a retry after a half-way failure is safe.
  // Embedded PGlite has no server to wait for: its errors are final.
  const boot = await retryStartup(
    'database preparation',
    async () => {
      try {
        if (config.migrateOnStart) {
          const applied = await migrateLatest(db);
          if (applied.length) log.info({ applied }, 'migrations applied');
        }
        const unopenable = await unopenableSecrets(db, deps.s3Keyring);
        if (unopenable.length > 0) throw new UnopenableSecretsError(unopenable);
        return await bootstrap(db, config);
      } catch (e) {
        throw isTlsFailure(e)
          ? new TlsFailure('Postgres', 'CAIRN_DATABASE_CA_FILE (or sslrootcert in DATABASE_URL)', e)
          : e;
      }
    },
    // A certificate that does not verify will not verify on the next try either: stop at once.
    {
      log,
      deadlineMs: isEmbedded(db) ? 0 : config.startupTimeout * 1000,
      isFatal: (e) => e instanceof ConfigError || e instanceof TlsFailure,
    },
  );
  if (boot.createdCluster) log.info({ cluster: boot.createdCluster }, 'default cluster created');
  const metrics = deps.metrics ?? createApiMetrics(db);
  const app = createApp({ ...deps, metrics });
  const { server, port } = await listen(app, config.port, config.host);
  let closed = false;
  const maintain = () => void runMaintenance({ ...deps, metrics }, new Date());
  const first = () => (closed ? undefined : maintain());
  void Promise.resolve(options.maintenanceAfter).then(first, first);
  const maintenance = setInterval(maintain, MAINTENANCE_MS);
  maintenance.unref();
  // The embedded database has no standby to measure.
  const beat = config.heartbeatMs > 0 && !isEmbedded(db) ? heartbeat(deps) : undefined;
  const heartbeats = beat ? setInterval(() => void beat(), config.heartbeatMs) : undefined;
  heartbeats?.unref();
  const quotas = quotaReconcilerOf(config, deps);
  quotas?.start();
  log.info(
    { port, database: isEmbedded(db) ? 'embedded PGlite' : 'postgres', quotaReconciler: quotas !== undefined },
    'management-api listening',
  );
  return {
    server,
    port,
    generatedAdmin: boot.generatedAdmin,
    close: async (idleGraceMs?: number) => {
      closed = true;
      clearInterval(maintenance);
      await quotas?.stop();
      clearInterval(heartbeats);
      // As the gateway: in-flight requests finish, idle keep-alive connections are not reset.
      await closeGracefully(server, idleGraceMs);
      await db.destroy();
    },
  };
}

/** The quota reconciler, when CAIRN_QUOTA_CREDENTIALS is set (docs/quotas.md). */
function quotaReconcilerOf(config: ManagementApiConfig, deps: Deps): QuotaReconciler | undefined {
  const credentials = quotaCredentialsOf(config);
  if (!credentials) return undefined;
  return new QuotaReconciler({
    db: deps.db,
    log: deps.log,
    credentials,
    sessionUrl: isEmbedded(deps.db) ? undefined : (config.quotaSessionUrl ?? config.databaseUrl),
    resyncMs: config.quotaResyncSeconds * 1000,
    pollMs: config.quotaPollMs,
    concurrency: config.quotaConcurrency,
    timeoutMs: config.quotaTimeoutMs,
  });
}

async function main(): Promise<void> {
  const config = readConfig();
  const deps = createDeps(config);
  const running = await startManagementApi(config, deps);
  // Deliberately not the logger: logs are shipped and kept, this key must not be. Not among JSON
  // log lines either (stdout stays one JSON object per line): then on stderr.
  const banner = logsAreJson(config.logFormat, process.stdout.isTTY === true) ? process.stderr : process.stdout;
  if (running.generatedAdmin) banner.write(adminKeyBanner(running.generatedAdmin));
  exitOnSignals(running.close, deps.log);
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
