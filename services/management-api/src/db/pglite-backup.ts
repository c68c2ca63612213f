import { existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmdirSync, rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { errors } from '@cairn/domain';
import { createDatabase, pgliteStartParams } from './database';
import { dumpEmbedded, GZIP_MAGIC } from './embedded';
import { lockDataDir } from './data-dir-lock';
import { needsSetUp } from './pglite-setup';
import { restrictTree, restrictUmask } from './data-dir-modes';

/**
 * Backup and restore of an embedded (PGlite) data directory by a process that holds it alone. While
 * `cairn start` runs on the directory, a backup goes through its management API instead
 * (POST /api/v1/backup/); a restore needs it stopped. Both refuse, through the directory's lock
 * (DataDirInUseError), when another process has it open.
 */

/** The archive of a data directory no other process has open (opened, copied, closed). */
export async function backupDataDir(dataDir: string): Promise<Blob> {
  const dir = resolve(dataDir);
  if (!existsSync(dir) || needsSetUp(dir))
    throw errors.invalidInput(
      `There is no embedded database in ${dir} to back up: set CAIRN_DATA_DIR to the directory Cairn runs on, or, for a Cairn running elsewhere, point cairn at its management API (CAIRN_API_URL and CAIRN_API_KEY, or a context).`,
    );
  const db = createDatabase({ dataDir: dir });
  try {
    // A query first: it checks this is Cairn's database, and knex closes (and unlocks) only a
    // database it has opened a connection to.
    await db.raw('SELECT count(*) FROM knex_migrations');
    return (await dumpEmbedded(db))!;
  } finally {
    await db.destroy();
  }
}

export interface RestoreResult {
  /** Where the data directory that was replaced now is (only with `replace`, when it held anything). */
  previous?: string;
}

/**
 * Makes `dataDir` the database in `archive` (a backup of an embedded database). The archive is
 * unpacked and opened in a sibling staging directory first, and only a database that opens and has
 * Cairn's migration table takes the data directory's place, in one rename: a bad archive or an
 * interrupted restore leaves the data directory as it was. A data directory that holds anything is
 * refused unless `replace`; then it is moved aside (to `<dir>.before-restore-<time>`), not deleted.
 */
export async function restoreDataDir(dataDir: string, archive: Uint8Array, replace: boolean): Promise<RestoreResult> {
  if (archive.length < 2 || !GZIP_MAGIC.equals(Buffer.from(archive.subarray(0, 2)))) {
    throw errors.invalidInput(
      'That file is not a backup of an embedded Cairn database (it is not a gzip archive); a Postgres dump is restored with pg_restore (docs/backup.md).',
    );
  }
  restrictUmask();
  mkdirSync(resolve(dataDir), { recursive: true });
  const dir = realpathSync(resolve(dataDir));
  const lock = lockDataDir(dir);
  const staging = join(dirname(dir), `.${basename(dir)}.restoring`);
  try {
    const occupied = readdirSync(dir).length > 0;
    if (occupied && !replace) {
      throw errors.invalidInput(
        `The data directory ${dir} is not empty. Nothing was done. Restore into an empty directory, or add --force to replace it (it is kept as ${dir}.before-restore-<time>).`,
      );
    }
    rmSync(staging, { recursive: true, force: true });
    await openRestored(staging, archive);
    // Whatever modes the archive's members name, the restored directory is its owner's only.
    restrictTree(staging);
    let previous: string | undefined;
    if (occupied) {
      previous = `${dir}.before-restore-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      renameSync(dir, previous);
    } else {
      rmdirSync(dir);
    }
    renameSync(staging, dir);
    return { previous };
  } finally {
    rmSync(staging, { recursive: true, force: true });
    lock.release();
  }
}

/** Unpacks the archive into `dir` and checks it is a Cairn database that opens. */
async function openRestored(dir: string, archive: Uint8Array): Promise<void> {
  let pg: PGlite | undefined;
  try {
    pg = await PGlite.create(dir, {
      loadDataDir: new Blob([new Uint8Array(archive)]),
      startParams: pgliteStartParams(),
    });
    await pg.query('SELECT count(*) FROM knex_migrations');
  } catch (e) {
    throw errors.invalidInput(
      `That file could not be opened as a backup of an embedded Cairn database: ${e instanceof Error ? e.message : String(e)}. Nothing was done.`,
    );
  } finally {
    await pg?.close().catch(() => undefined);
  }
}
