import { dirname, join } from 'node:path';
import { ConfigError, type ConfigProblem } from '../errors.js';
import { collectSections, createReporter } from './collect-sections.js';
import { listFanoutFolder } from './fanout-folder.js';
import { buildFanoutRemotes, dropMainRemotes, type FanoutSource } from './fanout-remotes.js';
import { readGitConfig, type GitConfigEntry } from './git-config-reader.js';
import { pushTargets } from './push-targets.js';
import { readFanoutFiles } from './read-fanout.js';
import type { ReplicationConfig } from './types.js';
import { buildRemote } from './validate-remote.js';
import { buildNodeSettings } from './validate-replication.js';

// `config check` reaches the whole config surface through this one module.
export { configToJson, describeConfig } from './describe-config.js';

export const DEFAULT_CONFIG_FILE = 'replication.config';
export const CONFIG_ENV_VAR = 'REFRELAY_CONFIG';

export interface ConfigValidation {
  /** Present only when there are no problems. */
  readonly config?: ReplicationConfig;
  readonly problems: readonly ConfigProblem[];
  readonly warnings: readonly ConfigProblem[];
}

/**
 * Where the config lives: `--config`, then `$REFRELAY_CONFIG`, then
 * `./replication.config`. Flag and env paths are returned as given (relative
 * ones are relative to the process, like any path argument).
 */
export function findConfigFile(options: { flag?: string | undefined; env: Readonly<Record<string, string | undefined>>; cwd: string }): string {
  if (options.flag !== undefined && options.flag !== '') return options.flag;
  const fromEnv = options.env[CONFIG_ENV_VAR];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  return join(options.cwd, DEFAULT_CONFIG_FILE);
}

/**
 * Reads and validates a replication.config, and the `*.config` files of the fan-out folder
 * beside it when that exists (see `fanout-folder.ts`). Throws ConfigError listing every problem
 * at once, each naming its file; the returned config is deep-frozen and carries the warnings.
 */
export function loadConfig(options: { file: string; hostname: string }): ReplicationConfig {
  const read = readGitConfig(options.file);
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  const result = validateConfig(read.entries, options.file, options.hostname, readFanoutSource(options.file));
  if (!result.config) throw new ConfigError(result.problems);
  return result.config;
}

/** The fan-out folder of `file` with every file read, or undefined when there is none. */
function readFanoutSource(file: string): FanoutSource | undefined {
  const listing = listFanoutFolder(file);
  if (!listing.present) return undefined;
  return { dir: listing.dir, files: readFanoutFiles(listing.files), problems: listing.problems };
}

/**
 * Validation on already-parsed entries (unit tests, reloads). With `fanout`, the remotes come
 * from its files and those of `entries` are ignored with a warning each, as in Gerrit.
 */
export function validateConfig(entries: readonly GitConfigEntry[], file: string, hostname: string, fanout?: FanoutSource): ConfigValidation {
  const report = createReporter(file);
  const mainEntries = fanout === undefined ? entries : dropMainRemotes(entries, fanout.dir, report);
  const sections = collectSections(mainEntries, report);
  const settings = buildNodeSettings(sections.replication, sections.gerrit, file, hostname, report);
  const remoteDefaults = { ...settings, configDir: dirname(settings.file) };
  const remotes = [...pushTargets(sections.remotes, report)].map(([name, values]) => ({
    ...buildRemote(name, values, remoteDefaults, report),
    file: settings.file,
  }));
  const fromFolder = fanout === undefined ? undefined : buildFanoutRemotes(fanout, settings.file, remoteDefaults);
  const problems = [...report.problems, ...(fromFolder?.problems ?? [])];
  const warnings = [...report.warnings, ...(fromFolder?.warnings ?? [])];
  if (problems.length > 0) return { problems, warnings };
  const config: ReplicationConfig = {
    ...settings,
    remotes: [...remotes, ...(fromFolder?.remotes ?? [])],
    ...(fanout === undefined ? {} : { remotesDir: fanout.dir }),
    warnings,
  };
  return { config: deepFreeze(config), problems, warnings };
}

/** Config is shared by every loop of a node; freezing makes an accidental write fail loudly. */
function deepFreeze<T>(value: T): T {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function') || Object.isFrozen(value)) {
    return value;
  }
  Object.freeze(value);
  for (const key of Reflect.ownKeys(value as object)) {
    deepFreeze((value as Record<PropertyKey, unknown>)[key]);
  }
  return value;
}
