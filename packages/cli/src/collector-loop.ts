import type { Command } from 'commander';
import { errors } from '@cairn/domain/errors';
import type { CollectorConfig } from './config';
import { createProgress, type Progress } from './progress';
import { collectorConfigOf } from './remote/session';
import { EXIT } from './exit-codes';
import { stopOnSignals, type StopSignal } from './stop-signal';

/** `--interval <seconds>` of the recon collectors: absent or 0 is one round. */
export function parseInterval(flag: string | undefined): number {
  const interval = flag === undefined ? 0 : Number(flag);
  if (!Number.isInteger(interval) || interval < 0)
    throw errors.invalidInput('--interval must be a whole number of seconds.');
  return interval;
}

/**
 * Runs `round` once (interval 0: its error is the command's, so the exit code follows it), or every
 * `interval` seconds until SIGTERM or SIGINT. On a schedule a failed round is reported on stderr and
 * the next one still runs; a stop signal reaches the running round through `signal`, and the process
 * then exits 0: a requested stop is not a failure. The capacity and health collectors share it
 * (`stopOn` is for tests, whose process cannot take a real SIGTERM).
 */
export async function runRounds(
  interval: number,
  round: (signal?: AbortSignal) => Promise<void>,
  stopOn: () => StopSignal = stopOnSignals,
): Promise<void> {
  if (interval === 0) return round();
  const stop = stopOn();
  while (!stop.signal.aborted) {
    await round(stop.signal).catch((e: unknown) =>
      process.stderr.write(`error: ${e instanceof Error ? e.message : String(e)}\n`),
    );
    await stop.wait(interval * 1000);
  }
  process.stderr.write('stopped on request\n');
  process.exitCode = EXIT.OK;
}

/** What one round of a recon collector (capacity, health) is given. */
export interface CollectorRoundOptions {
  /** Cluster id or name in the management API. */
  cluster: string;
  swiftDir: string;
  config: CollectorConfig;
  warn: (line: string) => void;
  /** Hears each step (and the storage nodes read so far), for a progress line. */
  progress?: (step: string, done?: number, total?: number) => void;
  /** Stops the round (SIGTERM with --interval): reading is abandoned and nothing is sent. */
  signal?: AbortSignal;
}

/** A collector command's round options from its flags: warnings on stderr, a progress line on a terminal. */
export async function collectorRoundOptions(
  flags: { cluster: string; swiftDir: string },
  cmd: Command,
): Promise<{ options: CollectorRoundOptions; progress: Progress }> {
  const progress = createProgress();
  const options: CollectorRoundOptions = {
    cluster: flags.cluster,
    swiftDir: flags.swiftDir,
    config: await collectorConfigOf(cmd),
    warn: (l: string) => {
      progress.clear();
      process.stderr.write(`warning: ${l}\n`);
    },
    progress: progress.update,
  };
  return { options, progress };
}
