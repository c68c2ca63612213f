import { errors } from '@cairn/domain/errors';
import type { CollectorConfig } from '../config';
import { EXIT } from '../exit-codes';
import { createProgress } from '../progress';
import { stopOnSignals } from '../stop-signal';
import { collectStorageOnce, type StorageCollectResult } from './collect';
import { ingestLogs } from './ingest';

const line = (stream: NodeJS.WriteStream, text: string) => stream.write(`${text}\n`);

/** `cairn utilization ingest-logs --cluster … [FILE...|-]` */
export async function ingestLogsCommand(
  config: CollectorConfig,
  flags: { cluster: string; batchLines?: string },
  inputs: string[],
): Promise<void> {
  const batchLines = flags.batchLines === undefined ? undefined : Number(flags.batchLines);
  if (batchLines !== undefined && (!Number.isInteger(batchLines) || batchLines < 1))
    throw errors.invalidInput('--batch-lines must be a positive whole number.');
  // A status line on a terminal only (progress.ts); cleared before each warning and the result.
  const progress = createProgress();
  const warn = (l: string) => {
    progress.clear();
    line(process.stderr, `warning: ${l}`);
  };
  const r = await ingestLogs({
    cluster: flags.cluster,
    inputs,
    config,
    batchLines,
    warn,
    progress: progress.update,
  }).finally(() => progress.clear());
  line(
    process.stdout,
    `cluster ${r.clusterId}: ${r.lines} line(s), ${r.requests} request(s) counted, ${r.noAccount + r.unknownAccount} unattributed (${r.noAccount} with no account, ${r.unknownAccount} to accounts no user had), ${r.skipped} skipped, ${r.malformed} malformed${malformedReasons(r.malformedByReason)}, ${r.unknownMethod} with an unknown method, ${r.internal} internal, ${r.tooOld} too old, ${r.future} in the future; ${r.batches} batch(es) sent, ${r.duplicates} already recorded${r.refused ? `, ${r.refused} record(s) refused` : ''}`,
  );
}

/** The round's failed accounts in a few lines: how many, the first few, and why. */
export function failureSummary(r: StorageCollectResult): string {
  const more = r.failed - r.firstFailures.length;
  return `${r.failed} of ${r.accounts} account(s) failed, e.g.:\n${r.firstFailures.map((f) => `  ${f}\n`).join('')}${more > 0 ? `  … and ${more} more\n` : ''}`;
}

/**
 * `cairn utilization collect --cluster … [--interval s] [--once]`. Exits 1 when an account failed
 * in the (last) round: its hour is then incomplete, which a scheduler should notice. With
 * --interval, SIGTERM or SIGINT stops the round at its next batch (what it sampled is recorded
 * and reported) and exits 0: a requested stop is not a failure.
 */
export async function collectCommand(
  config: CollectorConfig,
  flags: { cluster: string; interval?: string; once?: boolean },
): Promise<void> {
  const interval = flags.interval === undefined ? 3600 : Number(flags.interval);
  if (!Number.isInteger(interval) || interval < 60 || 3600 % interval !== 0)
    throw errors.invalidInput(
      '--interval must be a number of seconds from 60 to 3600 that divides an hour (60, 300, 600, 900, 1800, 3600, ...).',
    );
  // Progress lines only for a person watching; logs and schedulers get the result lines.
  const progress = process.stderr.isTTY ? (l: string) => line(process.stderr, l) : () => undefined;
  const round = async (signal?: AbortSignal) => {
    const r = await collectStorageOnce({
      cluster: flags.cluster,
      config,
      interval,
      progress,
      signal,
      warn: (l) => line(process.stderr, `warning: ${l}`),
    });
    const how = r.stopped ? 'stopped early: ' : '';
    line(
      process.stdout,
      `${new Date().toISOString()} cluster ${r.clusterId}: ${how}${r.sampled} of ${r.accounts} account(s) sampled, ${r.failed} failed, in ${r.seconds.toFixed(1)} s`,
    );
    if (r.failed > 0) process.stderr.write(failureSummary(r));
    process.exitCode = r.failed > 0 ? 1 : 0;
  };
  if (flags.once || flags.interval === undefined) return round();
  // On a schedule, aligned to the interval so each round falls in its own slot of the hour.
  const stop = stopOnSignals();
  while (!stop.signal.aborted) {
    await round(stop.signal).catch((e: unknown) =>
      line(process.stderr, `error: ${e instanceof Error ? e.message : String(e)}`),
    );
    const next = Math.ceil((Date.now() + 1) / (interval * 1000)) * interval * 1000;
    await stop.wait(next - Date.now());
  }
  line(process.stderr, 'stopped on request');
  process.exitCode = EXIT.OK;
}

/** " (3 path, 1 status)": malformed lines by reason, when there are any. */
function malformedReasons(byReason: Partial<Record<string, number>>): string {
  const parts = Object.entries(byReason).map(([reason, n]) => `${n} ${reason}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}
