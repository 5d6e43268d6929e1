import type { Argv } from 'yargs';
import { UsageError } from '../../errors.js';
import { configOption } from '../config-option.js';
import { seeHelp } from './see-help.js';

export function verifyCommand(cli: Argv, setExit: (code: number) => void): Argv {
  return cli.command(
    'verify [patterns..]',
    "compare every destination's refs with the local refs through the refspecs (exit 1 on drift; --fix: 0 once the repairs are queued)",
    (y) =>
      y
        .fail(seeHelp('verify'))
        .positional('patterns', { type: 'string', array: true, describe: 'project patterns (default: all)' })
        .options({
          ...configOption,
          remote: { type: 'string', array: true, describe: 'only this remote, repeatable' },
          json: { type: 'boolean', default: false, describe: 'machine-readable report' },
          fix: { type: 'boolean', default: false, describe: 'queue tasks for exactly the drifted refs (exit 0 once queued)' },
          parallel: { type: 'number', default: 8, describe: 'destinations checked at once' },
        })
        .example('refrelay verify --remote dr', '')
        .example('refrelay verify --fix && refrelay daemon --drain', '')
        .epilogue(
          'Exit codes: 0 every destination in sync, 1 drift or an unreachable destination, 2 a pattern that matches no project, 3 invalid configuration. ' +
            'With --fix: 0 in sync or every repair queued, 1 a repair could not be queued (the store could not be written), ' +
            '4 a destination was unreachable (the repairs for the others are queued).',
        ),
    async (args) => {
      // yargs turns a value that is not a number into NaN; with no worker to run, verify would report nothing.
      if (!Number.isInteger(args.parallel) || args.parallel < 1)
        throw new UsageError(`verify: --parallel must be a whole number ≥ 1, got ${String(args.parallel)}`);
      const { runVerify } = await import('../verify-command.js');
      setExit(
        await runVerify({
          config: args.config,
          patterns: (args.patterns ?? []).map(String),
          remotes: (args.remote ?? []).map(String),
          json: args.json,
          fix: args.fix,
          parallel: args.parallel,
        }),
      );
    },
  );
}
