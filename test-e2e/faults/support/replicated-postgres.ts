import { execFile, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import knex, { type Knex } from 'knex';
import { workerPort } from './ports';

const run = promisify(execFile);

/** Ports of the primary and its standby (neither the shared 5432 nor the fault cluster's 5433). */
export const REGIONS_PRIMARY_PORT = workerPort(process.env.CAIRN_FAULTS_PRIMARY_PORT, 5434);
export const REGIONS_STANDBY_PORT = workerPort(process.env.CAIRN_FAULTS_STANDBY_PORT, 5435);

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => /^\d+$/.test(v)) : [];
  if (versions.length === 0)
    throw new Error('No Debian Postgres binaries (/usr/lib/postgresql/*/bin): install postgresql (see .ci/run).');
  return join(root, versions.sort((a, b) => Number(a) - Number(b)).at(-1)!, 'bin');
}

/**
 * A primary and a streaming hot standby of our own, made with Debian's binaries in a temporary
 * directory (initdb, then pg_basebackup -R from the running primary), on loopback with trust
 * authentication like the development machines. Run as the postgres user when the tests run as
 * root (Postgres refuses to run as root). The fault tests stop the primary (a cut link, as the
 * standby sees it) and pause the standby's replay.
 */
export class ReplicatedPostgres {
  private readonly dir = mkdtempSync(join(tmpdir(), 'cairn-faults-regions-'));
  private readonly bin = binDir();
  private readonly owner =
    process.getuid?.() === 0
      ? {
          uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
          gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
        }
      : undefined;

  private async as(command: string, args: string[]): Promise<string> {
    const { stdout } = await run(join(this.bin, command), args, {
      ...(this.owner ?? {}),
      cwd: this.dir,
      env: { PATH: process.env.PATH ?? '' },
    });
    return stdout;
  }

  private dataDir(which: 'primary' | 'standby'): string {
    return join(this.dir, which);
  }

  url(which: 'primary' | 'standby', database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${which === 'primary' ? REGIONS_PRIMARY_PORT : REGIONS_STANDBY_PORT}/${database}`;
  }

  /** initdb, start the primary, copy it with pg_basebackup -R, start the standby. */
  async start(): Promise<void> {
    if (this.owner) chownSync(this.dir, this.owner.uid, this.owner.gid);
    await this.as('initdb', ['-D', this.dataDir('primary'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await this.ctl('primary', 'start');
    await this.as('pg_basebackup', [
      '-h',
      '127.0.0.1',
      '-p',
      String(REGIONS_PRIMARY_PORT),
      '-U',
      'postgres',
      '-D',
      this.dataDir('standby'),
      '-R',
      '-X',
      'stream',
      '--no-sync',
    ]);
    await this.ctl('standby', 'start');
  }

  /** pg_ctl start|stop (fast: sessions ended, transactions rolled back) of one server, waiting for it. */
  async ctl(which: 'primary' | 'standby', action: 'start' | 'stop'): Promise<void> {
    const port = which === 'primary' ? REGIONS_PRIMARY_PORT : REGIONS_STANDBY_PORT;
    // fsync off: a test cluster; a quick retry of the WAL stream after the primary comes back.
    const options = `-p ${port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c wal_retrieve_retry_interval=500ms`;
    const args =
      action === 'start'
        ? ['-D', this.dataDir(which), '-o', options, '-l', join(this.dir, `${which}.log`), '-w', '-t', '60', 'start']
        : ['-D', this.dataDir(which), '-m', 'fast', '-w', 'stop'];
    await this.as('pg_ctl', args);
  }

  /** Runs `sql` on one server through a connection of its own. */
  async query<T>(which: 'primary' | 'standby', sql: string, database = 'postgres'): Promise<T[]> {
    const db: Knex = knex({
      client: 'pg',
      connection: { connectionString: this.url(which, database), connectionTimeoutMillis: 2000 },
      pool: { min: 0, max: 1 },
    });
    try {
      return ((await db.raw(sql)) as { rows: T[] }).rows;
    } finally {
      await db.destroy();
    }
  }

  /** Resolves once the standby has replayed everything the primary has written so far. */
  async caughtUp(timeoutMs = 10_000): Promise<void> {
    const [primary] = await this.query<{ lsn: string }>('primary', 'SELECT pg_current_wal_lsn()::text AS lsn');
    const until = Date.now() + timeoutMs;
    for (;;) {
      const [standby] = await this.query<{ behind: boolean }>(
        'standby',
        `SELECT pg_last_wal_replay_lsn() < '${primary!.lsn}'::pg_lsn AS behind`,
      );
      if (standby?.behind === false) return;
      if (Date.now() > until) throw new Error('the standby did not catch up');
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  async destroy(): Promise<void> {
    for (const which of ['standby', 'primary'] as const) await this.ctl(which, 'stop').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
