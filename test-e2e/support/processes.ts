import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import type { ScryptParams } from '@cairn/domain';
import { reservePort } from './ports';

export const REPO_ROOT = join(__dirname, '..', '..');

/**
 * Cheap scrypt parameters: a user made or a password login costs milliseconds instead of half a
 * second of CPU. Hashing's cost is tested where it is made (the domain's and the gateway's tests),
 * and a test that is not about it should not pay it on every user and login.
 */
export const CHEAP_HASH_PARAMS: ScryptParams = { logN: 10, r: 8, p: 1 };

/**
 * What every process a test starts gets beneath the test's own settings: a PATH and HOME, warnings
 * only, and CHEAP_HASH_PARAMS as CAIRN_PASSWORD_HASH_PARAMS (a test about hashing sets its own).
 */
export const PROCESS_ENV: Readonly<Record<string, string>> = {
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '/tmp',
  LOG_LEVEL: 'warn',
  CAIRN_PASSWORD_HASH_PARAMS: `ln=${CHEAP_HASH_PARAMS.logN},r=${CHEAP_HASH_PARAMS.r},p=${CHEAP_HASH_PARAMS.p}`,
};

/**
 * The command line that runs one of the workspace's programs, given by its source path relative to
 * the repository (e.g. `services/auth-gateway/src/server.ts`): plain node on the built
 * `<package>/dist/….js`, what the images run. The e2e suites' globalSetup (build-dist.js) builds
 * dist/ before any test starts, so it is never stale; no TypeScript loader is involved, and a
 * SIGKILL reaches the program itself.
 */
