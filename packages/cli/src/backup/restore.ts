import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DataDirInUseError, readConfig, restoreDataDir } from '@cairn/management-api';
import { errors } from '@cairn/domain';

/**
 * `cairn restore FILE [--force]`: makes CAIRN_DATA_DIR the embedded database of a `cairn backup`.
 * Refused while any process has the directory open (a running `cairn start` would keep writing
 * its own copy over the restored one), and into a directory that holds anything unless --force
 * (which keeps the old directory aside). Postgres dumps are restored with pg_restore.
 */
export async function restoreCommand(file: string, flags: { force?: boolean }): Promise<string> {
  const config = readConfig();
  if (config.databaseUrl) {
    throw errors.invalidInput(
      'cairn restore restores the embedded database; with DATABASE_URL set, restore Postgres with pg_restore (docs/backup.md).',
    );
  }
  let archive: Buffer;
  try {
    archive = await readFile(file);
  } catch (e) {
    throw errors.invalidInput(
      `Cannot read ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}.`,
    );
  }
  const dir = resolve(config.dataDir);
  try {
    const { previous } = await restoreDataDir(dir, archive, flags.force === true);
    return (
      `Restored ${file} into ${dir}.` +
      (previous ? ` The data directory it replaced is now ${previous}; remove it once the restored one works.` : '') +
      ' The next cairn start applies any newer migrations. Start it with the same CAIRN_S3_SECRET_KEYS as when the backup was taken.'
    );
  } catch (e) {
    if (!(e instanceof DataDirInUseError)) throw e;
    throw errors.invalidInput(
      `The embedded database in ${dir} is in use by a running Cairn: stop it (Ctrl-C or SIGTERM), then restore. Nothing was done.`,
    );
  }
}
