import { Argument, type Command } from 'commander';

/** Every command path ("" for the top) with the words that may follow it: subcommands, then options. */
export function commandWords(
  cmd: Command,
  path: string[] = [],
  out: Array<[string, string[]]> = [],
): Array<[string, string[]]> {
  const subs = cmd.commands.map((c) => c.name());
  const options = cmd.options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
  out.push([path.join(' '), [...subs, ...options, '--help']]);
  for (const c of cmd.commands) commandWords(c, [...path, c.name()], out);
  return out;
}

/** A bash completion script generated from the command tree: subcommands at each level, then options. */
export function bashCompletion(program: Command): string {
  const cases = commandWords(program)
    .map(([path, words]) => `    '${path}') echo '${words.join(' ')}' ;;`)
    .join('\n');
  return `# cairn completion for bash: source <(cairn completion bash)
_cairn_words() {
  case "$1" in
${cases}
  esac
}
_cairn() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" word i
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case "$word" in -*) continue ;; esac
    case " $(_cairn_words "$path") " in *" $word "*) path="\${path:+$path }$word" ;; esac
  done
  COMPREPLY=($(compgen -W "$(_cairn_words "$path")" -- "$cur"))
}
complete -F _cairn cairn
`;
}

/** zsh runs the same script through its bash completion layer. */
export const zshCompletion = (program: Command): string =>
  `#compdef cairn\n# cairn completion for zsh: source <(cairn completion zsh)\nautoload -U +X bashcompinit && bashcompinit\n${bashCompletion(program).split('\n').slice(1).join('\n')}`;

export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: source <(cairn completion bash)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh']))
    .action((shell: 'bash' | 'zsh') => {
      process.stdout.write(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
    });
}
