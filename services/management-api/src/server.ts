import type { Server } from 'node:http';
import { closeGracefully, exitOnSignals, listen, logsAreJson, retryStartup } from '@cairn/runtime';
import { ConfigError } from '@cairn/config';
import { readConfig, type ManagementApiConfig } from './config';
import { createApp } from './app';
import { bootstrap } from './bootstrap';
import { migrateLatest, isEmbedded } from './db/database';
import { createDeps, type Deps } from './deps';
import { heartbeat, runMaintenance } from './services/maintenance';

/** Utilization partitions, rollups and retention, and the audit trail's retention, are kept up by every replica (runs are idempotent). */
const MAINTENANCE_MS = 15 * 60_000;

export interface RunningApi {
  server: Server;
  port: number;
  /** Set when this start created the first admin: the caller prints it once (never logs it). */
  generatedAdmin?: { name: string; key: string };
  /** Graceful: see closeGracefully; `idleGraceMs` bounds how long idle keep-alive connections are left to their clients. */
  close: (idleGraceMs?: number) => Promise<void>;
}

/** The one-time banner for a generated admin key, printed on the terminal, not through the logger. */
export const adminKeyBanner = (admin: { name: string; key: string }): string =>
  `\nFirst admin operator created. Its API key is shown only now:\n\n  Authorization: ApiKey ${admin.name}:${admin.key}\n\n`;

/** Migrates (when configured), bootstraps, and listens. The caller owns signal handling. */
export async function startManagementApi(config: ManagementApiConfig, deps: Deps): Promise<RunningApi> {
  const { db, log } = deps;
  // Postgres may come up after us (and, with CAIRN_MIGRATE_ON_START=false, the migrate job later
  // still): the whole preparation is retried until CAIRN_STARTUP_TIMEOUT. Migrations are
  // transactional and bootstrap is idempotent, so a retry after a half-way failure is safe.
  // Embedded PGlite has no server to wait for: its errors are final.
  const boot = await retryStartup(
    'database preparation',
    async () => {
      if (config.migrateOnStart) {
        const applied = await migrateLatest(db);
        if (applied.length) log.info({ applied }, 'migrations applied');
      }
      return bootstrap(db, config);
    },
    { log, deadlineMs: isEmbedded(db) ? 0 : config.startupTimeout * 1000, isFatal: (e) => e instanceof ConfigError },
  );
  if (boot.createdCluster) log.info({ cluster: boot.createdCluster }, 'default cluster created');
  const app = createApp(deps);
  const { server, port } = await listen(app, config.port, config.host);
  const maintain = () => void runMaintenance(deps, new Date());
  maintain();
  const maintenance = setInterval(maintain, MAINTENANCE_MS);
  maintenance.unref();
  // The embedded database has no standby to measure.
  const beat = config.heartbeatMs > 0 && !isEmbedded(db) ? heartbeat(deps) : undefined;
  const heartbeats = beat ? setInterval(() => void beat(), config.heartbeatMs) : undefined;
  heartbeats?.unref();
  log.info({ port, database: isEmbedded(db) ? 'embedded PGlite' : 'postgres' }, 'management-api listening');
  return {
    server,
    port,
    generatedAdmin: boot.generatedAdmin,
    close: async (idleGraceMs?: number) => {
      clearInterval(maintenance);
      clearInterval(heartbeats);
      // As the gateway: in-flight requests finish, idle keep-alive connections are not reset.
      await closeGracefully(server, idleGraceMs);
      await db.destroy();
    },
  };
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
