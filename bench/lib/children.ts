/**
 * Servers under test run in child processes forked from the benchmark's own file (started with a
 * `--bench-serve=<role>` argument), so the load generator in the parent never shares an event loop
 * with a server it measures. A child tells the parent its port over IPC and ends when the parent
 * goes away, normally or not.
 *
 * A child runs the built services (dist/), as the images and `pnpm start` do: its `@cairn/*`
 * imports resolve without the `cairn-source` condition the parent runs under (tsx with
 * `--conditions=cairn-source`). tsx transpiles the sources with esbuild's keepNames, which wraps
 * every named function made at run time in a call to `Object.defineProperty` (about 0.7 µs each);
 * the built code has none of that, so a child measured on the sources would measure tsx as well.
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { listen } from '@cairn/runtime';
import { buildNodeDist } from '../../test-e2e/support/build-dist';

const ROLE_FLAG = '--bench-serve=';
/** The flag that makes `@cairn/*` resolve to src/ (see the package.json scripts); children go without it. */
const SOURCE_CONDITION = '--conditions=cairn-source';

let built = false;
/** `pnpm build` without the console, once a run: a child must not run a dist/ older than the sources. */
function buildOnce(): void {
  if (built) return;
  buildNodeDist('the servers run dist/');
  built = true;
}

/** The role this process was forked to serve, or undefined in the parent. */
export function childRole(): string | undefined {
  const arg = process.argv.find((a) => a.startsWith(ROLE_FLAG));
  return arg?.slice(ROLE_FLAG.length);
}

export interface Child {
  role: string;
  proc: ChildProcess;
  port: number;
}

/**
 * Forks `script` as a server child for `role` and resolves with the port it listens on. `extraExecArgv`
 * is added to this process's Node options (e.g. `--cpu-prof`).
 */
export function startChild(
  script: string,
  role: string,
  env: NodeJS.ProcessEnv,
  extraExecArgv: string[] = [],
): Promise<Child> {
  buildOnce();
  const proc = fork(script, [`${ROLE_FLAG}${role}`], {
    env,
    execArgv: [...process.execArgv.filter((a) => a !== SOURCE_CONDITION), ...extraExecArgv],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${role} server did not start within 30 s`)), 30_000);
    proc.once('message', (m: { port: number }) => {
      clearTimeout(timer);
      resolve({ role, proc, port: m.port });
    });
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${role} server exited early with code ${code}`));
    });
  });
}

export function stopChild(child: Child): Promise<void> {
  return new Promise((resolve) => {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.proc.kill('SIGKILL'), 5000);
    child.proc.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    if (child.proc.connected) child.proc.disconnect();
    else child.proc.kill('SIGTERM');
  });
}

/** In a child: report the port to the parent; `close` runs when the parent goes away, then the child exits. */
export function announceListening(port: number, close: () => Promise<void>): void {
  process.send!({ port });
  process.on('disconnect', () => {
    void close().finally(() => process.exit(0));
    setTimeout(() => process.exit(0), 2000).unref();
  });
}

/**
 * In a child: listens on a free port of 127.0.0.1 as the services do in production (runtime's
 * listen) and announces it; `closeMore` runs after the server closed.
 */
export function serveApp(app: express.Express, closeMore: () => Promise<void> = async () => {}): void {
  void listen(app, 0, '127.0.0.1').then(({ server, port }) => announceListening(port, () => closed(server, closeMore)));
}

function closed(server: Server, closeMore: () => Promise<void>): Promise<void> {
  server.close();
  server.closeAllConnections();
  return closeMore();
}

/** The baseline every benchmark compares with: a bare express 5 hello world. */
export const BASELINE_ROLE = 'baseline';

export function serveHelloWorld(): void {
  const app = express();
  app.get('/', (_req, res) => {
    res.json({ hello: 'world' });
  });
  // Stock express, as the issues define the baseline: app.listen, not the services' listen.
  const server: Server = app.listen(0, '127.0.0.1', () =>
    announceListening((server.address() as AddressInfo).port, () => closed(server, async () => {})),
  );
}
