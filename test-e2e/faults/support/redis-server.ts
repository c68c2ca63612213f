import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { workerPort } from './ports';

export const FAULTS_REDIS_PORT = workerPort(process.env.CAIRN_FAULTS_REDIS_PORT, 6390);

/**
 * A redis-server of our own on loopback, restarted and stopped by the fault tests (never the
 * shared one on 6379). Its data survive a restart the way a production token store's must: the
 * append-only file, fsynced on every write, because a revocation the gateway acknowledged (a
 * deleted token record) must not come back after Redis restarts.
 */
export class RedisServer {
  private child?: ChildProcess;
  private readonly dir = mkdtempSync(join(tmpdir(), 'cairn-faults-redis-'));
  readonly url = `redis://127.0.0.1:${FAULTS_REDIS_PORT}`;

  async start(): Promise<number> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(FAULTS_REDIS_PORT),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        'always',
        '--save',
        '',
        '--daemonize',
        'no',
        '--loglevel',
        'warning',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    this.child = child;
    const until = Date.now() + 10_000;
    while (!(await this.ready())) {
      if (child.exitCode !== null || Date.now() > until)
        throw new Error(`redis-server on ${FAULTS_REDIS_PORT} did not start:\n${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return Date.now();
  }

  /** A clean stop (SIGTERM: Redis flushes its append-only file and exits). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    child.kill('SIGCONT'); // a paused server handles the signal once it runs again
    await exited;
    this.child = undefined;
  }

  /** SIGSTOP: Redis keeps its connections open but answers nothing (a hung server, not a dead one). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): number {
    this.child?.kill('SIGCONT');
    return Date.now();
  }

  async restart(): Promise<number> {
    await this.stop();
    return this.start();
  }

  async ready(): Promise<boolean> {
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      connectTimeout: 500,
    });
    probe.on('error', () => {});
    try {
      await probe.connect();
      return (await probe.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
