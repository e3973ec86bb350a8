import { Argument } from 'commander';
import { completionScript, SHELLS, type Shell } from '../internal/completion.js';
import type { RegisterCommand } from './index.js';

/** `mt completion bash|zsh|fish`: prints a shell completion script made from the CLI's own command tree. */
export const register: RegisterCommand = (program, io) => {
  program
    .command('completion')
    .description('Print a shell completion script for mt (bash, zsh or fish), made from its own commands and options')
    .addArgument(new Argument('<shell>', 'the shell').choices(SHELLS))
    .addHelpText(
      'after',
      '\nbash: source <(mt completion bash)   (or save it to ~/.local/share/bash-completion/completions/mt)\n' +
        'zsh:  source <(mt completion zsh)    (or save it as _mt in a folder of your $fpath)\n' +
        'fish: mt completion fish | source    (or save it to ~/.config/fish/completions/mt.fish)',
    )
    .action((shell: Shell) => {
      io.out(completionScript(program, shell));
    });
};
