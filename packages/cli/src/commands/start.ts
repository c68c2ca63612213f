import type { Command } from 'commander';

export function registerStart(program: Command): void {
  program
    .command('start')
    .description(
      'run the management API and the auth gateway in one process (embedded defaults: PGlite under CAIRN_DATA_DIR, tokens in memory)',
    )
    // The launcher loads both servers: imported when it runs, not for every other command.
    .action(async () => (await import('../start')).startAll());
}
