/** `blocklist completion bash|zsh`: prints a completion script generated from the live command tree. */
import { Command, Argument } from 'commander';
import { runAction } from '../errors';
import { bashCompletion, zshCompletion } from '../completion';

export function register(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: source <(blocklist completion bash)')
    .addArgument(new Argument('<shell>', 'bash or zsh').choices(['bash', 'zsh']))
    .action(
      runAction(async (shell: 'bash' | 'zsh') => {
        process.stdout.write(shell === 'bash' ? bashCompletion(program) : zshCompletion(program));
      }),
    );
}
