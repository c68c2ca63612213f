import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/**
 * Throwaway Redis topologies on loopback for the scale-out tests: Debian's redis-server, started
 * here with its data in a temporary directory, on fixed ports well away from the machine's 6379,
 * and killed (every process, also after a failed start) by stop().
 */
export interface RedisTopology {
  /** The gateway's REDIS_URL for this topology. */
  url: string;
  ports: number[];
  /** Kills every process this topology started and removes its directory; safe to call twice. */
  stop: () => Promise<void>;
}

const HOST = '127.0.0.1';
const live = new Set<ChildProcess>();
// Last resort if jest exits without afterAll (a crash): no redis-server outlives the test process.
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** Fails loudly (never skips) when Debian's redis-server/redis-cli are not installed. */
export function requireRedisBinaries(): void {
  for (const bin of ['redis-server', 'redis-cli']) {
    const probe = spawnSync(bin, ['--version'], { encoding: 'utf8' });
    if (probe.error || probe.status !== 0) {
      throw new Error(
        `${bin} is not installed or not runnable (${probe.error?.message ?? probe.stderr}); the scale-out tests need Debian's redis-server package: apt-get install redis-server`,
      );
    }
  }
}

class Processes {
  private readonly procs: ChildProcess[] = [];
  readonly dir = mkdtempSync(join(tmpdir(), 'cairn-redis-scale-'));

  /** Starts `redis-server args…`; its output is kept to explain a failure. */
  start(name: string, args: string[]): ChildProcess {
    const proc = spawn('redis-server', args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4000);
    };
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    proc.once('exit', (code, signal) => {
      live.delete(proc);
      if (!this.stopping) this.failures.push(`${name} exited early (code ${code}, signal ${signal}):\n${output}`);
    });
    live.add(proc);
    this.procs.push(proc);
    return proc;
  }

  stopping = false;
  readonly failures: string[] = [];

  /** Throws with the servers' own output if one of them died (e.g. its port was taken). */
  check(): void {
    if (this.failures.length) throw new Error(this.failures.join('\n'));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      this.procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.kill('SIGKILL');
          }),
      ),
    );
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Polls until `check` returns true; throws `what` after `ms`. */
export async function waitFor(
  what: string,
  ms: number,
  check: () => Promise<boolean>,
  procs?: { check: () => void },
): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    procs?.check();
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what}: not reached within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One short-lived connection for a single command (no retries: a refused port is an answer). */
export async function command(port: number, ...args: (string | number)[]): Promise<unknown> {
  const redis = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1000,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await redis.call(String(args[0]), ...args.slice(1).map(String));
  } finally {
    redis.disconnect();
  }
}

const serverArgs = (port: number) => [
  '--port',
  String(port),
  '--bind',
  HOST,
  '--save',
  '',
  '--appendonly',
  'no',
  '--protected-mode',
  'no',
  '--daemonize',
  'no',
];

async function portsFree(ports: number[]): Promise<void> {
  for (const port of ports) {
    const answered = await command(port, 'PING').then(
      () => true,
      () => false,
    );
    if (answered)
      throw new Error(
        `port ${port} already has a Redis on it (a leftover from an earlier run?); the scale tests need ports ${ports[0]}-${ports.at(-1)} free`,
      );
  }
}

