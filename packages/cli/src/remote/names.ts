import type { Command } from 'commander';
import { errors } from '@cairn/domain/errors';
import { findCluster } from '../utilization/client';
import { listAll } from './list';
import type { Target } from './target';

/**
 * How a command finds the id of what a person named: an id (digits only) is used as it is; a name
 * is looked up. A name made of digits only is therefore taken as an id.
 */
export interface Lookup {
  /** What the argument is, for the help: "the user's id or name". */
  argument: string;
  /** The options the lookup reads (users: --cluster, to pick among same-named users). */
  options?: (cmd: Command) => Command;
  idOf: (target: Target, given: string, flags: Record<string, unknown>) => Promise<string>;
}

const isId = (given: string) => /^\d+$/.test(given);
const idOfUri = (uri: unknown) => /\/(\d+)\/$/.exec(String(uri))?.[1] ?? String(uri);

/**
 * A storage user's id from its id or name. Names are unique within a cluster only: a name is looked
 * up in `cluster` (--cluster), else in the context's default cluster, else in every cluster, where
 * it must name one user.
 */
export async function userIdOf(target: Target, given: string, cluster?: string): Promise<string> {
  if (isId(given)) return given;
  const scope = cluster ?? target.cluster;
  const params: [string, string][] = [['user', given]];
  if (scope) params.push(isId(scope) ? ['cluster', scope] : ['cluster__name', scope]);
  const found = await listAll(target, '/api/v1/users/', params, 100);
  if (found.length === 1) return String(found[0]!.id);
  if (found.length === 0) {
    const where = scope
      ? ` in cluster '${scope}'${cluster === undefined ? " (the context's default cluster; --cluster names another)" : ''}`
      : '';
    throw errors.notFound(`No user named '${given}'${where}.`);
  }
  const names = await Promise.all(
    [...new Set(found.map((u) => idOfUri(u.cluster)))].map(async (id) => {
      const c = await findCluster(target, id).catch(() => undefined);
      return c ? `'${c.name}' (id ${id})` : `id ${id}`;
    }),
  );
  throw errors.invalidInput(
    `There is a user named '${given}' in each of the clusters ${names.join(', ')}: say which with --cluster <id|name>.`,
  );
}

/** An operator's id from its id or name (operator names are unique). */
export async function operatorIdOf(target: Target, given: string): Promise<string> {
  if (isId(given)) return given;
  const found = await listAll(target, '/api/v1/operators/', [['name', given]], 1);
  if (!found[0]) throw errors.notFound(`No operator named '${given}'.`);
  return String(found[0].id);
}

export const USER_LOOKUP: Lookup = {
  argument: "the user's id or name",
  options: (cmd) =>
    cmd.option(
      '--cluster <id|name>',
      "the user's cluster, when a name is given (default: the context's; needed when several clusters have the name)",
    ),
  idOf: (target, given, flags) =>
    userIdOf(target, given, flags.cluster === undefined ? undefined : String(flags.cluster)),
};

export const OPERATOR_LOOKUP: Lookup = {
  argument: "the operator's id or name",
  idOf: (target, given) => operatorIdOf(target, given),
};

export const CLUSTER_LOOKUP: Lookup = {
  argument: "the cluster's id or name",
  idOf: async (target, given) => (isId(given) ? given : String((await findCluster(target, given)).id)),
};
