import { createDeps, type createLogger, readConfig, startAuthGateway } from '@cairn/auth-gateway';
import { announceListening } from './children';

/**
 * Runs in a forked child: the real auth-gateway for `cluster` on a free port of 127.0.0.1, on the
 * database and Redis the parent passed (BENCH_CHILD_DATABASE_URL, BENCH_CHILD_REDIS_URL), with
 * `overrides` on top, and `log` instead of its logger on stdout when given. Every bench load comes
 * from 127.0.0.1, so the per-address login limit is raised unless an override says otherwise:
 * otherwise it would turn measured failures into 429s.
 */
export async function serveGateway(
  cluster: string,
  overrides: Record<string, string> = {},
  log?: ReturnType<typeof createLogger>,
): Promise<void> {
  const config = readConfig({
    CAIRN_GATEWAY_HOST: '127.0.0.1',
    CAIRN_GATEWAY_PORT: '0',
    CAIRN_GATEWAY_CLUSTER: cluster,
    DATABASE_URL: process.env.BENCH_CHILD_DATABASE_URL,
    REDIS_URL: process.env.BENCH_CHILD_REDIS_URL,
    LOG_LEVEL: 'warn',
    CAIRN_LOGIN_ADDRESS_FAILURE_LIMIT: '100000',
    ...overrides,
  });
  const deps = await createDeps(config, log ? { log } : {});
  const running = await startAuthGateway(config, deps);
  announceListening(running.port, async () => {
    running.server.closeAllConnections();
    await running.close();
  });
}
