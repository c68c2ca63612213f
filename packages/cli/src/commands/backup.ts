import type { Command } from 'commander';
import { collectorConfigOf } from '../remote/session';

/** `cairn backup FILE` and `cairn restore FILE [--force]`: the embedded database (docs/backup.md). */
export function registerBackup(program: Command): void {
  program
    .command('backup')
    .description(
      'write a consistent copy of the embedded database to FILE; while cairn start runs, through its management API (an admin key with access to every cluster)',
    )
    .argument('<file>', 'where to write the backup (written whole, then renamed into place, mode 0600)')
    .action(
      async (file: string, _flags: unknown, cmd: Command) =>
        void process.stdout.write(
          `${await (await import('../backup/backup')).backupCommand(file, () => collectorConfigOf(cmd))}\n`,
        ),
    );
  program
    .command('restore')
    .description('make CAIRN_DATA_DIR the database in FILE (with cairn stopped)')
    .argument('<file>', 'a backup written by cairn backup')
    .option('--force', 'replace a data directory that is not empty (the old one is moved aside, not deleted)')
    .action(
      async (file: string, flags: { force?: boolean }) =>
        void process.stdout.write(`${await (await import('../backup/restore')).restoreCommand(file, flags)}\n`),
    );
}
