import type { Command } from 'commander';
import { errors } from '@cairn/domain/errors';
import { createProgress } from '../progress';
import { collect } from '../remote/session';
import { managementApi } from '../servers';
import { withDatabase } from './database';

interface MigrateFlags {
  cluster?: string[];
  gatewayRole?: string;
  gatewayPasswordFile?: string;
  collector?: string[];
  rollback?: boolean;
  rollbackAll?: boolean;
  yesDestroyAllData?: boolean;
}

export const ROLLBACK_WARNING =
  '--rollback-all reverts every migration: it drops every table and with them all clusters, storage users, S3 credentials, operators and their API keys, quotas, utilization records and the audit trail. Nothing of it can be recovered from Cairn afterwards. To do it, add --yes-destroy-all-data.';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description(
      'apply the migrations, make sure the named clusters exist with these URLs, grant the gateway role what the gateways need, give each collector its operator, key and storage user',
    )
    .option('--cluster <spec>', 'name=<n>,auth_url=<url>,storage_url=<url>[,region=<r>] (repeatable)', collect)
    .option('--gateway-role <role>', 'Postgres role the gateways connect as')
    .option('--gateway-password-file <path>', "file holding that role's password")
    .option('--collector <spec>', 'cluster=<n>,user=<u>,api_key_file=<path>,password_file=<path> (repeatable)', collect)
    .option(
      '--rollback',
      'revert the last batch of migrations (what the last migrate applied; docs/releasing.md says what that loses)',
    )
    .option('--rollback-all', 'revert every migration (destroys all data; needs --yes-destroy-all-data)')
    .option('--yes-destroy-all-data', 'confirm --rollback-all')
    .action(async (flags: MigrateFlags, cmd: Command) => {
      if (flags.rollback || flags.rollbackAll) return rollback(flags, cmd);
      // The same job the container image runs: migrations, declared clusters, gateway role.
      const args = [
        ...(flags.cluster ?? []).flatMap((c) => ['--cluster', c]),
        ...(flags.gatewayRole === undefined ? [] : ['--gateway-role', flags.gatewayRole]),
        ...(flags.gatewayPasswordFile === undefined ? [] : ['--gateway-password-file', flags.gatewayPasswordFile]),
        ...(flags.collector ?? []).flatMap((c) => ['--collector', c]),
      ];
      const { runMigrate } = await managementApi();
      const progress = createProgress();
      progress.update('applying migrations');
      await runMigrate(args, (line) => {
        progress.clear();
        process.stdout.write(`${line}\n`);
        progress.update('working');
      }).finally(() => progress.clear());
    });
}

async function rollback(flags: MigrateFlags, cmd: Command): Promise<void> {
  const which = flags.rollbackAll ? '--rollback-all' : '--rollback';
  if (flags.rollback && flags.rollbackAll)
    throw errors.invalidInput('Give --rollback (the last batch) or --rollback-all (every migration), not both.');
  if (flags.cluster || flags.gatewayRole || flags.collector)
    throw errors.invalidInput(`${which} takes no --cluster, --gateway-role or --collector.`);
  if (flags.rollbackAll && !flags.yesDestroyAllData)
    cmd.error(ROLLBACK_WARNING, { exitCode: 2, code: 'cairn.confirmationRequired' });
  const { migrateRollbackAll, migrateRollbackLast } = await managementApi();
  const progress = createProgress();
  progress.update('reverting migrations');
  await withDatabase(async (db) => {
    const names = await (flags.rollbackAll ? migrateRollbackAll(db) : migrateRollbackLast(db)).finally(() =>
      progress.clear(),
    );
    process.stdout.write(names.length ? `Reverted: ${names.join(', ')}\n` : 'Nothing to do.\n');
  });
}
