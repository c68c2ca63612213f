import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { Cleanups } from './main';

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
