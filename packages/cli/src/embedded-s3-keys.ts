import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Deps, UnopenableSecrets } from '@cairn/management-api';
import { errors } from '@cairn/domain/errors';
import { managementApi } from './servers';

/**
 * The embedded start's S3 keyring, so that S3 credentials work out of the box without anyone
 * choosing a key: made once, 32 random bytes under key id `embedded`, kept beside the PGlite
 * directory (mode 0600) and read at every later start, because secrets sealed under it must open
 * again. A deployment with its own Postgres configures CAIRN_S3_SECRET_KEYS instead (docs/s3.md);
 * this is never used there.
 *
 * It is kept outside the data directory, so a backup of one is not a backup of the other (a
 * backup holds no secret in clear); `cairn backup` and `cairn restore` name the file to keep and
 * where it goes. A new key is made only for a database that holds no sealed secret: over secrets
 * sealed under a lost key it would only make every one of them fail, so the start refuses.
 */
export const EMBEDDED_KEY_ID = 'embedded';

/** Where the embedded keyring is kept: beside the data directory. */
export const embeddedS3KeysFile = (dataDir: string): string => resolve(dirname(resolve(dataDir)), 's3-secret-keys');

interface Keys {
  s3SecretKeys: string;
  s3CurrentKeyId: string;
}

type EmbeddedConfig = { databaseUrl?: string; dataDir: string; s3SecretKeys?: string };

/** The key file's keyring; undefined when there is no key file. */
export function readEmbeddedS3Keys(dataDir: string): Keys | undefined {
  let text: string;
  try {
    text = readFileSync(embeddedS3KeysFile(dataDir), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  return { s3SecretKeys: text.trim(), s3CurrentKeyId: EMBEDDED_KEY_ID };
}

/** True when the config takes its S3 keys from the embedded key file (embedded, and none configured). */
export const usesEmbeddedS3Keys = (config: EmbeddedConfig): boolean => !config.databaseUrl && !config.s3SecretKeys;

/** For commands that only read secrets (s3 reseal): the key file's keys when it applies and exists; never makes one. */
export function withExistingEmbeddedS3Keys<C extends EmbeddedConfig>(config: C): C {
  const keys = usesEmbeddedS3Keys(config) ? readEmbeddedS3Keys(config.dataDir) : undefined;
  return keys ? { ...config, ...keys } : config;
}

/**
 * For the embedded start, `db` being its open database: the key file's keys; without a key file,
 * a new one (O_EXCL, 0600), but only when the database holds no sealed S3 secret. When it holds
 * some, they were sealed under a key that is gone: refused with a sentence, nothing written.
 */
export async function withEmbeddedS3Keys<C extends EmbeddedConfig>(config: C, db: Deps['db']): Promise<C> {
  if (!usesEmbeddedS3Keys(config)) return config;
  const existing = readEmbeddedS3Keys(config.dataDir);
  if (existing) return { ...config, ...existing };
  const { unopenableSecrets } = await managementApi();
  const sealed = await unopenableSecrets(db, undefined);
  if (sealed.length > 0) throw embeddedKeysRefusal(config.dataDir, sealed);
  const file = embeddedS3KeysFile(config.dataDir);
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, `${EMBEDDED_KEY_ID}:${randomBytes(32).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  return { ...config, ...readEmbeddedS3Keys(config.dataDir)! };
}

/**
 * The start's refusal when the embedded database holds S3 secrets its keys do not open: what is
 * missing, where it goes, and that nothing was made in its place.
 */
export function embeddedKeysRefusal(dataDir: string, unopenable: UnopenableSecrets[]): Error {
  return errors.invalidInput(
    `Cairn did not start. ${embeddedKeysAdvice(dataDir, unopenable)} Then start again. No new key was made: one would not open them (docs/backup.md).`,
  );
}

/** Per key id that does not open the embedded database's secrets: what is missing, and where it goes. */
export function embeddedKeysAdvice(dataDir: string, unopenable: UnopenableSecrets[]): string {
  const file = embeddedS3KeysFile(dataDir);
  const lines = unopenable.map((u) => {
    const held = `The embedded database in ${resolve(dataDir)} holds ${u.credentials} S3 credential(s) whose secret is sealed under key id '${u.keyId}'`;
    if (u.keyId !== EMBEDDED_KEY_ID)
      return `${held}, which was configured with CAIRN_S3_SECRET_KEYS: set CAIRN_S3_SECRET_KEYS to the keys in use when they were sealed.`;
    if (u.why === 'missing')
      return `${held}, the key in ${file}, and that file is not there: put back the s3-secret-keys file kept with the backup (or from beside the old data directory) as ${file}, or set CAIRN_S3_SECRET_KEYS to 'embedded:<that key>'.`;
    return `${held}, and they do not open under the key in ${file}, which is another key than the one they were sealed with: put back the s3-secret-keys file kept with the backup (or from beside the old data directory) as ${file}.`;
  });
  return lines.join(' ');
}
