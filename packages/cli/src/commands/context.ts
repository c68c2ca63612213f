import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { errors, validate } from '@cairn/domain';
import { readCliSettings } from '../config';
import {
  contextNameSchema,
  contextsPath,
  loadContexts,
  parseContext,
  saveContexts,
  type Context,
} from '../remote/contexts';
import { render, withOutput, type OutputOptions } from '../remote/output';
import { readSecret } from '../remote/secret';

const pathOf = () => contextsPath(readCliSettings().configHome);

interface AddFlags {
  apiUrl: string;
  operator: string;
  keyFile?: string;
  keyStdin?: boolean;
  cluster?: string;
  use?: boolean;
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
    .action(async (name: string, flags: AddFlags) => {
      validate(contextNameSchema.label('name'), name);
      const path = pathOf();
      const file = await loadContexts(path);
      let keyFile = flags.keyFile === undefined ? undefined : resolve(flags.keyFile);
      if (keyFile === undefined) {
        const key = await readSecret(flags.keyStdin, `API key of '${flags.operator}': `, '--key-stdin');
        keyFile = join(dirname(path), 'keys', name);
        await mkdir(dirname(keyFile), { recursive: true, mode: 0o700 });
        await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
        await chmod(keyFile, 0o600);
      }
      const entry = parseContext({
        'api-url': flags.apiUrl,
        operator: flags.operator,
        'key-file': keyFile,
        ...(flags.cluster ? { cluster: flags.cluster } : {}),
      });
      file.contexts[name] = entry;
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
      const path = pathOf();
      const file = await loadContexts(path);
      if (!file.contexts[name]) throw errors.notFound(`No context named '${name}' in ${path}.`);
      file['current-context'] = name;
      await saveContexts(path, file);
      process.stderr.write(`Now using context '${name}'.\n`);
    });
  withOutput(context.command('list').description('list the contexts (the current one marked *)')).action(
    async (flags: OutputOptions) => {
      const file = await loadContexts(pathOf());
      const rows = Object.entries(file.contexts).map(([name, c]: [string, Context]) => ({
        current: file['current-context'] === name ? '*' : '',
        name,
        ...c,
      }));
      process.stdout.write(
        render(rows, ['current', 'name', 'api-url', 'operator', 'cluster', 'key-file'], flags, 'name'),
      );
    },
  );
  context
    .command('remove')
    .description('remove a context (its key file stays)')
    .argument('<name>', 'context name')
    .action(async (name: string) => {
      const path = pathOf();
      const file = await loadContexts(path);
      if (!file.contexts[name]) throw errors.notFound(`No context named '${name}' in ${path}.`);
      delete file.contexts[name];
      if (file['current-context'] === name) delete file['current-context'];
      await saveContexts(path, file);
      process.stderr.write(`Context '${name}' removed.\n`);
    });
}
