/**
 * One error base with a stable `code`; subclasses carry what their callers need.
 * Only the CLI entry point turns these into exit codes.
 */
export class RefrelayError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A problem found in a configuration file, with where it is. */
export interface ConfigProblem {
  file: string;
  /** Full git-config key, e.g. `remote.eu.mirror.url`, or a section name. */
  key: string;
  message: string;
}

export function formatConfigProblem(problem: ConfigProblem): string {
  return `${problem.file}: ${problem.key}: ${problem.message}`;
}

/** Every problem of a config at once (exit 3). */
export class ConfigError extends RefrelayError {
  readonly problems: readonly ConfigProblem[];
  constructor(problems: readonly ConfigProblem[]) {
    super('CONFIG_INVALID', problems.map(formatConfigProblem).join('\n'));
    this.problems = problems;
  }
}

/** Bad command-line input: a project name, a ref, a missing option (exit 2). */
export class UsageError extends RefrelayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('USAGE', message, options);
  }
}

/** A task file that cannot be read as a task. */
export class TaskFormatError extends RefrelayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TASK_FORMAT', message, options);
  }
}

/** The shared store could not be written or read (full disk, read-only, gone). */
export class StoreError extends RefrelayError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('STORE', message, options);
  }
}

/**
 * Something other than a folder (a file, a symlink) stands under a URI's waiting folder name:
 * that URI's tasks cannot be queued until a person moves it away, while every other URI's can.
 */
export class WaitingFolderRefusedError extends StoreError {
  constructor(
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

/**
 * refrelay's own code could not be loaded: a build file or a dependency is missing, as while
 * `npm ci` or a build rewrites the checkout it runs from. refrelay did not start (exit 4).
 */
export class NotStartedError extends RefrelayError {
  constructor(reason: string, options?: { cause?: unknown }) {
    super('NOT_STARTED', `failed to start: ${reason}`, options);
  }
}
