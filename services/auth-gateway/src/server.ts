import type { Server } from 'node:http';
import { closeGracefully, exitOnSignals, listen } from '@cairn/runtime';
import { createApp } from './app';
import { readConfig, type GatewayConfig } from './config';
import { createDeps, type Deps } from './deps';
import { keystoneErrorBody } from './http/errors';
import { closeRedis } from './redis';

export interface RunningGateway {
  server: Server;
  port: number;
  /**
   * Graceful: see closeGracefully; `idleGraceMs` bounds how long idle keep-alive connections are left to their clients.
   */
  close: (idleGraceMs?: number) => Promise<void>;
}

/** Listens on the configured address. The caller owns signal handling; close() also ends Redis. */
export async function startAuthGateway(config: GatewayConfig, deps: Deps): Promise<RunningGateway> {
  const { log, redis } = deps;
  const app = createApp(deps);
  const { server, port } = await listen(app, config.port, config.host, { errorBody: keystoneErrorBody });
  log.info(
    {
      host: config.host,
      port,
      cluster: deps.cluster.settings.name,
      publicUrl: deps.cluster.settings.endpoints.authUrl,
      storageUrl: deps.cluster.settings.endpoints.storageUrl,
      tokenStore: deps.store.kind,
    },
    'auth-gateway listening',
  );
  return {
    server,
    port,
    close: async (idleGraceMs?: number) => {
      // Stops accepting, lets requests in flight finish, and hands idle keep-alive connections
      // back to their clients before closing them (no reset under a balancer's reused connection).
      await closeGracefully(server, idleGraceMs);
      await deps.userChanges?.close();
      await deps.changeLog?.close();
      deps.cluster.close();
      if (redis) await closeRedis(redis);
      if (deps.ownsDb) await deps.db.destroy();
      if (deps.ownsPrimaryDb) await deps.primaryDb.destroy();
    },
  };
}

async function main(): Promise<void> {
  const config = readConfig();
  const deps = await createDeps(config);
  const running = await startAuthGateway(config, deps);
  exitOnSignals(running.close, deps.log);
}

if (require.main === module) {
  main().catch((e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}
