import type { Command } from 'commander';
import { errors } from '@cairn/domain/errors';
import { withExistingEmbeddedS3Keys } from '../embedded-s3-keys';
import { createProgress } from '../progress';
import { managementApi } from '../servers';

export function registerS3(program: Command): void {
  program
    .command('s3')
    .description('host commands for S3 credentials')
    .command('reseal')
    .description(
      're-encrypt every S3 secret under CAIRN_S3_CURRENT_KEY_ID (key rotation; safe to interrupt and run again)',
    )
    .action(s3Reseal);
}

async function s3Reseal(): Promise<void> {
  const { createDatabase, readConfig, resealAll, s3KeyringOf } = await managementApi();
  const config = withExistingEmbeddedS3Keys(readConfig());
  const keyring = s3KeyringOf(config);
  if (!keyring)
    throw errors.invalidInput(
      's3 reseal needs CAIRN_S3_SECRET_KEYS (every key still in use) and CAIRN_S3_CURRENT_KEY_ID (the new one).',
    );
  const progress = createProgress();
  const db = createDatabase({ url: config.databaseUrl, dataDir: config.dataDir, poolMax: 2 });
  try {
    const r = await resealAll(db, keyring, 500, (p) =>
      progress.update(`${p.checked} checked, ${p.resealed} resealed`),
    ).finally(() => progress.clear());
    process.stdout.write(
      `${r.checked} S3 credential(s) checked, ${r.resealed} resealed under key '${keyring.currentKeyId}'.\n`,
    );
    if (r.unopenable.length > 0) {
      process.stderr.write(
        `${r.unopenable.length} could not be opened with the configured keys and were left as they are (their key was removed too early, or they were altered): ${r.unopenable.slice(0, 20).join(', ')}${r.unopenable.length > 20 ? ', …' : ''}\n`,
      );
      process.exitCode = 1;
    }
  } finally {
    await db.destroy();
  }
}
