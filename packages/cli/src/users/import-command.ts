import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { errors } from '@cairn/domain';
import { readCollectorConfig } from '../config';
import { importUsers } from './import';
import { parseImportFile } from './import-input';
import { parseTempauth } from './import-tempauth';

const line = (stream: NodeJS.WriteStream, text: string) => stream.write(`${text}\n`);

/** `cairn users import --cluster <c> [--dry-run] (FILE | --tempauth proxy-server.conf)` */
export async function usersImportCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { cluster: { type: 'string' }, tempauth: { type: 'string' }, 'dry-run': { type: 'boolean' } },
  });
  if (!values.cluster) throw errors.invalidInput('users import needs --cluster <id|name>.');
  if ((positionals.length === 1) === (values.tempauth !== undefined) || positionals.length > 1) {
    throw errors.invalidInput('users import needs one FILE (CSV with a header line, or JSON lines), or --tempauth <proxy-server.conf>.');
  }
  const path = values.tempauth ?? positionals[0]!;
  const text = await readFile(path, 'utf8');
  const input = values.tempauth !== undefined ? parseTempauth(text) : parseImportFile(text);
  const dryRun = values['dry-run'] === true;
  const r = await importUsers({
    cluster: values.cluster,
    input,
    dryRun,
    config: readCollectorConfig(),
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
