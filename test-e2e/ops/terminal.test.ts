import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeCommand, REPO_ROOT } from '../support/processes';
import { migratedDataDir } from '../support/data-dir';

/**
 * Whether the data directory's lock is held by a running process. A start takes over the lock of
 * one that no longer runs, so a lock left by a killed process is as good as gone.
 */
function lockHeld(lock: string): boolean {
  let pid: number;
  try {
    pid = (JSON.parse(readFileSync(lock, 'utf8')) as { pid: number }).pid;
  } catch {
    return existsSync(lock); // gone, or being written this moment
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** `cairn start` until its banner, then SIGTERM; `tty`: under util-linux `script`, a pseudo-terminal. */
function startOnce(env: Record<string, string>, tty: boolean): Promise<{ stdout: string; stderr: string }> {
  const [node, args] = nodeCommand('packages/cli/src/main.ts');
  const quoted = [node, ...args, 'start'].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = tty
    ? spawn('script', ['-qec', quoted, '/dev/null'], { cwd: REPO_ROOT, env })
    : spawn(node, [...args, 'start'], { cwd: REPO_ROOT, env });
  let stdout = '';
  let stderr = '';
  let stopping = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no banner:\n${stdout}\n${stderr}`));
    }, 60_000);
    // One SIGTERM: a second, sent when the output that follows the banner arrives, would find
    // cairn's handler gone and end it at once, before it has let go of its lock.
    const check = () => {
      if (!stopping && /auth gateway\s+http:\/\/\S+\/auth\//.test(stdout + stderr)) {
        stopping = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', (d: Buffer) => ((stdout += d.toString()), check()));
    child.stderr.on('data', (d: Buffer) => ((stderr += d.toString()), check()));
    child.once('exit', () => {
      clearTimeout(timer);
      // Under `script`, cairn itself may still be shutting down when script exits: the next start
      // on the same data directory waits until it has let go of its lock (or is gone: ended with
      // the terminal, it leaves the lock behind for the next start to take over).
      const lock = `${env.CAIRN_DATA_DIR}.lock`;
      const deadline = Date.now() + 15_000;
      const wait = () => (lockHeld(lock) && Date.now() < deadline ? setTimeout(wait, 50) : resolve({ stdout, stderr }));
      wait();
    });
  });
}

describe('cairn start on a terminal and in a pipe', () => {
  let dir: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'cairn-tty-'));
    env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      TERM: 'dumb',
      LOG_LEVEL: 'info',
      CAIRN_DATA_DIR: await migratedDataDir(join(dir, 'pglite')),
      CAIRN_API_PORT: '0',
      CAIRN_GATEWAY_PORT: '0',
      CAIRN_API_HOST: '127.0.0.1',
      CAIRN_GATEWAY_HOST: '127.0.0.1',
    };
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('when stdout is a terminal, then log lines are readable text and the banner follows them', async () => {
    const { stdout } = await startOnce(env, true);
    expect(stdout).toMatch(/INFO.*\[management-api\] management-api listening/);
    expect(stdout).toMatch(/INFO.*\[auth-gateway\] auth-gateway listening/);
    expect(stdout).not.toMatch(/\{"level":/);
    expect(stdout.indexOf('auth-gateway listening')).toBeLessThan(stdout.indexOf('Cairn is running'));
  });

  it('when stdout is a pipe, then it carries only JSON log lines and the banner goes to stderr', async () => {
    const { stdout, stderr } = await startOnce(env, false);
    const lines = stdout.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(stderr).toContain('Cairn is running');
  });

  it('when LOG_FORMAT=json on a terminal, then the lines are JSON', async () => {
    const { stdout } = await startOnce({ ...env, LOG_FORMAT: 'json' }, true);
    expect(stdout).toMatch(/\{"level":30,[^\n]*"msg":"management-api listening"\}/);
  });
});
