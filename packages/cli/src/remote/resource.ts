import type { Command } from 'commander';
import { api, apiError, type ApiTarget } from '../api-client';
import { collect, targetOf } from './session';
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
}

export const print = (data: Row | Row[], view: ResourceView, opts: OutputOptions): void =>
  void process.stdout.write(render(data, view.columns, opts));

/** `<resource> list [--filter f=v]... [--limit n]`, following `next` through every page. */
export function addList(
  parent: Command,
  view: ResourceView,
  extra: (cmd: Command) => Command = (c) => c,
  params: (flags: Record<string, unknown>) => [string, string][] = () => [],
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
        const query = [...(await Promise.resolve(params(flags))), ...filterParams(flags.filter)];
        print(
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
  return withOutput(parent.command('show').description(`show one ${view.noun}`))
    .argument('<id>', `the ${view.noun}'s id`)
    .action(async (id: string, flags: OutputOptions, cmd: Command) => {
      print(
        await call(
          await targetOf(cmd),
          'GET',
          `${view.path}${encodeURIComponent(id)}/`,
          `reading ${view.noun} ${id}`,
          200,
        ),
        view,
        flags,
      );
    });
}

/** `<resource> delete <id>` */
export function addDelete(parent: Command, view: ResourceView, note = ''): Command {
  return parent
    .command('delete')
    .description(`delete a ${view.noun}${note}`)
    .argument('<id>', `the ${view.noun}'s id`)
    .action(async (id: string, _flags: unknown, cmd: Command) => {
      await call(
        await targetOf(cmd),
        'DELETE',
        `${view.path}${encodeURIComponent(id)}/`,
        `deleting ${view.noun} ${id}`,
        204,
      );
      process.stderr.write(`Deleted ${view.noun} ${id}.\n`);
    });
}
