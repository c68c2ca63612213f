import { gzipSync } from 'node:zlib';
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
 *
 * PGlite names the members from the root (`/PG_VERSION`), which `tar -x` would write to the
 * root; here they are relative (`PG_VERSION`, `base/5/…`) and owner-only (0700, 0600), so the
 * archive unpacks into the current directory like any other. PGlite reads both forms, so a
 * restore takes archives written before this as well.
 */
export async function dumpEmbedded(db: Knex): Promise<Blob | undefined> {
  const pglite = embedded.get(db);
  if (!pglite) return undefined;
  // Asked before the database has started, PGlite never answers (the first query waits for it itself).
  await pglite.waitReady;
  const tar = new Uint8Array(await (await pglite.dumpDataDir('none')).arrayBuffer());
  relativeOwnerOnly(tar);
  return new Blob([gzipSync(tar)], { type: 'application/gzip' });
}

const BLOCK = 512;
/** ustar header fields: [offset, length]. */
const NAME = [0, 100] as const;
const MODE = [100, 8] as const;
const SIZE = [124, 12] as const;
const CHECKSUM = [148, 8] as const;
const TYPE = 156;
const PREFIX = [345, 155] as const;
const DIRECTORY = 0x35; // '5'

/** Rewrites, in place, each member's name without its leading slashes and its mode to 0700/0600. */
function relativeOwnerOnly(tar: Uint8Array): void {
  for (let at = 0; at + BLOCK <= tar.length;) {
    const header = tar.subarray(at, at + BLOCK);
    if (header.every((b) => b === 0)) break;
    // A name longer than its field continues from the prefix field: the prefix is where it starts.
    const start = header[PREFIX[0]] !== 0 ? PREFIX : NAME;
    stripLeadingSlashes(header.subarray(start[0], start[0] + start[1]));
    const mode = header[TYPE] === DIRECTORY ? '0000700' : '0000600';
    header.set(Buffer.from(`${mode}\0`, 'latin1'), MODE[0]);
    header.fill(0x20, CHECKSUM[0], CHECKSUM[0] + CHECKSUM[1]);
    const sum = header.reduce((a, b) => a + b, 0);
    header.set(Buffer.from(`${sum.toString(8).padStart(6, '0')}\0 `, 'latin1'), CHECKSUM[0]);
    const size = parseInt(Buffer.from(header.subarray(SIZE[0], SIZE[0] + SIZE[1])).toString('latin1'), 8) || 0;
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
}

function stripLeadingSlashes(field: Uint8Array): void {
  let n = 0;
  while (n < field.length && field[n] === 0x2f) n++;
  if (n === 0) return;
  field.copyWithin(0, n);
  field.fill(0, field.length - n);
}
