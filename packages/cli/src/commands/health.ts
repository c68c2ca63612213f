import type { Command } from 'commander';
import { collectorRoundOptions, parseInterval, runRounds } from '../collector-loop';

/** `cairn health …`: the collector here; `cairn health show` is added to the same command. */
export function registerHealth(program: Command): Command {
  const health = program.command('health').description("a cluster's health from its storage nodes' recon");
  health
    .command('collect')
    .description(
      "read the rings and every storage node's recon (disks, replication, async pendings, quarantines, ring md5, clock, load), send the round to the management API; with --interval, repeat (SIGTERM or SIGINT then abandons the round, sends nothing and exits 0)",
    )
    .requiredOption('--cluster <id|name>', 'the cluster')
    .requiredOption('--swift-dir <dir>', 'where the rings are (e.g. /etc/swift)')
    .option('--interval <seconds>', 'repeat every so many seconds')
    .action(async (flags: { cluster: string; swiftDir: string; interval?: string }, cmd: Command) =>
      healthCollect(flags, cmd),
    );
  return health;
}

async function healthCollect(flags: { cluster: string; swiftDir: string; interval?: string }, cmd: Command) {
  const interval = parseInterval(flags.interval);
  const { options, progress } = await collectorRoundOptions(flags, cmd);
  // The collector (its Swift client code) loads when it runs, not for every command.
  const { collectHealthOnce } = await import('../health/collect');
  const round = async (signal?: AbortSignal) => {
    const r = await collectHealthOnce({ ...options, signal }).finally(() => progress.clear());
    const at = new Date().toISOString();
    if (r.stopped) {
      process.stdout.write(
        `${at} stopped early: ${r.answered} of ${r.nodes} storage node(s) answered; no round sent\n`,
      );
      return;
    }
    const sent = r.roundId === undefined ? 'round sent' : `round ${r.roundId} sent`;
    const open = r.openFindings === undefined ? '' : `; ${r.openFindings} finding(s) open`;
    process.stdout.write(
      `${at} cluster ${r.clusterId}: ${sent}: ${r.answered} of ${r.nodes} storage node(s) answered, ${r.nodes - r.answered} silent, ${r.endpointErrors} endpoint error(s)${open}\n`,
    );
  };
  return runRounds(interval, round);
}
