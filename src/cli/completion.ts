import { COMMAND_HELP } from './command-help.js';
import { UsageError } from './usage.js';

/**
 * `lorenz completion bash|zsh`: a completion script from the commands' help (command-help.ts),
 * so it offers exactly the words and flags the commands take. zsh runs the bash function
 * through bashcompinit: one completion logic, tested in bash.
 */

const shellWords = (words: readonly string[]): string => words.join(' ');

/** The bash function: command words first, then that command's flags, files for values. */
export function bashCompletion(): string {
  const entries = Object.entries(COMMAND_HELP);
  const first = [...new Set(entries.map(([words]) => words.split(' ')[0] ?? ''))];
  const seconds = first
    .map((word) => {
      const rest = entries
        .map(([words]) => words.split(' '))
        .filter((parts) => parts[0] === word && parts.length > 1)
        .map((parts) => parts[1] ?? '');
      return rest.length > 0 ? `    ${word}) words="${shellWords(rest)}" ;;` : '';
    })
    .filter(Boolean);
  const flagCases = entries.map(([words, help]) => {
    const flags = help.flags.flatMap((flag) => [
      `--${flag.name}`,
      ...(flag.short ? [`-${flag.short}`] : []),
    ]);
    return `    "${words}") flags="${shellWords([...flags, '--help'])}" ;;`;
  });
  const valued = entries.flatMap(([, help]) =>
    help.flags
      .filter((flag) => flag.value !== undefined)
      .flatMap((flag) => [`--${flag.name}`, ...(flag.short ? [`-${flag.short}`] : [])]),
  );
  return `# lorenz completion for bash: source <(lorenz completion bash)
_lorenz() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]}
  local command="" words="" flags=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W "${shellWords([...first, '--help', '--version'])}" -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${seconds.join('\n')}
  esac
  if [ -n "$words" ] && [ "$COMP_CWORD" -eq 2 ]; then
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return
  fi
  if [ -n "$words" ]; then command="\${COMP_WORDS[1]} \${COMP_WORDS[2]}"; else command="\${COMP_WORDS[1]}"; fi
  case "$command" in
${flagCases.join('\n')}
  esac
  case "$prev" in
    ${[...new Set(valued)].join('|')})
      COMPREPLY=($(compgen -f -- "$cur"))
      return
      ;;
  esac
  if [ "$command" = completion ]; then
    COMPREPLY=($(compgen -W "bash zsh" -- "$cur"))
  elif [[ "$cur" == -* ]] || [ -z "$cur" ]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o default -F _lorenz lorenz
`;
}

export function zshCompletion(): string {
  return `#compdef lorenz
# lorenz completion for zsh: source <(lorenz completion zsh) in ~/.zshrc (after compinit)
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashCompletion().split('\n').slice(1).join('\n')}`;
}

export async function completionCommand(args: string[], out: (s: string) => void): Promise<number> {
  const [shell, ...rest] = args;
  if (rest.length > 0 || (shell !== 'bash' && shell !== 'zsh')) {
    throw new UsageError(`completion takes one shell, bash or zsh, got '${args.join(' ')}'`);
  }
  out(shell === 'bash' ? bashCompletion() : zshCompletion());
  return Promise.resolve(0);
}
