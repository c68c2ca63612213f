import type { Command } from 'commander';
import { api, apiError } from '../api-client';
import { collectorRoundOptions, parseInterval, runRounds } from '../collector-loop';
import { render, withOutput, type OutputOptions } from '../remote/output';
import { clusterIdOf, targetOf } from '../remote/session';

export function registerCapacity(program: Command): void {
  const capacity = program.command('capacity').description('raw disk capacity per ring set');
  capacity
    .command('collect')
    .description(
      "read the object rings and every storage node's recon, report the devices to the management API; with --interval, repeat (SIGTERM or SIGINT then abandons the round, sends nothing and exits 0)",
    )
    .requiredOption('--cluster <id|name>', 'the cluster')
    .requiredOption('--swift-dir <dir>', 'where the rings and swift.conf are (e.g. /etc/swift)')
    .option('--interval <seconds>', 'repeat every so many seconds')
    .action(async (flags: { cluster: string; swiftDir: string; interval?: string }, cmd: Command) =>
      capacityCollect(flags, cmd),
    );

  withOutput(
    capacity
      .command('show')
      .description('the capacity table of a cluster: raw, used and free TB and device fill per ring set'),
  )
    .argument('[cluster]', "the cluster's id or name (default: the context's cluster)")
    .action(async (cluster: string | undefined, opts: OutputOptions, cmd: Command) => {
      const target = await targetOf(cmd);
      const id = await clusterIdOf(target, cluster);
      const r = await api(target, 'GET', `/api/v1/clusters/${id}/capacity/list/`);
      if (r.status !== 200) throw apiError(`reading the capacity of cluster ${id}`, r);
      const rows = (r.json as { capacity: Record<string, unknown>[] }).capacity;
      // The table and CSV flatten the device statistics into columns; JSON and YAML keep the API's shape.
      const flat = rows.map(({ pct_used_stats: stats, ...r }) => ({ ...r, ...(stats as Record<string, unknown>) }));
      const shown = opts.output === 'json' || opts.output === 'yaml' ? rows : flat;
      process.stdout.write(
        await render(
          shown,
          [
            'ring_set',
            'total_raw_tb',
            'total_used_tb',
            'total_free_tb',
            'total_used_pct',
            'count',
            'min',
            'max',
            'avg',
            'pct_95',
          ],
          opts,
          'ring_set',
        ),
      );
    });
}

async function capacityCollect(
  flags: { cluster: string; swiftDir: string; interval?: string },
  cmd: Command,
): Promise<void> {
  const interval = parseInterval(flags.interval);
  const { options, progress } = await collectorRoundOptions(flags, cmd);
  // The collector (its Swift client code) loads when it runs, not for every command.
  const { collectOnce } = await import('../capacity/collect');
  const round = async (signal?: AbortSignal) => {
    const r = await collectOnce({ ...options, signal }).finally(() => progress.clear());
    if (r.stopped) {
      process.stdout.write(
        `${new Date().toISOString()} stopped early: ${r.stopped.polled} of ${r.stopped.nodes} storage node(s) answered; no report sent\n`,
      );
      return;
    }
    process.stdout.write(
      `${new Date().toISOString()} cluster ${r.clusterId}: reported ${r.devices} device(s), ${r.reported} with usage\n`,
    );
  };
  return runRounds(interval, round);
}
