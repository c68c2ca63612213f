import type { Knex } from 'knex';
import type { PGlite } from '@electric-sql/pglite';

/**
 * The PGlite instance behind each embedded knex handle, kept here when createDatabase makes it,
 * so a backup can ask PGlite itself for its data directory rather than reading knex's internals.
 */
const embedded = new WeakMap<Knex, PGlite>();

export function registerEmbedded(db: Knex, pglite: PGlite): void {
  embedded.set(db, pglite);
}

/** gzip's first two bytes: every archive written by dumpEmbedded starts with them. */
export const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);

/**
 * A consistent copy of an embedded database: the data directory as a gzipped tar (PGlite's
 * dumpDataDir). PGlite runs one statement at a time and takes the archive between two of them,
 * so the files are those of a database that stopped between two statements; a transaction still
 * open then is rolled back when the archive is opened, as after a crash. The archive is built in
 * memory (a few MB for a control plane's tables) and handed back whole. Undefined on Postgres.
 */
export async function dumpEmbedded(db: Knex): Promise<Blob | undefined> {
  const pglite = embedded.get(db);
  if (!pglite) return undefined;
  // Asked before the database has started, PGlite never answers (the first query waits for it itself).
  await pglite.waitReady;
  return pglite.dumpDataDir('gzip');
}
