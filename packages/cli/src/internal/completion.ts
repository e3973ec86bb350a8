import type { Command, Option } from 'commander';

/** The shells `mt completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** One command of the tree as completion sees it: its path from the root (`""`, `import`, `import openapi`). */
interface Node {
  path: string;
  name: string;
  description: string;
  subcommands: Node[];
  options: { flags: string[]; takesValue: boolean; description: string }[];
}

// Commander's help flags are not in `options`; every command has them.
const HELP = { flags: ['-h', '--help'], takesValue: false, description: 'display help for command' };

function optionOf(option: Option) {
  const flags = [option.short, option.long].filter((f): f is string => f !== undefined);
  return { flags, takesValue: option.required || option.optional, description: option.description };
}

/** The command tree of `program` (hidden commands left out), read from commander itself. */
export function commandTree(program: Command, path = ''): Node {
  const visible = program.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
  return {
    path,
    name: program.name(),
    description: program.description(),
    subcommands: visible.map((c) => commandTree(c, path === '' ? c.name() : `${path} ${c.name()}`)),
    options: [...program.options.filter((o) => !o.hidden).map(optionOf), HELP],
  };
}

function walk(node: Node): Node[] {
  return [node, ...node.subcommands.flatMap(walk)];
}

const firstLine = (text: string) => text.split('\n')[0]?.trim() ?? '';
// A single-quoted shell word: ' closes, \' , ' reopens.
const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

// The `case` branches of the helpers both bash and zsh scripts use: subcommands, options and the options that
// take a value, per command path.
function caseHelpers(root: Node): string {
  const nodes = walk(root);
  const branch = (node: Node, words: string[]) => `    ${quote(node.path)}) echo ${quote(words.join(' '))} ;;`;
  const valued = nodes.flatMap((n) =>
    n.options.filter((o) => o.takesValue).flatMap((o) => o.flags.map((f) => quote(`${n.path}|${f}`))),
  );
  return `_mt_subcommands() {
  case "$1" in
${nodes
  .filter((n) => n.subcommands.length > 0)
  .map((n) =>
    branch(
      n,
      n.subcommands.map((s) => s.name),
    ),
  )
  .join('\n')}
  esac
}
_mt_options() {
  case "$1" in
${nodes
  .map((n) =>
    branch(
      n,
      n.options.flatMap((o) => o.flags),
    ),
  )
  .join('\n')}
  esac
}
# Succeeds when option $2 of command path $1 takes a value (the next word).
_mt_takes_value() {
  case "$1|$2" in
    ${valued.length > 0 ? valued.join('|') : "''"}) return 0 ;;
  esac
  return 1
}
# The command path of the words before the cursor (subcommand names; options and their values skipped).
_mt_path() {
  local cmdpath="" skip="" w
  for w in "$@"; do
    if [ -n "$skip" ]; then skip=""; continue; fi
    case "$w" in
      -*) _mt_takes_value "$cmdpath" "$w" && skip=1 ;;
      *) case " $(_mt_subcommands "$cmdpath") " in *" $w "*) cmdpath="\${cmdpath:+$cmdpath }$w" ;; esac ;;
    esac
  done
  echo "$cmdpath"
}`;
}

function bash(root: Node): string {
  return `# bash completion for mt, generated from the CLI's command tree by \`mt completion bash\`.
# Load it with: source <(mt completion bash)   (or save it to ~/.local/share/bash-completion/completions/mt)
${caseHelpers(root)}
_mt() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmdpath
  [ "$COMP_CWORD" -gt 1 ] && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  cmdpath="$(_mt_path "\${COMP_WORDS[@]:1:COMP_CWORD-1}")"
  COMPREPLY=()
  # The value of an option: files (complete -o default).
  case "$prev" in -*) _mt_takes_value "$cmdpath" "$prev" && return 0 ;; esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(_mt_options "$cmdpath")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(_mt_subcommands "$cmdpath")" -- "$cur"))
  fi
}
complete -o default -F _mt mt
`;
}

// zsh: _describe takes "name:description"; a colon in the name part is escaped.
const described = (name: string, description: string) =>
  quote(`${name.replace(/:/g, '\\:')}:${firstLine(description)}`);

function zsh(root: Node): string {
  const nodes = walk(root);
  const descriptions = (kind: 'commands' | 'options') =>
    nodes
      .map((n) => {
        const items =
          kind === 'commands'
            ? n.subcommands.map((s) => described(s.name, s.description))
            : n.options.flatMap((o) => o.flags.map((f) => described(f, o.description)));
        return items.length === 0 ? '' : `    ${quote(n.path)}) items=(${items.join(' ')}) ;;`;
      })
      .filter((line) => line !== '')
      .join('\n');
  return `#compdef mt
# zsh completion for mt, generated from the CLI's command tree by \`mt completion zsh\`.
# Load it with: source <(mt completion zsh)   (or save it as _mt in a folder of your $fpath)
${caseHelpers(root)}
_mt() {
  local cmdpath prev="" kind=commands
  local -a items
  cmdpath="$(_mt_path "\${(@)words[2,CURRENT-1]}")"
  (( CURRENT > 2 )) && prev="\${words[CURRENT-1]}"
  if [[ "$prev" == -* ]] && _mt_takes_value "$cmdpath" "$prev"; then _files; return; fi
  [[ "$PREFIX" == -* ]] && kind=options
  if [[ $kind == commands ]]; then
    case "$cmdpath" in
${descriptions('commands')}
    esac
    (( \${#items} )) && _describe -t commands 'mt command' items || _files
  else
    case "$cmdpath" in
${descriptions('options')}
    esac
    _describe -t options 'option' items
  fi
}
if [[ "$funcstack[1]" == _mt ]]; then _mt "$@"; else compdef _mt mt; fi
`;
}

function fish(root: Node): string {
  const lines = [
    "# fish completion for mt, generated from the CLI's command tree by `mt completion fish`.",
    '# Load it with: mt completion fish | source   (or save it to ~/.config/fish/completions/mt.fish)',
  ];
  for (const node of walk(root)) {
    const words = node.path === '' ? [] : node.path.split(' ');
    // In this command, and in none of its subcommands.
    const here =
      words.length === 0
        ? '__fish_use_subcommand'
        : `__fish_seen_subcommand_from ${words.at(-1)}${
            node.subcommands.length > 0
              ? `; and not __fish_seen_subcommand_from ${node.subcommands.map((s) => s.name).join(' ')}`
              : ''
          }`;
    // While a subcommand is being chosen, no file names; a command's own arguments may be files (mt deploy DIR).
    if (node.subcommands.length > 0) lines.push(`complete -c mt -n ${quote(here)} -f`);
    for (const sub of node.subcommands) {
      lines.push(`complete -c mt -n ${quote(here)} -a ${quote(sub.name)} -d ${quote(firstLine(sub.description))}`);
    }
    for (const option of node.options) {
      const flags = option.flags
        .map((f) => (f.startsWith('--') ? `-l ${quote(f.slice(2))}` : `-s ${quote(f.slice(1))}`))
        .join(' ');
      const value = option.takesValue ? ' -r -F' : '';
      lines.push(`complete -c mt -n ${quote(here)} ${flags}${value} -d ${quote(firstLine(option.description))}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The completion script of `shell` for the command tree of `program`. */
export function completionScript(program: Command, shell: Shell): string {
  const root = commandTree(program);
  return shell === 'bash' ? bash(root) : shell === 'zsh' ? zsh(root) : fish(root);
}
