import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { errors } from '@cairn/domain/errors';
import type { Context } from '../remote/contexts';
import { render, withOutput, type OutputOptions } from '../remote/output';
import { readSecret } from '../remote/secret';
import { keyPair, type Target } from '../remote/target';
import { api, apiError, type ApiAnswer } from '../api-client';
import { findCluster } from '../utilization/client';

/** The contexts file and its schemas, loaded when a context command runs, not at every command's start. */
async function contextsFile() {
  const [contexts, { readCliSettings }] = await Promise.all([import('../remote/contexts'), import('../config')]);
  return { ...contexts, path: contexts.contextsPath(readCliSettings().configHome) };
}

interface AddFlags {
  apiUrl: string;
  operator: string;
  keyFile?: string;
  keyStdin?: boolean;
  cluster?: string;
  use?: boolean;
  check: boolean;
}

const NOTHING_SAVED = 'Nothing was saved (--no-check saves it without asking the API).';

/**
 * Asks the API whether the context works: the address serves Cairn's management API, the key is
 * the operator's, and the default cluster exists. Each failure is said with its cause, and its
 * exit code (unreachable 6, key refused 4, no such API or cluster 3).
 */
async function checkContext(target: Target): Promise<void> {
  let r: ApiAnswer;
  try {
    r = await api(target, 'GET', '/api/v1/whoami/', undefined, 0);
  } catch (e) {
    throw errors.unavailable(`${(e as Error).message}; check --api-url. ${NOTHING_SAVED}`);
  }
  const said = (r.json as { error?: string } | null)?.error ?? 'no details';
  if (r.status === 401 || r.status === 403)
    throw errors.unauthenticated(
      `The management API at ${target.apiUrl} refused the key (${r.status}: ${said}): check the key and --operator. ${NOTHING_SAVED}`,
    );
  if (r.status === 404)
    throw errors.notFound(
      `${target.apiUrl} answered 404 to GET /api/v1/whoami/: it does not serve Cairn's management API there; --api-url is the address the start banner prints for it. ${NOTHING_SAVED}`,
    );
  if (r.status !== 200) throw apiError(`checking the key at ${target.apiUrl}`, r);
  if (target.cluster) {
    try {
      await findCluster(target, target.cluster);
    } catch (e) {
      throw Object.assign(e as Error, { message: `--cluster: ${(e as Error).message}. ${NOTHING_SAVED}` });
    }
  }
}

export function registerContext(program: Command): void {
  const context = program
    .command('context')
    .description('named contexts (API URL, operator, key file, default cluster) in $XDG_CONFIG_HOME/cairn/config.yaml');
  context
    .command('add')
    .description(
      'add or replace a context; without --key-file the key is asked for (or read with --key-stdin) and kept in a file of mode 0600 beside the config',
    )
    .argument('<name>', 'context name')
    .requiredOption('--api-url <url>', 'the management API, e.g. https://cairn.example.com')
    .requiredOption('--operator <name>', 'the operator whose key it is')
    .option('--key-file <path>', 'file holding the key (or "<operator>:<key>")')
    .option('--key-stdin', 'read the key from standard input')
    .option('--cluster <id|name>', 'the cluster commands use when --cluster is left out')
    .option('--use', 'make it the current context')
    .option('--no-check', 'save it without calling the API (set up offline)')
    .action(async (name: string, flags: AddFlags) => {
      const [{ validate }, { contextNameSchema }] = await Promise.all([
        import('@cairn/domain'),
        import('../remote/contexts'),
      ]);
      validate(contextNameSchema.label('name'), name);
      const { path, loadContexts, parseContext, saveContexts } = await contextsFile();
      const file = await loadContexts(path);
      // The address and operator first: a mistake in them is said before the key is asked for.
      const entry = await parseContext({
        'api-url': flags.apiUrl,
        operator: flags.operator,
        ...(flags.cluster ? { cluster: flags.cluster } : {}),
      });
      const given =
        flags.keyFile === undefined
          ? await readSecret(flags.keyStdin, 'API key', `API key of '${flags.operator}': `, '--key-stdin')
          : await readFile(resolve(flags.keyFile), 'utf8');
      const key = keyPair(
        given,
        entry.operator,
        flags.keyFile === undefined ? 'The key given' : `The key file ${flags.keyFile}`,
      );
      const owner = key.slice(0, key.indexOf(':'));
      if (owner !== entry.operator)
        throw errors.invalidInput(
          `The key given belongs to operator '${owner}', not to --operator '${entry.operator}'. Nothing was saved.`,
        );
      if (flags.check) await checkContext({ apiUrl: entry['api-url'], apiKey: key, cluster: entry.cluster });
      let keyFile = flags.keyFile === undefined ? undefined : resolve(flags.keyFile);
      if (keyFile === undefined) {
        keyFile = join(dirname(path), 'keys', name);
        await mkdir(dirname(keyFile), { recursive: true, mode: 0o700 });
        await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
        await chmod(keyFile, 0o600);
      }
      file.contexts[name] = { ...entry, 'key-file': keyFile };
      if (flags.use || !file['current-context']) file['current-context'] = name;
      await saveContexts(path, file);
      process.stderr.write(
        `Context '${name}' saved in ${path}${file['current-context'] === name ? ' (current)' : ''}.\n`,
      );
    });
  context
    .command('use')
    .description('make a context the current one')
    .argument('<name>', 'context name')
    .action(async (name: string) => {
      const { path, loadContexts, saveContexts } = await contextsFile();
      const file = await loadContexts(path);
      if (!file.contexts[name]) throw errors.notFound(`No context named '${name}' in ${path}.`);
      file['current-context'] = name;
      await saveContexts(path, file);
      process.stderr.write(`Now using context '${name}'.\n`);
    });
  withOutput(context.command('list').description('list the contexts (the current one marked *)')).action(
    async (flags: OutputOptions) => {
      const { path, loadContexts } = await contextsFile();
      const file = await loadContexts(path);
      const rows = Object.entries(file.contexts).map(([name, c]: [string, Context]) => ({
        current: file['current-context'] === name ? '*' : '',
        name,
        ...c,
      }));
      process.stdout.write(
        await render(rows, ['current', 'name', 'api-url', 'operator', 'cluster', 'key-file'], flags, 'name'),
      );
    },
  );
  context
    .command('remove')
    .description('remove a context (its key file stays)')
    .argument('<name>', 'context name')
    .action(async (name: string) => {
      const { path, loadContexts, saveContexts } = await contextsFile();
      const file = await loadContexts(path);
      if (!file.contexts[name]) throw errors.notFound(`No context named '${name}' in ${path}.`);
      delete file.contexts[name];
      if (file['current-context'] === name) delete file['current-context'];
      await saveContexts(path, file);
      process.stderr.write(`Context '${name}' removed.\n`);
    });
}
