import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { PROCESS_ENV, REPO_ROOT, freePort, nodeCommand } from '../support/processes';

export { freePort };

/**
 * A TCP relay on a port of our own to a real dependency (Postgres, Redis), which the tests turn
 * on, off or into a black hole without touching the shared servers behind it.
 * - `start()`: listen and relay.  - `stop()`: stop listening and cut every relayed connection
 *   (the dependency is now "down": new connections are refused).
 * - `blackHole()`: keep accepting, but forward nothing either way (a hung peer).
 */
export class TcpRelay {
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private holding = false;
  constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
  ) {}

  static async to(targetPort: number, host = '127.0.0.1'): Promise<TcpRelay> {
    return new TcpRelay(await freePort(), { host, port: targetPort });
  }

  async start(): Promise<void> {
    this.holding = false;
    const server = createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => client.destroy());
      if (this.holding) return; // accepted, never answered
      const upstream = connect(this.target.port, this.target.host);
      this.sockets.add(upstream);
      upstream.on('close', () => {
        this.sockets.delete(upstream);
        client.destroy();
      });
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /** Existing connections stop moving bytes and new ones are accepted and left hanging. */
  blackHole(): void {
    this.holding = true;
    for (const s of this.sockets) {
      s.unpipe();
      s.pause();
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

/** One service's own server.ts as a real process. */
export interface ServiceProcess {
  child: ChildProcess;
  /** stdout and stderr so far. */
  output: () => string;
  /** The JSON log lines so far (non-JSON lines skipped). */
  logLines: () => Array<Record<string, unknown>>;
  /** Resolves with the port once the service logs that it listens. */
  listening: Promise<number>;
  exited: Promise<{ code: number | null; at: number }>;
  kill: () => void;
}

export function spawnService(service: 'auth-gateway' | 'management-api', env: Record<string, string>): ServiceProcess {
  const [node, args] = nodeCommand(`services/${service}/src/server.ts`);
  const child = spawn(node, args, {
    cwd: REPO_ROOT,
    env: { ...PROCESS_ENV, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.once('exit', (code) => resolve({ code, at: Date.now() })),
  );
  const logLines = () =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const listening = new Promise<number>((resolve, reject) => {
    const check = () => {
      const line = logLines().find((l) => typeof l.msg === 'string' && l.msg.endsWith(' listening'));
      if (line) resolve(line.port as number);
    };
    child.stdout!.on('data', check);
    void exited.then(({ code }) => reject(new Error(`${service} exited (${code}) before listening:\n${out}`)));
  });
  listening.catch(() => {}); // observed by the tests that await it
  return {
    child,
    output: () => out,
    logLines,
    listening,
    exited,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Resolves `p`, or rejects after `ms` with `what` in the message. */
export function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
    }),
  ]);
}

/** The value of one sample (`name{labels} value`) in a Prometheus text page; 0 when absent. */
export function sample(page: string, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of page.split('\n')) {
    const open = line.indexOf('{');
    const metric = open >= 0 ? line.slice(0, open) : line.split(' ')[0];
    if (metric !== name) continue;
    const have = open >= 0 ? line.slice(open + 1, line.lastIndexOf('}')).split(/,(?=[a-zA-Z_]+=")/) : [];
    if (want.every((w) => have.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}
