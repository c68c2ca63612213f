import type { Command } from 'commander';
import { errors } from '@cairn/domain/errors';
import { render, withOutput, type OutputOptions } from '../remote/output';
import { listAll, parseLimit } from '../remote/list';
import { clusterIdOf, collectorConfigOf, targetOf } from '../remote/session';

export function registerUtilization(program: Command): void {
  const utilization = program.command('utilization').description('storage and transfer per account, policy and hour');
  utilization
    .command('collect')
    .description(
      "HEAD every account of the cluster (deleted users' too) with a reseller token (CAIRN_UTILIZATION_USER/_PASSWORD) and record bytes, objects and containers per policy; exits 1 when an account failed. With --interval, SIGTERM or SIGINT stops the round at its next batch (what it sampled is recorded) and exits 0",
    )
    .requiredOption('--cluster <id|name>', 'the cluster')
    .option('--interval <seconds>', 'repeat every so many seconds (dividing 3600)')
    .option('--once', 'one round, recorded as one slot of --interval')
    .action(async (flags: { cluster: string; interval?: string; once?: boolean }, cmd: Command) => {
      const config = await collectorConfigOf(cmd);
      // The collector and the log reader load when they run, not for every command.
      return (await import('../utilization/command')).collectCommand(config, flags);
    });
  utilization
    .command('ingest-logs')
    .description(
      'sum Swift proxy access log lines per account, policy and hour and record them (idempotent batches); gzipped logs are read as they are',
    )
    .requiredOption('--cluster <id|name>', 'the cluster')
    .option('--batch-lines <n>', 'log lines per batch sent')
    .argument('[file...]', "log files, plain or gzip ('-' or none: standard input)")
    .action(async (files: string[], flags: { cluster: string; batchLines?: string }, cmd: Command) => {
      const config = await collectorConfigOf(cmd);
      return (await import('../utilization/command')).ingestLogsCommand(config, flags, files);
    });
  withOutput(
    utilization
      .command('summary')
      .description("each account's storage, transfer and quota use over a time range (quotas as they stand now)"),
  )
    .option('--cluster <id|name>', "the cluster (default: the context's)")
    .requiredOption('--start <time>', 'ISO 8601 date or date-time, UTC (rounded down to the half hour)')
    .requiredOption('--end <time>', 'ISO 8601 date or date-time, UTC (rounded up to the hour)')
    .option('--limit <n>', 'at most this many accounts')
    .action(
      async (flags: OutputOptions & { cluster?: string; start: string; end: string; limit?: string }, cmd: Command) => {
        const target = await targetOf(cmd);
        const id = await clusterIdOf(target, flags.cluster);
        const rows = await listAll(
          target,
          `/api/v1/clusters/${id}/utilization/summary/`,
          [
            ['start', flags.start],
            ['end', flags.end],
          ],
          flags.limit === undefined ? undefined : parseLimit(flags.limit),
        );
        process.stdout.write(
          await render(
            rows,
            [
              'account',
              'hours',
              'bytes_used_avg',
              'bytes_used_peak',
              'object_count',
              'bytes_in',
              'bytes_out',
              'req_count',
              'pct_complete',
              'quota_bytes',
              'quota_bytes_used_pct',
              'quota_count',
              'quota_count_used_pct',
            ],
            flags,
            'account',
          ),
        );
      },
    );
  withOutput(
    utilization
      .command('invoice')
      .description(
        "each account's charges over a time range from a price sheet (JSON: per GB-month stored per policy, per GB out to external networks, per 1,000 requests per class), in exact decimal arithmetic; see docs/utilization.md",
      ),
  )
    .option('--cluster <id|name>', "the cluster (default: the context's)")
    .requiredOption('--start <time>', 'ISO 8601 date or date-time, UTC (rounded down to the half hour)')
    .requiredOption('--end <time>', 'ISO 8601 date or date-time, UTC (rounded up to the hour)')
    .requiredOption('--prices <file>', 'the price sheet, JSON')
    .action(
      async (flags: OutputOptions & { cluster?: string; start: string; end: string; prices: string }, cmd: Command) => {
        const target = await targetOf(cmd);
        const id = await clusterIdOf(target, flags.cluster);
        const [{ readFile }, { parsePriceSheet }, { invoice }] = await Promise.all([
          import('node:fs/promises'),
          import('@cairn/domain'),
          import('../utilization/invoice'),
        ]);
        let raw: unknown;
        try {
          raw = JSON.parse(await readFile(flags.prices, 'utf8'));
        } catch (e) {
          throw errors.invalidInput(`--prices ${flags.prices}: not a readable JSON file (${(e as Error).message}).`);
        }
        let sheet;
        try {
          sheet = parsePriceSheet(raw);
        } catch (e) {
          throw errors.invalidInput(`--prices ${flags.prices}: ${(e as Error).message}`);
        }
        const lines = await invoice(target, id, flags.start, flags.end, sheet);
        process.stdout.write(
          await render(
            lines as unknown as Array<Record<string, unknown>>,
            [
              'account',
              'storage_gb_months',
              'storage',
              'egress_gb',
              'egress',
              'ingress',
              'request_count',
              'requests',
              'total',
              'currency',
            ],
            flags,
            'account',
          ),
        );
      },
    );
}
