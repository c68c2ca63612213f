import { CommanderError, type Command } from 'commander';
import { api, apiError, type ApiTarget } from '../api-client';
import type { Lookup } from './names';
import { askYes, onTerminal } from './secret';
import { collect, targetOf } from './session';
import type { Target } from './target';
import { filterParams, listAll, parseLimit } from './list';
import { render, withOutput, type OutputOptions } from './output';

type Row = Record<string, unknown>;

/** One call that must answer `ok`; anything else becomes an ApiError (and its exit code). */
export async function call(
  target: ApiTarget,
  method: string,
  path: string,
  what: string,
  ok: number,
  body?: unknown,
): Promise<Row> {
  const r = await api(target, method, path, body, method === 'GET' ? 3 : 0);
  if (r.status !== ok) throw apiError(what, r);
  return (r.json ?? {}) as Row;
}

export interface ResourceView {
  /** The list endpoint, e.g. /api/v1/users/ */
  path: string;
  /** What a person calls one, e.g. "user" */
  noun: string;
  columns: string[];
  /** How `show`/`delete` find the one named (an id, or a name); without it, the id only. */
  lookup?: Lookup;
  /** What a person calls one in a question, e.g. "user 'alice' (id 3)". */
  describe?: (row: Row) => string;
}

/** The `<id>` argument of a command on one resource, with the options its lookup reads. */
export function withIdArgument(cmd: Command, view: ResourceView): Command {
  cmd.argument('<id>', view.lookup?.argument ?? `the ${view.noun}'s id`);
  return view.lookup?.options ? view.lookup.options(cmd) : cmd;
}

/** The id of the one `given` names: itself when the view has no lookup. */
export const idOf = (target: Target, view: ResourceView, given: string, flags: Record<string, unknown>) =>
  view.lookup ? view.lookup.idOf(target, given, flags) : Promise.resolve(given);

export const print = async (data: Row | Row[], view: ResourceView, opts: OutputOptions): Promise<void> =>
  void process.stdout.write(await render(data, view.columns, opts));

/** `<resource> list [--filter f=v]... [--limit n]`, following `next` through every page. */
export function addList(
  parent: Command,
  view: ResourceView,
  extra: (cmd: Command) => Command = (c) => c,
  params: (
    flags: Record<string, unknown>,
    target: Target,
  ) => [string, string][] | Promise<[string, string][]> = () => [],
): Command {
  return extra(withOutput(parent.command('list').description(`list ${view.noun}s (every page, unless --limit)`)))
    .option('--filter <field=value>', 'Tastypie filter, e.g. user__startswith=a (repeatable)', collect)
    .option('--limit <n>', 'at most this many')
    .option('--page-size <n>', 'objects asked for per request (at most 1000)', '1000')
    .action(
      async (
        flags: OutputOptions & { filter?: string[]; limit?: string; pageSize: string } & Record<string, unknown>,
        cmd: Command,
      ) => {
        const target = await targetOf(cmd);
        const query = [...(await params(flags, target)), ...filterParams(flags.filter)];
        await print(
          await listAll(
            target,
            view.path,
            query,
            flags.limit === undefined ? undefined : parseLimit(flags.limit),
            parseLimit(flags.pageSize),
          ),
          view,
          flags,
        );
      },
    );
}

/** `<resource> show <id>` */
export function addShow(parent: Command, view: ResourceView): Command {
  return withIdArgument(withOutput(parent.command('show').description(`show one ${view.noun}`)), view).action(
    async (given: string, flags: OutputOptions & Record<string, unknown>, cmd: Command) => {
      const target = await targetOf(cmd);
      const id = await idOf(target, view, given, flags);
      await print(
        await call(target, 'GET', `${view.path}${encodeURIComponent(id)}/`, `reading ${view.noun} ${given}`, 200),
        view,
        flags,
      );
    },
  );
}

/**
 * `<resource> delete <id>`. With `confirm`, it asks on a terminal first (`--yes` does not ask); with
 * no terminal to ask on and no --yes, it refuses (exit 2) rather than wait for an answer.
 */
export function addDelete(parent: Command, view: ResourceView, note = '', confirm = false): Command {
  const cmd = withIdArgument(parent.command('delete').description(`delete a ${view.noun}${note}`), view);
  if (confirm) cmd.option('-y, --yes', 'delete without asking (for scripts)');
  return cmd.action(async (given: string, flags: { yes?: boolean } & Record<string, unknown>, self: Command) => {
    const asking = confirm && !flags.yes;
    if (asking && !onTerminal())
      self.error(
        `error: '${self.parent!.name()} delete' asks for confirmation, and standard input is not a terminal to ask on: add --yes to delete without asking.`,
        { exitCode: 2, code: 'cairn.confirmationRequired' },
      );
    const target = await targetOf(self);
    const id = await idOf(target, view, given, flags);
    const path = `${view.path}${encodeURIComponent(id)}/`;
    if (asking) {
      const row = await call(target, 'GET', path, `reading ${view.noun} ${given}`, 200);
      const what = view.describe?.(row) ?? `${view.noun} ${id}`;
      if (!(await askYes(`Delete ${what}${note}? [y/N] `))) {
        process.stderr.write('Nothing was deleted.\n');
        throw new CommanderError(2, 'cairn.notConfirmed', 'not confirmed');
      }
    }
    await call(target, 'DELETE', path, `deleting ${view.noun} ${given}`, 204);
    process.stderr.write(`Deleted ${view.noun} ${given}${given === id ? '' : ` (id ${id})`}.\n`);
  });
}
