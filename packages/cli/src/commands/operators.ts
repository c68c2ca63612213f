import { Option, type Command } from 'commander';
import { OPERATOR_ROLES } from '@cairn/domain/models';
import { withOutput, type OutputOptions } from '../remote/output';
import { addDelete, addList, addShow, call, print, type ResourceView } from '../remote/resource';
import { collect, targetOf } from '../remote/session';
import type { Target } from '../remote/target';
import { listAll } from '../remote/list';
import { OPERATOR_LOOKUP, operatorIdOf } from '../remote/names';

const VIEW: ResourceView = {
  path: '/api/v1/operators/',
  noun: 'operator',
  columns: ['id', 'name', 'role', 'clusters'],
  lookup: OPERATOR_LOOKUP,
};
const KEYS: ResourceView = { path: '', noun: 'API key', columns: ['id', 'created_at'] };
/** The keys of the operator `given` names (its id or name). */
const keysPath = async (target: Target, given: string) =>
  `${VIEW.path}${encodeURIComponent(await operatorIdOf(target, given))}/keys/`;

export function registerOperators(program: Command): void {
  const operators = program
    .command('operators')
    .description('who may call the management API, and their API keys (management API; admins only)');
  addList(operators, VIEW);
  addShow(operators, VIEW);
  withOutput(operators.command('create').description('create an operator; its first API key is shown only now'))
    .requiredOption('--name <name>', 'operator name')
    .addOption(new Option('--role <role>', 'what it may do').choices(OPERATOR_ROLES).makeOptionMandatory())
    .option('--cluster <uri|id>', 'limit it to this cluster (repeatable)', collect)
    .action(async (flags: OutputOptions & { name: string; role: string; cluster?: string[] }, cmd: Command) => {
      const clusters = (flags.cluster ?? []).map((c) => (/^\d+$/.test(c) ? `/api/v1/clusters/${c}/` : c));
      const made = await call(await targetOf(cmd), 'POST', VIEW.path, 'creating the operator', 201, {
        name: flags.name,
        role: flags.role,
        clusters,
      });
      await print(made, { ...VIEW, columns: [...VIEW.columns, 'api_key'] }, flags);
    });
  addDelete(operators, VIEW, ' and its keys');

  const keys = operators.command('keys').description("an operator's API keys");
  withOutput(keys.command('list').description("list an operator's keys (never the keys themselves)"))
    .argument('<operator>', OPERATOR_LOOKUP.argument)
    .action(async (operator: string, flags: OutputOptions, cmd: Command) => {
      const target = await targetOf(cmd);
      await print(await listAll(target, await keysPath(target, operator), []), KEYS, flags);
    });
  withOutput(keys.command('create').description('issue another key; it is shown only now'))
    .argument('<operator>', OPERATOR_LOOKUP.argument)
    .action(async (operator: string, flags: OutputOptions, cmd: Command) => {
      const target = await targetOf(cmd);
      await print(
        await call(target, 'POST', await keysPath(target, operator), `issuing a key to operator ${operator}`, 201, {}),
        { ...KEYS, columns: [...KEYS.columns, 'key'] },
        flags,
      );
    });
  keys
    .command('revoke')
    .description('revoke one key at once')
    .argument('<operator>', OPERATOR_LOOKUP.argument)
    .argument('<key-id>', "the key's id")
    .action(async (operator: string, keyId: string, _flags: unknown, cmd: Command) => {
      const target = await targetOf(cmd);
      await call(
        target,
        'DELETE',
        `${await keysPath(target, operator)}${encodeURIComponent(keyId)}/`,
        `revoking key ${keyId}`,
        204,
      );
      process.stderr.write(`Revoked key ${keyId} of operator ${operator}.\n`);
    });
}
