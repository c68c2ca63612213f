import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..');
const TSX = join(REPO_ROOT, 'node_modules', '.bin', 'tsx');
const CLI = join(REPO_ROOT, 'packages', 'cli', 'src', 'main.ts');

export interface Launched {
  child: ChildProcess;
  output: () => string;
  apiUrl: string;
  gatewayUrl: string;
  /** "ApiKey admin:…" when this start generated the first admin, else undefined. */
  adminAuth?: string;
  stop: () => Promise<number | null>;
}

/** Runs `cairn start` (what `pnpm start` runs) as a real process and waits for its banner. */
export async function launch(env: Record<string, string>, timeoutMs = 60_000): Promise<Launched> {
  const child = spawn(TSX, [CLI, 'start'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', CAIRN_API_PORT: '0', CAIRN_GATEWAY_PORT: '0', CAIRN_API_HOST: '127.0.0.1', CAIRN_GATEWAY_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cairn start did not come up:\n${out}`)), timeoutMs);
    const check = () => {
      if (/auth gateway\s+http:\/\/\S+\/auth\//.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`cairn start exited early:\n${out}`));
    });
  });
  const apiUrl = /management API\s+(http:\/\/\S+)\/api\/v1\//.exec(out)![1]!;
  const gatewayUrl = /auth gateway\s+(http:\/\/\S+)\/auth\//.exec(out)![1]!;
  const admin = /Authorization: (ApiKey \S+:\S+)\n/.exec(out);
  return {
    child,
    output: () => out,
    apiUrl,
    gatewayUrl,
    adminAuth: admin && out.includes('shown only now') ? admin[1] : undefined,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Runs a `cairn` CLI command to completion. */
export function cairn(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(TSX, [CLI, ...args], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'warn', ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}
