import type { Command } from 'commander';
import { startAll } from '../start';

export function registerStart(program: Command): void {
  program
    .command('start')
    .description(
      'run the management API and the auth gateway in one process (embedded defaults: PGlite under CAIRN_DATA_DIR, tokens in memory)',
    )
    .action(() => startAll());
}
