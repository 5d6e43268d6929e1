import { UsageError } from '../../errors.js';

/**
 * A usage error points at the help of the command it was made in (`refrelay config --help` for
 * `refrelay config` alone), where the options and subcommands it needs are listed. yargs scopes
 * a `fail` handler set in a command's builder to that command and its subcommands.
 */
export function seeHelp(command: string): (message: string, error: Error | undefined) => never {
  return (message, error) => {
    if (error) throw error;
    throw new UsageError(`${message}\n(see refrelay ${command === '' ? '' : `${command} `}--help)`);
  };
}