export function nodeCommand(sourcePath: string, root = REPO_ROOT): [string, string[]] {
  const built = join(root, sourcePath.replace(/(^|\/)src\//, '$1dist/').replace(/\.ts$/, '.js'));
  return [process.execPath, ['--enable-source-maps', built]];
}

const CLI = 'packages/cli/src/main.ts';

export interface Launched {
  child: ChildProcess;
  output: () => string;
  apiUrl: string;
  /** Empty while the gateway waits for a cluster. */
  gatewayUrl: string;
  /** "ApiKey admin:…" when this start generated the first admin, else undefined. */
  adminAuth?: string;
  /** Resolves with the first match of `pattern` in the output, waiting for it up to `timeoutMs`. */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpExecArray>;
  stop: () => Promise<number | null>;
}

/**
 * Headers for a test's own requests to a launched process. A stop waits for the connections left
 * open to end (closeGracefully leaves idle keep-alive connections to their client, up to 5 s), and
 * fetch keeps an idle one 3 s, node's http agent (supertest) 5: `Connection: close` leaves none,
 * so a stop right after a request takes a fraction of a second instead of seconds of waiting.
 */
export const NO_KEEP_ALIVE = { Connection: 'close' } as const;

/** The banner's line for a gateway that serves: the launch is ready once it is printed. */
export const GATEWAY_LINE = /auth gateway\s+(http:\/\/\S+)\/auth\//;

/**
 * Runs `cairn start` (what `pnpm start` runs) as a real process and waits for its banner: by
 * default for the gateway's line (`ready` names another, e.g. the management API's).
 */
export async function launch(
  env: Record<string, string>,
  timeoutMs = 60_000,
  ready: RegExp = GATEWAY_LINE,
): Promise<Launched> {
  const [node, args] = nodeCommand(CLI);
  const child = spawn(node, [...args, 'start'], {
    cwd: REPO_ROOT,
    env: {
      ...PROCESS_ENV,
      CAIRN_API_PORT: '0',
      CAIRN_GATEWAY_PORT: '0',
      CAIRN_API_HOST: '127.0.0.1',
      CAIRN_GATEWAY_HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    // A start that never came up is killed: left running, it would keep jest from exiting.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`cairn start did not come up:\n${out}`));
    }, timeoutMs);
    const check = () => {
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    // The banner is on stdout after readable logs, on stderr when stdout carries JSON lines.
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`cairn start exited early:\n${out}`));
    });
  });
  const apiUrl = /management API\s+(http:\/\/\S+)\/api\/v1\//.exec(out)![1]!;
  const gatewayUrl = GATEWAY_LINE.exec(out)?.[1] ?? '';
  const admin = /Authorization: (ApiKey \S+:\S+)\n/.exec(out);
  return {
    child,
    output: () => out,
    apiUrl,
    gatewayUrl,
    adminAuth: admin && out.includes('shown only now') ? admin[1] : undefined,
    waitFor: async (pattern, waitMs = 10_000) => {
      const deadline = Date.now() + waitMs;
      for (;;) {
        const found = pattern.exec(out);
        if (found) return found;
        if (Date.now() > deadline) throw new Error(`${pattern} did not appear within ${waitMs} ms:\n${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Runs a `cairn` CLI command to completion; `stdout`/`stderr` apart, `out` both; `input` is its standard input. */
export function cairn(
  args: string[],
  env: Record<string, string>,
  input = '',
): Promise<{ code: number | null; out: string; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const [node, nodeArgs] = nodeCommand(CLI);
    const child = spawn(node, [...nodeArgs, ...args], {
      cwd: REPO_ROOT,
      env: { ...PROCESS_ENV, ...env },
    });
    let out = '';
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => ((out += d.toString()), (stdout += d.toString())));
    child.stderr.on('data', (d: Buffer) => ((out += d.toString()), (stderr += d.toString())));
    child.stdin.end(input);
    child.once('exit', (code) => resolve({ code, out, stdout, stderr }));
  });
}

/** One service process (a replica) started from its own server.ts, as a deployment runs it. */
export interface ServiceProcess {
  child: ChildProcess;
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  output: () => string;
  /** Resolves with the exit code (null when killed by a signal) once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM (graceful), then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop: (graceMs?: number) => Promise<void>;
}

/**
 * A loopback port nothing listens on, for a process that binds it next: this jest worker's own
 * (see reservePort in ports.ts), so no other test file or outgoing connection takes it meanwhile.
 */
export async function freePort(): Promise<number> {
  return reservePort();
}

const SERVICE_PORT_ENV = {
  'management-api': ['CAIRN_API_HOST', 'CAIRN_API_PORT'],
  'auth-gateway': ['CAIRN_GATEWAY_HOST', 'CAIRN_GATEWAY_PORT'],
} as const;

/**
 * Starts `services/<service>/src/server.ts` (or its dist/server.js, see nodeCommand) as a real process (`child` is the
 * server itself, so
 * signals reach it directly) on a free loopback port and waits
 * until its /healthz answers. The port is chosen before the start (so a load balancer's config can
 * name it); if another process took it meanwhile the start fails with EADDRINUSE and is retried.
 */
export async function startService(
  service: 'management-api' | 'auth-gateway',
  env: Record<string, string>,
  timeoutMs = 60_000,
  /** A given port (e.g. a restarted replica's, named in a load balancer's config) instead of a free one. */
  fixedPort?: number,
  /** The checkout whose built service runs (another release's git worktree); this one by default. */
  root = REPO_ROOT,
): Promise<ServiceProcess> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 1; ; attempt++) {
    const port = fixedPort ?? (await freePort());
    const [hostVar, portVar] = SERVICE_PORT_ENV[service];
    const [node, args] = nodeCommand(`services/${service}/src/server.ts`, root);
    const child = spawn(node, args, {
      cwd: root,
      env: {
        ...PROCESS_ENV,
        ...env,
        [hostVar]: '127.0.0.1',
        [portVar]: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Keep only the tail: enough to explain a failure, bounded whatever the process prints.
    let out = '';
    const keep = (d: Buffer) => {
      out = (out + d.toString()).slice(-64_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    let gone = false;
    void exited.then(() => (gone = true));
    const url = `http://127.0.0.1:${port}`;
    const stop = async (graceMs = 5_000) => {
      if (gone) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    };
    for (;;) {
      if (gone) break;
      const ok = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1_000) }).then(
        (r) => r.ok,
        () => false,
      );
      // Still ours: a process that lost the port race exits with EADDRINUSE instead of staying up.
      if (ok && !gone) return { child, port, url, output: () => out, exited, stop };
      if (Date.now() > deadline) {
        await stop(1_000);
        throw new Error(`${service} did not answer /healthz on ${url} within ${timeoutMs} ms:\n${out}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!out.includes('EADDRINUSE') || attempt >= 3)
      throw new Error(`${service} exited during start (code ${child.exitCode}):\n${out}`);
    if (fixedPort !== undefined) await new Promise((r) => setTimeout(r, 500));
  }
}
