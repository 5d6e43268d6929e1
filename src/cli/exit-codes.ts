import { ConfigError, NotStartedError, RefrelayError, StoreError, UsageError } from '../errors.js';
import { EXIT_NOT_STARTED } from '../intake/hook-script.js';

export const EXIT_OK = 0;
/** Work failed: a store write, a push, a task in failed/. */
export const EXIT_FAILED = 1;
/** Bad command-line input. */
export const EXIT_USAGE = 2;
/** The configuration is invalid. */
export const EXIT_CONFIG = 3;
/** `verify --fix`: some destinations could not be checked; the repairs for the others were queued. */
export const EXIT_UNREACHABLE = 4;
/** refrelay could not load its own code (broken installation); hooks tell this apart from the failures of a command that ran. */
export { EXIT_NOT_STARTED };

export function exitCodeFor(error: unknown): number {
  if (error instanceof ConfigError) return EXIT_CONFIG;
  if (error instanceof UsageError) return EXIT_USAGE;
  if (error instanceof NotStartedError) return EXIT_NOT_STARTED;
  if (error instanceof StoreError) return EXIT_FAILED;
  return EXIT_FAILED;
}

/** One place where errors become messages and exit codes; nothing below the CLI exits. */
export function reportError(error: unknown): number {
  if (error instanceof ConfigError) {
    for (const problem of error.problems) process.stderr.write(`${problem.file}: ${problem.key}: ${problem.message}\n`);
  } else if (error instanceof RefrelayError) {
    process.stderr.write(`refrelay: ${error.message}\n`);
  } else {
    const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
    process.stderr.write(`refrelay: unexpected error: ${text}\n`);
  }
  return exitCodeFor(error);
}
