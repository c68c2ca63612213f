import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  createDatabase,
  DataDirInUseError,
  readConfig,
  restoreDataDir,
  s3KeyringOf,
  unopenableSecrets,
  type UnopenableSecrets,
} from '@cairn/management-api';
import { errors } from '@cairn/domain/errors';
import {
  embeddedKeysAdvice,
  embeddedS3KeysFile,
  usesEmbeddedS3Keys,
  withExistingEmbeddedS3Keys,
} from '../embedded-s3-keys';

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
      ' The next cairn start applies any newer migrations. ' +
      (await keysNeeded({ ...config, dataDir: dir }))
    );
  } catch (e) {
    if (!(e instanceof DataDirInUseError)) throw e;
    throw errors.invalidInput(
      `The embedded database in ${dir} is in use by a running Cairn: stop it (Ctrl-C or SIGTERM), then restore. Nothing was done.`,
    );
  }
}

/**
 * The restored database's S3 secrets are sealed under keys that are not in it (a backup holds no
 * secret in clear): whether the keys the next start will have open them, and if not, exactly what
 * to put where. A start whose keys do not open them refuses.
 */
async function keysNeeded(config: ReturnType<typeof readConfig>): Promise<string> {
  const embedded = usesEmbeddedS3Keys(config);
  const keys = embedded ? `the key file ${embeddedS3KeysFile(config.dataDir)}` : 'CAIRN_S3_SECRET_KEYS';
  let unopenable: UnopenableSecrets[];
  const db = createDatabase({ dataDir: config.dataDir });
  try {
    unopenable = await unopenableSecrets(db, s3KeyringOf(withExistingEmbeddedS3Keys(config)));
  } catch {
    return `Its S3 secrets open only with the keys they were sealed with: start it with the same ${keys} as when the backup was taken.`;
  } finally {
    await db.destroy();
  }
  if (unopenable.length === 0) return `Its S3 secrets (if any) open with ${keys}.`;
  const missing = embedded
    ? embeddedKeysAdvice(config.dataDir, unopenable)
    : unopenable
        .map(
          (u) =>
            `It holds ${u.credentials} S3 credential(s) sealed under key id '${u.keyId}', which ${u.why === 'missing' ? 'CAIRN_S3_SECRET_KEYS does not list' : 'do not open under the key CAIRN_S3_SECRET_KEYS gives that id'}: set CAIRN_S3_SECRET_KEYS to the keys in use when the backup was taken.`,
        )
        .join(' ');
  return `Before cairn start: ${missing} (Without it, cairn start refuses to run rather than make a new key.)`;
}