/** A 3-master, 3-replica Redis Cluster on `ports` (6 of them), ready when every node says cluster_state:ok. */
export async function startRedisCluster(ports: number[]): Promise<RedisTopology> {
  requireRedisBinaries();
  await portsFree(ports);
  const procs = new Processes();
  try {
    for (const port of ports) {
      procs.start(`cluster node ${port}`, [
        ...serverArgs(port),
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '2000',
        '--dbfilename',
        `dump-${port}.rdb`,
      ]);
    }
    for (const port of ports)
      await waitFor(`redis-server on ${port}`, 5000, async () => (await command(port, 'PING')) === 'PONG', procs);
    const create = spawnSync(
      'redis-cli',
      ['--cluster', 'create', ...ports.map((p) => `${HOST}:${p}`), '--cluster-replicas', '1', '--cluster-yes'],
      { encoding: 'utf8', timeout: 30_000 },
    );
    if (create.status !== 0)
      throw new Error(`redis-cli --cluster create failed (${create.status}):\n${create.stdout}\n${create.stderr}`);
    for (const port of ports) {
      await waitFor(
        `cluster_state:ok on ${port}`,
        15_000,
        async () => String(await command(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
        procs,
      );
    }
    return { url: `redis+cluster://${ports.map((p) => `${HOST}:${p}`).join(',')}`, ports, stop: () => procs.stop() };
  } catch (e) {
    await procs.stop();
    throw e;
  }
}

export interface SentinelTopology extends RedisTopology {
  masterName: string;
  /** The port Sentinel currently names as master. */
  masterPort: () => Promise<number>;
  /** Waits until the replica has every write the master has (so a failover loses nothing). */
  waitReplicated: () => Promise<void>;
  /** SENTINEL FAILOVER, then waits until Sentinel names the other server and it accepts writes. */
  failover: () => Promise<number>;
}

/**
 * A master, one replica and three sentinels (quorum 2): ports[0] master, ports[1] replica,
 * ports[2..4] sentinels. Ready when a sentinel knows the replica as healthy.
 */
export async function startSentinelSet(ports: number[], masterName = 'cairn'): Promise<SentinelTopology> {
  requireRedisBinaries();
  await portsFree(ports);
  const [master, replica, ...sentinels] = ports as [number, number, ...number[]];
  const procs = new Processes();
  try {
    procs.start(`master ${master}`, [...serverArgs(master), '--dbfilename', `dump-${master}.rdb`]);
    procs.start(`replica ${replica}`, [
      ...serverArgs(replica),
      '--dbfilename',
      `dump-${replica}.rdb`,
      '--replicaof',
      HOST,
      String(master),
    ]);
    for (const port of sentinels) {
      const conf = join(procs.dir, `sentinel-${port}.conf`);
      // Sentinel rewrites its own config file (it records what it learns), so each one gets its own.
      writeFileSync(
        conf,
        [
          `port ${port}`,
          `bind ${HOST}`,
          'protected-mode no',
          `dir ${procs.dir}`,
          `sentinel monitor ${masterName} ${HOST} ${master} 2`,
          `sentinel down-after-milliseconds ${masterName} 1000`,
          `sentinel failover-timeout ${masterName} 10000`,
          `sentinel parallel-syncs ${masterName} 1`,
          '',
        ].join('\n'),
      );
      procs.start(`sentinel ${port}`, [conf, '--sentinel']);
    }
    const sentinel = sentinels[0]!;
    await waitFor(
      'master and replica in sync',
      10_000,
      async () => String(await command(replica, 'INFO', 'replication')).includes('master_link_status:up'),
      procs,
    );
    await waitFor(
      'sentinels see the replica',
      15_000,
      async () => {
        for (const port of sentinels) {
          const replicas = (await command(port, 'SENTINEL', 'REPLICAS', masterName)) as string[][];
          const healthy = replicas.some((r) => {
            const fields = Object.fromEntries(r.flatMap((v, i) => (i % 2 === 0 ? [[v, r[i + 1]]] : [])));
            return fields.port === String(replica) && fields.flags === 'slave' && fields['master-link-status'] === 'ok';
          });
          if (!healthy) return false;
        }
        return true;
      },
      procs,
    );

    const masterPort = async () =>
      Number(((await command(sentinel, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', masterName)) as string[])[1]);
    const offset = async (port: number) =>
      Number(/master_repl_offset:(\d+)/.exec(String(await command(port, 'INFO', 'replication')))?.[1] ?? -1);
    const waitReplicated = async () => {
      const current = await masterPort();
      const other = current === master ? replica : master;
      await waitFor('replica caught up', 10_000, async () => (await offset(other)) >= (await offset(current)), procs);
    };
    return {
      url: `redis+sentinel://${sentinels.map((p) => `${HOST}:${p}`).join(',')}/${masterName}`,
      ports,
      masterName,
      masterPort,
      waitReplicated,
      failover: async () => {
        const before = await masterPort();
        const after = before === master ? replica : master;
        await waitReplicated();
        await command(sentinel, 'SENTINEL', 'FAILOVER', masterName);
        await waitFor('Sentinel names the new master', 15_000, async () => (await masterPort()) === after, procs);
        await waitFor(
          'the new master is a master',
          10_000,
          async () => String(await command(after, 'ROLE')).startsWith('master'),
          procs,
        );
        return after;
      },
      stop: () => procs.stop(),
    };
  } catch (e) {
    await procs.stop();
    throw e;
  }
}
