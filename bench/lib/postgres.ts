import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { Cleanups } from './main';
import type { Party } from './cpu';

/** Throwaway benchmark databases on a Postgres server reachable without a password. */

const quoteIdent = (s: string): string => `"${s.replace(/"/g, '""')}"`;

async function withServer<T>(serverUrl: string, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: serverUrl, application_name: 'cairn-bench' });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates `<prefix><8 hex>` on the server of `serverUrl`; returns its name and URL. */
export async function createThrowawayDatabase(
  serverUrl: string,
  prefix = 'cairn_bench_',
): Promise<{ name: string; url: string }> {
  const name = `${prefix}${randomBytes(4).toString('hex')}`;
  await withServer(serverUrl, (c) => c.query(`CREATE DATABASE ${quoteIdent(name)}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

/** Drops the database, ending whatever connections are still open on it. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await withServer(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${quoteIdent(name)} WITH (FORCE)`));
}

/**
 * A throwaway database for one run: created now (and said so), dropped by `cleanups` at the end of
 * the run, also on Ctrl-C.
 */
export async function throwawayDatabase(
  cleanups: Cleanups,
  serverUrl: string,
  prefix?: string,
): Promise<{ name: string; url: string }> {
  const created = await createThrowawayDatabase(serverUrl, prefix);
  cleanups.push(async () => {
    await dropDatabase(serverUrl, created.name);
    console.log(`dropped database ${created.name}`);
  });
  console.log(`created database ${created.name}`);
  return created;
}

/**
 * The Postgres backends serving one database, as a CPU party: its connections' pids, polled from
 * pg_stat_activity every `everyMs` while the run lasts (pools keep their connections, so a
 * measurement sees the same ones). Unlike every process named postgres, it leaves out other
 * databases' work (another tenant's tests on a shared server) and the server's background
 * processes (checkpointer, WAL writer: a few percent of a core under these loads).
 */
export async function backendsOf(
  cleanups: Cleanups,
  databaseUrl: string,
  name = 'postgres',
  everyMs = 250,
): Promise<Party> {
  const client = new Client({ connectionString: databaseUrl, application_name: 'cairn-bench-cpu' });
  await client.connect();
  let pids = new Set<number>();
  const poll = async () => {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    pids = new Set(rows.map((r) => r.pid));
  };
  await poll();
  const timer = setInterval(() => void poll().catch(() => {}), everyMs);
  timer.unref();
  cleanups.push(async () => {
    clearInterval(timer);
    await client.end();
  });
  return { name, match: (p) => p.comm === 'postgres' && pids.has(p.pid) };
}
