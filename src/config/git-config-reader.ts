import { spawnSync } from 'node:child_process';
import type { ConfigProblem } from '../errors.js';
import { errnoName } from '../runtime/errno.js';

/**
 * One `section[.subsection].name = value` record, in file order. A multi-valued
 * key yields one entry per value. Section and name are lower-cased by git;
 * the subsection keeps its case.
 */
export interface GitConfigEntry {
  readonly section: string;
  readonly subsection: string | undefined;
  readonly name: string;
  readonly value: string;
}

export interface GitConfigReadResult {
  readonly entries: readonly GitConfigEntry[];
  /** Empty when the file was read; otherwise one `(file)` problem. */
  readonly problems: readonly ConfigProblem[];
}

/** Key used for problems that concern the whole file rather than one setting. */
export const FILE_PROBLEM_KEY = '(file)';

/**
 * Reads a git-config file through git itself: every npm parser gets
 * multi-valued keys, quoting or `[remote "a.b"]` wrong, and git costs ~2 ms.
 * Kept to node built-ins only, because a git hook loads this on every push.
 */
export function readGitConfig(file: string): GitConfigReadResult {
  return runGitConfigList(file, ['--file', file], undefined);
}

/**
 * Reads config text given on git's stdin (`--file -`), for several files read in one git run.
 * `label` names the input in a problem. Without `--includes`, git lists `include.path` as a
 * plain key and follows nothing, as with a file.
 */
export function readGitConfigInput(input: Uint8Array, label: string): GitConfigReadResult {
  return runGitConfigList(label, ['--file', '-'], input);
}

function runGitConfigList(file: string, source: string[], input: Uint8Array | undefined): GitConfigReadResult {
  const result = spawnSync('git', ['config', ...source, '--list', '-z'], {
    encoding: 'utf8',
    env: hermeticGitEnv(process.env),
    maxBuffer: 64 * 1024 * 1024,
    ...(input === undefined ? {} : { input }),
  });
  if (result.error) {
    const message =
      errnoName(result.error) === 'ENOENT'
        ? 'cannot run git to read the file: git is not installed or not on PATH'
        : `cannot run git to read the file: ${result.error.message}`;
    return failed(file, message);
  }
  if (result.status !== 0) return failed(file, describeGitFailure(result.stderr, result.status));
  return { entries: parseGitConfigList(result.stdout), problems: [] };
}

/**
 * Parses `git config --list -z` output: `key\nvalue\0` records, where a record
 * without `\n` is a bare boolean key (true).
 */
export function parseGitConfigList(output: string): GitConfigEntry[] {
  const entries: GitConfigEntry[] = [];
  for (const record of output.split('\0')) {
    if (record === '') continue;
    const newline = record.indexOf('\n');
    const key = newline < 0 ? record : record.slice(0, newline);
    const value = newline < 0 ? 'true' : record.slice(newline + 1);
    const entry = splitKey(key, value);
    if (entry) entries.push(entry);
  }
  return entries;
}

function splitKey(key: string, value: string): GitConfigEntry | undefined {
  const firstDot = key.indexOf('.');
  const lastDot = key.lastIndexOf('.');
  // git never lists a key without a section; skip rather than invent one.
  if (firstDot < 0) return undefined;
  return {
    section: key.slice(0, firstDot),
    subsection: firstDot === lastDot ? undefined : key.slice(firstDot + 1, lastDot),
    name: key.slice(lastDot + 1),
    value,
  };
}

/**
 * The user's and the system's git config must not leak into what we read,
 * inherited `-c` settings must not change how git parses, and git's messages
 * must stay in English for describeGitFailure to recognise them.
 */
export function hermeticGitEnv(base: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(base)) {
    if (name === 'GIT_CONFIG' || name.startsWith('GIT_CONFIG_')) continue;
    env[name] = value;
  }
  env.GIT_CONFIG_NOSYSTEM = '1';
  env.GIT_CONFIG_GLOBAL = '/dev/null';
  env.LC_ALL = 'C';
  return env;
}

/** Turns git's fatal message into ours, keeping git's line number. */
export function describeGitFailure(stderr: string, status: number | null): string {
  const badLine = /bad config line (\d+)/.exec(stderr);
  if (badLine) return `git cannot parse the file: bad config line ${badLine[1]}`;
  if (/unable to read config file/.test(stderr)) {
    const reason = /unable to read config file '.*': (.+)$/m.exec(stderr)?.[1];
    return `cannot read the file${reason ? `: ${reason.trim()}` : ''}`;
  }
  const firstLine = stderr
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.replace(/^fatal:\s*/, '');
  return `git config failed (exit ${status ?? 'signal'})${firstLine ? `: ${firstLine.trim()}` : ''}`;
}

function failed(file: string, message: string): GitConfigReadResult {
  return { entries: [], problems: [{ file, key: FILE_PROBLEM_KEY, message }] };
}
