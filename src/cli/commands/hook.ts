import type { Argv } from 'yargs';
import { configOption } from '../config-option.js';
import { seeHelp } from './see-help.js';

const HOOK_INSTALL_EPILOGUE =
  'Hooks run this refrelay, by its real path. Installed from a source checkout, they depend on that checkout: while npm ci or a build rewrites it ' +
  'they fail to start (pushes still succeed, and the hook says so). For production, install refrelay with npm install -g and run its hook install; ' +
  'hooks installed earlier are rewritten for it. A push whose hook could not queue is queued by refrelay verify --fix once refrelay works again.';

export function hookCommand(cli: Argv, setExit: (code: number) => void): Argv {
  return cli.command('hook', 'install or remove the git hook that queues updates', (hook) => {
    const hookOptions = {
      ...configOption,
      repo: { type: 'string', array: true, describe: 'repository (bare or work tree), repeatable' },
      all: { type: 'boolean', default: false, describe: 'every repository under basePath' },
      'hooks-path': { type: 'string', describe: 'a shared core.hooksPath folder' },
      kind: { choices: ['post-receive', 'reference-transaction'] as const, default: 'post-receive' as const, describe: 'which git hook' },
      'dry-run': { type: 'boolean', default: false, describe: 'show what would change' },
    } as const;
    const run =
      (mode: 'install' | 'uninstall') =>
      async (args: Record<string, unknown>): Promise<void> => {
        const { runHook } = await import('../hook-command.js');
        setExit(
          await runHook(mode, {
            config: args.config as string | undefined,
            repos: ((args.repo as unknown[] | undefined) ?? []).map(String),
            all: args.all === true,
            hooksPath: args['hooks-path'] as string | undefined,
            kind: args.kind as 'post-receive' | 'reference-transaction',
            dryRun: args['dry-run'] === true,
          }),
        );
      };
    return hook
      .fail(seeHelp('hook'))
      .command(
        'install',
        'install the hook (an existing hook is kept and chained)',
        (y: Argv) => y.fail(seeHelp('hook install')).options(hookOptions).example('refrelay hook install --all --dry-run', '').epilogue(HOOK_INSTALL_EPILOGUE),
        run('install'),
      )
      .command(
        'uninstall',
        'remove the hook and restore a chained one',
        (y: Argv) => y.fail(seeHelp('hook uninstall')).options(hookOptions).example('refrelay hook uninstall --repo /srv/git/team/app.git', ''),
        run('uninstall'),
      )
      .demandCommand(1, 'name a hook command')
      .example('refrelay hook install --all --dry-run', '')
      .example('refrelay hook install --hooks-path /srv/git-hooks --kind reference-transaction', '');
  });
}
