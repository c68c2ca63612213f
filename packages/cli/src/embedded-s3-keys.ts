import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * The embedded start's S3 keyring, so that S3 credentials work out of the box without anyone
 * choosing a key: made once, 32 random bytes, kept beside the PGlite directory (mode 0600) and
 * read at every later start, because secrets sealed under it must open again. A deployment with
 * its own Postgres configures CAIRN_S3_SECRET_KEYS instead (docs/s3.md); this is never used there.
 */
/**
 * Where the embedded keyring is kept: beside the data directory (outside it, so a backup of one is not a backup of the
 * other).
 */
export const embeddedS3KeysFile = (dataDir: string): string => resolve(dirname(dataDir), 's3-secret-keys');

export function embeddedS3Keys(dataDir: string): { s3SecretKeys: string; s3CurrentKeyId: string } {
  const file = embeddedS3KeysFile(dataDir);
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, `embedded:${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return { s3SecretKeys: readFileSync(file, 'utf8').trim(), s3CurrentKeyId: 'embedded' };
}

/** Embedded (no DATABASE_URL) and no keys configured: the embedded keyring; otherwise the config as it is. */
export function withEmbeddedS3Keys<C extends { databaseUrl?: string; dataDir: string; s3SecretKeys?: string }>(
  config: C,
): C {
  return config.databaseUrl || config.s3SecretKeys ? config : { ...config, ...embeddedS3Keys(config.dataDir) };
}
