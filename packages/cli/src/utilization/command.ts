import { parseArgs } from 'node:util';
import { errors } from '@cairn/domain';
import { readCollectorConfig } from '../config';
import { collectStorageOnce } from './collect';
import { ingestLogs } from './ingest';

const line = (stream: NodeJS.WriteStream, text: string) => stream.write(`${text}\n`);

/** `cairn utilization collect|ingest-logs ...` */
export async function utilizationCommand(sub: 'collect' | 'ingest-logs', args: string[]): Promise<void> {
  if (sub === 'ingest-logs') {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { cluster: { type: 'string' }, 'batch-lines': { type: 'string' } } });
    if (!values.cluster) throw errors.invalidInput('utilization ingest-logs needs --cluster <id|name>.');
    const batchLines = values['batch-lines'] === undefined ? undefined : Number(values['batch-lines']);
    if (batchLines !== undefined && (!Number.isInteger(batchLines) || batchLines < 1)) throw errors.invalidInput('--batch-lines must be a positive whole number.');
    const r = await ingestLogs({ cluster: values.cluster, inputs: positionals, config: readCollectorConfig(), batchLines, warn: (l) => line(process.stderr, `warning: ${l}`) });
    line(
      process.stdout,
      `cluster ${r.clusterId}: ${r.lines} line(s), ${r.requests} request(s) counted, ${r.noAccount + r.unknownAccount} unattributed (${r.noAccount} with no account, ${r.unknownAccount} to accounts no user had), ${r.skipped} skipped, ${r.malformed} malformed, ${r.tooOld} too old, ${r.future} in the future; ${r.batches} batch(es) sent, ${r.duplicates} already recorded${r.refused ? `, ${r.refused} record(s) refused` : ''}`,
    );
    return;
  }
  const { values } = parseArgs({ args, options: { cluster: { type: 'string' }, interval: { type: 'string' }, once: { type: 'boolean' } } });
  if (!values.cluster) throw errors.invalidInput('utilization collect needs --cluster <id|name>.');
  const interval = values.interval === undefined ? 3600 : Number(values.interval);
  if (!Number.isInteger(interval) || interval < 60 || 3600 % interval !== 0) throw errors.invalidInput('--interval must be a number of seconds from 60 to 3600 that divides an hour (60, 300, 600, 900, 1800, 3600, ...).');
  const config = readCollectorConfig();
  const round = async () => {
    const r = await collectStorageOnce({
      cluster: values.cluster!,
      config,
      interval,
      progress: (l) => line(process.stderr, l),
      warn: (l) => line(process.stderr, `warning: ${l}`),
    });
    line(process.stdout, `${new Date().toISOString()} cluster ${r.clusterId}: ${r.sampled} of ${r.accounts} account(s) sampled, ${r.failed} failed, in ${r.seconds.toFixed(1)} s`);
  };
  if (values.once || values.interval === undefined) return round();
  // On a schedule, aligned to the interval so each round falls in its own slot of the hour.
  let stopped = false;
  process.once('SIGTERM', () => (stopped = true));
  process.once('SIGINT', () => (stopped = true));
  while (!stopped) {
    await round().catch((e: unknown) => line(process.stderr, `error: ${e instanceof Error ? e.message : String(e)}`));
    const next = Math.ceil((Date.now() + 1) / (interval * 1000)) * interval * 1000;
    while (!stopped && Date.now() < next) await new Promise((r) => setTimeout(r, Math.min(200, next - Date.now())));
  }
}
