import { spawn, type ChildProcess } from 'node:child_process';
import { PROCESS_ENV, REPO_ROOT, freePort, nodeCommand } from '../../support/processes';

export const ADMIN_NAME = 'faults';
export const ADMIN_KEY = 'faults-admin-key-0123456789abcdefghijklmnop';
export const ADMIN_AUTH = `ApiKey ${ADMIN_NAME}:${ADMIN_KEY}`;

/** One service as a real process (its own server.ts), so it can be killed like in production. */
export interface Service {
  url: string;
  child: ChildProcess;
  output: () => string;
  /** SIGTERM and wait for the exit. */
  stop: () => Promise<void>;
  /** SIGKILL: no shutdown hook runs, in-flight requests and transactions are cut off. */
  kill: () => Promise<void>;
}

async function launch(entry: string, env: Record<string, string>, port: number): Promise<Service> {
  // The server itself is the child (see nodeCommand): a SIGKILL must reach the server process.
  const [node, args] = nodeCommand(entry);
  const child = spawn(node, args, {
    cwd: REPO_ROOT,
    env: { ...PROCESS_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // Keep the tail only: a long outage logs a warning per refused request.
  const keep = (d: Buffer) => (out = (out + d.toString()).slice(-200_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${entry} exited early:\n${out}`);
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`${entry} did not come up:\n${out}`);
    }
    const up = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) }).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      await exited;
    }
  };
  return { url, child, output: () => out, stop: () => end('SIGTERM'), kill: () => end('SIGKILL') };
}

/** management-api on `databaseUrl`: migrates, creates the default cluster and the admin operator. */
export async function launchApi(databaseUrl: string): Promise<Service> {
  const port = await freePort();
  return launch(
    'services/management-api/src/server.ts',
    {
      DATABASE_URL: databaseUrl,
      CAIRN_API_HOST: '127.0.0.1',
      CAIRN_API_PORT: String(port),
      CAIRN_ADMIN_USER: ADMIN_NAME,
      CAIRN_ADMIN_KEY: ADMIN_KEY,
    },
    port,
  );
}

/** auth-gateway for the default cluster, its tokens in the Redis at `redisUrl`; `env` adds settings. */
export async function launchGateway(
  databaseUrl: string,
  redisUrl: string,
  env: Record<string, string> = {},
): Promise<Service> {
  const port = await freePort();
  return launch(
    'services/auth-gateway/src/server.ts',
    {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      CAIRN_GATEWAY_HOST: '127.0.0.1',
      CAIRN_GATEWAY_PORT: String(port),
      CAIRN_GATEWAY_CLUSTER: 'default',
      // The load logs one user in thousands of times over a run and checks every token it was
      // handed: the per-user cap (1000 by default) would push the oldest out, which is not what
      // these tests are about.
      CAIRN_TOKENS_PER_USER: '1000000',
      // The ledger holds each login's token as that login's own, live until that login's revoke.
      // Handing a V1 login the user's live token (tempauth's way) breaks that: a login racing a
      // revoke of the shared token can answer with it (SECURITY.md, known limits).
      CAIRN_V1_TOKEN_REUSE: 'false',
      ...env,
    },
    port,
  );
}
