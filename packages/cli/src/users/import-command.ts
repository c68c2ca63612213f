import { readFile } from 'node:fs/promises';
import { errors } from '@cairn/domain/errors';
import type { CollectorConfig } from '../config';
import { importUsers } from './import';
import { parseImportFile } from './import-input';
import { parseTempauth } from './import-tempauth';

const line = (stream: NodeJS.WriteStream, text: string) => stream.write(`${text}\n`);

export interface ImportFlags {
  cluster: string;
  tempauth?: string;
  dryRun?: boolean;
}

/** `cairn users import --cluster <c> [--dry-run] (FILE | --tempauth proxy-server.conf)` */
export async function usersImportCommand(
  config: CollectorConfig,
  flags: ImportFlags,
  file: string | undefined,
): Promise<void> {
  if ((file === undefined) === (flags.tempauth === undefined)) {
    throw errors.invalidInput(
      'users import needs one FILE (CSV with a header line, or JSON lines), or --tempauth <proxy-server.conf>.',
    );
  }
  const path = flags.tempauth ?? file!;
  const text = await readFile(path, 'utf8');
  const input = flags.tempauth !== undefined ? parseTempauth(text) : parseImportFile(text);
  const dryRun = flags.dryRun === true;
  const r = await importUsers({
    cluster: flags.cluster,
    input,
    dryRun,
    config,
    out: (l) => line(process.stdout, l),
    err: (l) => line(process.stderr, l),
  });
  line(
    process.stdout,
    dryRun
      ? `Dry run: ${r.created} user(s) would be created, ${r.skipped} skipped (already exist), ${r.refused} refused. Nothing was changed.`
      : `${r.created} user(s) created, ${r.skipped} skipped (already exist), ${r.refused} refused, in ${r.seconds.toFixed(1)} s.`,
  );
  if (r.refused > 0) process.exitCode = 1;
}
