import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { backupDataDir, DataDirInUseError, readConfig } from '@cairn/management-api';
import { errors } from '@cairn/domain/errors';
import type { CollectorConfig } from '../config';
import { embeddedS3KeysFile } from '../embedded-s3-keys';

type WebStream = Parameters<typeof Readable.fromWeb>[0];

/**
 * `cairn backup FILE`: a consistent copy of the embedded database, for `cairn restore FILE`. When
 * cairn is pointed at a management API (CAIRN_API_URL, or a context), that server takes the copy
 * and streams it (POST /api/v1/backup/, an admin's key): it may run anywhere. Otherwise the data
 * directory here is copied: opened and copied by this process when nothing runs on it, or, while
 * `cairn start` runs on it (it admits one process at a time), through that start's management
 * API on the default address. Postgres is backed up with its own tools.
 */
export async function backupCommand(
  file: string,
  apiConfig: () => Promise<CollectorConfig>,
  pointedAtServer: () => Promise<boolean>,
): Promise<string> {
  const config = readConfig();
  if (config.databaseUrl) {
    throw errors.invalidInput(
      'cairn backup copies the embedded database; with DATABASE_URL set, back Postgres up with pg_dump or a base backup (docs/backup.md).',
    );
  }
  let source: WebStream;
  let how: string;
  let keys: string;
  if (await pointedAtServer()) {
    const api = await apiConfig();
    source = await throughApi(api, `The backup comes from the management API at ${api.apiUrl}`);
    how = `through the management API at ${api.apiUrl}`;
    keys =
      "the S3 keys its secrets are sealed under: that server's CAIRN_S3_SECRET_KEYS or, where it runs without them, the s3-secret-keys file beside its data directory";
  } else {
    try {
      source = (await backupDataDir(config.dataDir)).stream() as WebStream;
      how = `from ${resolve(config.dataDir)}`;
    } catch (e) {
      if (!(e instanceof DataDirInUseError)) throw e;
      const api = await apiConfig();
      source = await throughApi(
        api,
        `Cairn is running on ${resolve(config.dataDir)}, which admits one process at a time, so the backup must come from its management API`,
      );
      how = `through the running management API at ${api.apiUrl}`;
    }
    // Without CAIRN_S3_SECRET_KEYS the embedded start made its own key, in a file beside the data directory.
    keys = config.s3SecretKeys ? 'CAIRN_S3_SECRET_KEYS' : `the file ${embeddedS3KeysFile(config.dataDir)}`;
  }
  const bytes = await writeWhole(file, source);
  return `Backup of the embedded database written to ${file} (${bytes} bytes, ${how}). Keep ${keys} too, apart from it: without those keys its S3 secrets cannot be opened.`;
}

/** `why`: the sentence that says why the backup comes from this API, for the refusals. */
async function throughApi(api: CollectorConfig, why: string): Promise<WebStream> {
  if (!api.apiKey) {
    throw errors.invalidInput(
      `${why}: set CAIRN_API_KEY="<operator>:<key>" (an admin with access to every cluster) and, if it does not listen on ${api.apiUrl}, CAIRN_API_URL (or use a context). Nothing was done.`,
    );
  }
  let res: Response;
  try {
    res = await fetch(`${api.apiUrl}/api/v1/backup/`, {
      method: 'POST',
      headers: { Authorization: `ApiKey ${api.apiKey}` },
    });
  } catch (e) {
    throw new Error(
      `${why}, but it did not answer (${e instanceof Error ? e.message : String(e)}); set CAIRN_API_URL to where it listens. Nothing was done.`,
    );
  }
  if (res.status !== 200 || !res.body) {
    const body = (await res.json().catch(() => null)) as { error?: string } | null;
    throw new Error(
      `The management API at ${api.apiUrl} refused the backup (${res.status}): ${body?.error ?? 'no details'}`,
    );
  }
  return res.body as WebStream;
}

/**
 * Writes next to `file` and renames only a complete copy into place, so `file` is never half a
 * backup; readable by its owner only (it holds password hashes and sealed S3 secrets).
 */
async function writeWhole(file: string, source: WebStream): Promise<number> {
  const partial = `${file}.partial-${process.pid}`;
  const out = createWriteStream(partial, { flags: 'wx', mode: 0o600 });
  try {
    await pipeline(Readable.fromWeb(source), out);
    await rename(partial, file);
    return out.bytesWritten;
  } catch (e) {
    await rm(partial, { force: true });
    throw e;
  }
}
