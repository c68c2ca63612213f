import type { Command } from 'commander';
import { EXIT } from './exit-codes';

const EXIT_MEANING: Record<keyof typeof EXIT, string> = {
  OK: 'success; also a collector running with `--interval` stopped by SIGTERM or SIGINT (its round ends at its next batch)',
  FAILED: 'any other failure (a partial one too: an S3 secret left unsealed, an account not collected)',
  USAGE: 'the command line: an unknown command or option, a missing argument, a missing confirmation',
  NOT_FOUND: 'what was named does not exist (API 404, an unknown context)',
  FORBIDDEN: 'no key, a wrong key, or an operator not allowed to do this (API 401, 403)',
  REFUSED: 'the input was refused (API 4xx validation, or a value refused before asking)',
  UNAVAILABLE: 'worth a retry: the API did not answer, or answered 5xx',
};

function walk(cmd: Command, path: string[], out: string[]): void {
  // A fixed width: the page must not depend on the terminal that generated it.
  cmd.configureHelp({ helpWidth: 100 });
  const name = [...path, cmd.name()].join(' ');
  out.push(`## \`${name}\`\n\n\`\`\`text\n${cmd.helpInformation().trimEnd()}\n\`\`\`\n`);
  for (const sub of cmd.commands) walk(sub, [...path, cmd.name()], out);
}

/** docs/cli.md: every command's own --help, generated (`pnpm docs:cli`), so the page cannot drift. */
export function cliReference(program: Command): string {
  const out = [
    '# `cairn` command reference\n',
    "<!-- Generated from the CLI's own help by `pnpm docs:cli`; do not edit (a test compares). -->\n",
    '## Contexts and keys\n',
    'API commands find the management API through a context in `$XDG_CONFIG_HOME/cairn/config.yaml` (default',
    '`~/.config`; mode 0600): its URL, the operator, the path of a key file, and a default cluster. `--context`',
    'picks one, else `CAIRN_CONTEXT`, else the current one. `CAIRN_API_URL` and `CAIRN_API_KEY` /',
    '`CAIRN_API_KEY_FILE` override the context. Keys and passwords never go on the command line: a key comes',
    'from a file, `--key-stdin` or a prompt; a password from `--password-stdin` or a prompt (no echo, on a',
    'terminal only). Lists follow `next` through every page unless `--limit` is given.\n',
    "The API's URL is its root, `http://127.0.0.1:8000`; the address the start banner prints,",
    '`http://127.0.0.1:8000/api/v1/`, means the same. `cairn context add` calls the API before it saves',
    'anything (`GET /api/v1/whoami/` with the key, and the default cluster if given) and says what is wrong:',
    'no answer (exit 6), the key refused (4), no management API or no such cluster there (3). A pasted header',
    'line (`Authorization: ApiKey admin:…`) is refused: the key is what follows `ApiKey `. `--no-check` saves',
    'a context without asking, for setting one up offline.\n',
    'A command on one user, cluster or operator takes its id or its name (digits alone are an id). A user',
    "name is looked up in `--cluster`, else in the context's default cluster, else in every cluster, where it",
    "must name one user. `users list` lists the context's default cluster unless given `--cluster` or",
    '`--all-clusters`. `users delete`, `clusters delete` and `rings rollback` ask for confirmation on a',
    'terminal; a script adds `--yes` (without it and without a terminal to ask on, they exit 2 and change',
    'nothing).\n',
    '## Exit codes\n',
    '| code | meaning |\n| --- | --- |',
    ...Object.entries(EXIT).map(([k, v]) => `| ${v} | ${EXIT_MEANING[k as keyof typeof EXIT]} |`),
    '',
  ];
  walk(program, [], out);
  return `${out.join('\n')}`;
}
