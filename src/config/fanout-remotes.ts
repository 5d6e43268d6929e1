import { basename } from 'node:path';
import type { ConfigProblem } from '../errors.js';
import { collectSections, createReporter, type Reporter } from './collect-sections.js';
import { remoteNameOfFile } from './fanout-folder.js';
import { pushTargets } from './push-targets.js';
import { FILE_PROBLEM_KEY, type GitConfigEntry } from './git-config-reader.js';
import type { FanoutFile } from './read-fanout.js';
import type { RemoteConfig } from './types.js';
import { buildRemote, type RemoteDefaults } from './validate-remote.js';

/** The fan-out folder as found, with every file read. */
export interface FanoutSource {
  readonly dir: string;
  readonly files: readonly FanoutFile[];
  /** The folder itself could not be used (not a folder, not listable). */
  readonly problems: readonly ConfigProblem[];
}

export interface FanoutRemotes {
  readonly remotes: RemoteConfig[];
  readonly problems: ConfigProblem[];
  readonly warnings: ConfigProblem[];
}

/**
 * With the fan-out folder present Gerrit ignores every `[remote]` section of replication.config
 * (logging an error); so does refrelay, with one warning per section saying where it belongs.
 */
export function dropMainRemotes(entries: readonly GitConfigEntry[], dir: string, report: Reporter): GitConfigEntry[] {
  const kept: GitConfigEntry[] = [];
  for (const entry of entries) {
    if (entry.section !== 'remote') {
      kept.push(entry);
      continue;
    }
    const name = entry.subsection ?? 'NAME';
    report.warning(
      entry.subsection === undefined ? 'remote' : `remote.${entry.subsection}`,
      `section ignored: ${dir}/ exists, so the remotes come only from its *.config files (Gerrit ignores this section too, logging an error); move it to ${dir}/${name}.config as [remote], or delete it`,
    );
  }
  return kept;
}

/**
 * Builds the remote of each fan-out file with that file's own reporter, so every problem and
 * warning names the file it is in. Files come in the order given (sorted by name).
 */
export function buildFanoutRemotes(source: FanoutSource, mainFile: string, defaults: RemoteDefaults): FanoutRemotes {
  const result: FanoutRemotes = { remotes: [], problems: [...source.problems], warnings: [] };
  for (const fanout of source.files) {
    const report = createReporter(fanout.file);
    for (const problem of fanout.problems) report.problem(problem.key, problem.message);
    if (fanout.problems.length === 0) {
      const sections = collectSections(fanoutRemoteEntries(fanout, basename(mainFile), report), report);
      for (const [name, values] of pushTargets(sections.remotes, report)) {
        result.remotes.push({ ...buildRemote(name, values, defaults, report), file: fanout.file });
      }
    }
    result.problems.push(...report.problems);
    result.warnings.push(...report.warnings);
  }
  return result;
}

/**
 * Pure: the entries of a fan-out file as `[remote "<file name>"]` entries, or none when Gerrit
 * skips the file: it may hold one unnamed `[remote]` section and nothing else (Gerrit logs an
 * error and skips a file with a named remote section or any other section), and a file without
 * any setting defines no remote.
 */
export function fanoutRemoteEntries(fanout: FanoutFile, mainName: string, report: Reporter): GitConfigEntry[] {
  const name = remoteNameOfFile(fanout.file);
  let skipped = false;
  for (const entry of fanout.entries) {
    if (entry.section === 'remote' && entry.subsection === undefined) continue;
    skipped = true;
    if (entry.section === 'remote') {
      report.warning(
        `remote.${entry.subsection}`,
        `file ignored: Gerrit skips a file of the fan-out folder with a named remote section (logging an error), since the file name names the remote; write [remote] instead of [remote "${entry.subsection}"], one remote per file`,
      );
    } else {
      const where = entry.subsection === undefined ? entry.section : `${entry.section}.${entry.subsection}`;
      const instead = entry.section === 'replication' || entry.section === 'gerrit' ? `move [${entry.section}] to ${mainName}` : `delete [${where}]`;
      report.warning(where, `file ignored: Gerrit skips a file of the fan-out folder with any section but [remote] (logging an error); ${instead}`);
    }
  }
  if (skipped) return [];
  if (fanout.entries.length === 0) {
    report.warning(FILE_PROBLEM_KEY, 'file ignored: it sets nothing in a [remote] section, so it defines no remote (Gerrit skips it too)');
    return [];
  }
  if (name === '') {
    report.warning(FILE_PROBLEM_KEY, 'file ignored: the file name names the remote, and ".config" names none; rename it NAME.config');
    return [];
  }
  return fanout.entries.map((entry) => ({ ...entry, subsection: name }));
}
