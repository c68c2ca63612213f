import { Option, type Command } from 'commander';
import { OPERATOR_ROLES, type OperatorRole } from '@cairn/domain/models';
import { collect } from '../remote/session';
import { managementApi } from '../servers';
import { withDatabase } from './database';

/** `cairn operator create`: on the host, straight into the database (the first admin, automation). */
export function registerOperator(program: Command): void {
  const operator = program
    .command('operator')
    .description(
      "host command: create an operator in the database directly (the API's own commands are 'cairn operators')",
    );
  operator
    .command('create')
    .description('create an operator in the database and print its API key once')
    .requiredOption('--name <name>', 'operator name')
    .addOption(new Option('--role <role>', 'what it may do').choices(OPERATOR_ROLES).makeOptionMandatory())
    .option('--cluster <id|name>', 'limit it to this cluster (repeatable)', collect)
    .action(async (flags: { name: string; role: OperatorRole; cluster?: string[] }) => {
      const { operatorNameSchema, validate } = await import('@cairn/domain');
      const name = validate<string>(operatorNameSchema.required().label('name'), flags.name);
      const { createOperatorWithClusterNames, migrateLatest, SYSTEM_ACTING } = await managementApi();
      await withDatabase(async (db) => {
        await migrateLatest(db);
        const input = { name, role: flags.role, clusters: flags.cluster ?? [] };
        const { operator: made, key } = await createOperatorWithClusterNames(db, SYSTEM_ACTING.cli, input);
        process.stdout.write(
          `Operator '${made.name}' (${made.role}) created. Its API key is shown only now:\n\n` +
            `  Authorization: ApiKey ${made.name}:${key}\n`,
        );
      });
    });
}
