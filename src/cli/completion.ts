/**
 * `reservoir completion bash|zsh|fish`: a completion script generated from the command definitions
 * themselves (commands, their long flags, the values of flags with fixed choices, and directories
 * for positional arguments), so it cannot fall behind the CLI.
 */
import type { Argument, Command, Option } from 'commander';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface FlagSpec {
  flag: string;
  description: string;
  takesValue: boolean;
  choices: readonly string[];
}

interface CommandSpec {
  name: string;
  description: string;
  flags: FlagSpec[];
  /** Fixed values of the first positional argument (e.g. setup's host), if any. */
  argumentChoices: readonly string[];
  /** Whether positional arguments are paths. */
  takesPaths: boolean;
}

function specOf(command: Command): CommandSpec {
  const options = [...(command.options as readonly Option[])].filter(
    (o) => o.long !== undefined && !o.hidden,
  );
  const args = (command as unknown as { registeredArguments: readonly Argument[] })
    .registeredArguments;
  const first = args[0] as (Argument & { argChoices?: string[] }) | undefined;
  return {
    name: command.name(),
    description: command.description(),
    flags: [
      ...options.map((o) => ({
        flag: o.long!,
        description: o.description,
        takesValue: o.required || o.optional,
        choices: o.argChoices ?? [],
      })),
      { flag: '--help', description: 'show help', takesValue: false, choices: [] },
    ],
    argumentChoices: first?.argChoices ?? [],
    takesPaths: args.some((a) => a.name() !== 'host' && a.name() !== 'shell'),
  };
}

/** One line of text, without the characters each shell's quoting would trip on. */
function clean(text: string): string {
  return text
    .replace(/[\n'"`$\\[\]:]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

export function completionScript(program: Command, shell: Shell): string {
  const commands = (program.commands as readonly Command[]).map(specOf);
  if (shell === 'bash') return bash(commands);
  if (shell === 'zsh') return zsh(commands);
  return fish(commands);
}

function bash(commands: CommandSpec[]): string {
  const cases = commands
    .map((c) => {
      const valueFlags = c.flags.filter((f) => f.takesValue);
      const choiceCases = valueFlags
        .filter((f) => f.choices.length > 0)
        .map(
          (f) =>
            `        ${f.flag}) COMPREPLY=($(compgen -W '${f.choices.join(' ')}' -- "$cur")); return ;;`,
        );
      const freeValue = valueFlags.filter((f) => f.choices.length === 0).map((f) => f.flag);
      return [
        `    ${c.name})`,
        `      opts='${c.flags.map((f) => f.flag).join(' ')}'`,
        '      case "$prev" in',
        ...choiceCases,
        ...(freeValue.length > 0
          ? [`        ${freeValue.join('|')}) COMPREPLY=($(compgen -f -- "$cur")); return ;;`]
          : []),
        '      esac',
        c.argumentChoices.length > 0
          ? `      words_='${c.argumentChoices.join(' ')}'`
          : "      words_=''",
        `      paths=${c.takesPaths ? 1 : 0}`,
        '      ;;',
      ].join('\n');
    })
    .join('\n');
  return `# bash completion for reservoir: source it, or save it as
# ~/.local/share/bash-completion/completions/reservoir
_reservoir() {
  local cur prev opts words_ paths
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W '${commands.map((c) => c.name).join(' ')} --help --version' -- "$cur"))
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases}
    *) return ;;
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [ -n "$words_" ] && [ "$COMP_CWORD" -eq 2 ]; then
    COMPREPLY=($(compgen -W "$words_" -- "$cur"))
  elif [ "$paths" -eq 1 ]; then
    COMPREPLY=($(compgen -d -- "$cur"))
  fi
}
complete -o filenames -F _reservoir reservoir
`;
}

function zsh(commands: CommandSpec[]): string {
  const cases = commands
    .map((c) => {
      const specs = c.flags.map((f) => {
        const value = !f.takesValue
          ? ''
          : f.choices.length > 0
            ? `:value:(${f.choices.join(' ')})`
            : ':value:_files';
        return `'*${f.flag}[${clean(f.description)}]${value}'`;
      });
      if (c.argumentChoices.length > 0)
        specs.push(
          `'1:${c.name === 'completion' ? 'shell' : 'host'}:(${c.argumentChoices.join(' ')})'`,
        );
      if (c.takesPaths) specs.push("'*:directory:_files -/'");
      return `    ${c.name}) _arguments ${specs.join(' ')} ;;`;
    })
    .join('\n');
  return `#compdef reservoir
# zsh completion for reservoir: save it as _reservoir in a directory on $fpath, or source it.
_reservoir() {
  local -a commands
  commands=(
${commands.map((c) => `    '${c.name}:${clean(c.description)}'`).join('\n')}
  )
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  shift words
  (( CURRENT-- ))
  case $words[1] in
${cases}
  esac
}
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
  _reservoir "$@"
else
  compdef _reservoir reservoir
fi
`;
}

function fish(commands: CommandSpec[]): string {
  const lines = [
    '# fish completion for reservoir: save it as ~/.config/fish/completions/reservoir.fish',
    'complete -c reservoir -f',
    ...commands.map(
      (c) =>
        `complete -c reservoir -n '__fish_use_subcommand' -a ${c.name} -d '${clean(c.description)}'`,
    ),
  ];
  for (const c of commands) {
    const when = `-n '__fish_seen_subcommand_from ${c.name}'`;
    for (const f of c.flags) {
      const value = !f.takesValue
        ? ''
        : f.choices.length > 0
          ? ` -x -a '${f.choices.join(' ')}'`
          : ' -r -F';
      lines.push(
        `complete -c reservoir ${when} -l ${f.flag.slice(2)} -d '${clean(f.description)}'${value}`,
      );
    }
    if (c.argumentChoices.length > 0)
      lines.push(`complete -c reservoir ${when} -a '${c.argumentChoices.join(' ')}'`);
    if (c.takesPaths)
      lines.push(`complete -c reservoir ${when} -a '(__fish_complete_directories)'`);
  }
  return `${lines.join('\n')}\n`;
}
