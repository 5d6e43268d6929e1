import type { ConfigProblem } from '../errors.js';
import { canonicalKey, allKeys, isKnownSection, SECTION_KEYS, type SectionKeys } from './config-keys.js';
import { unknownKeyMessage } from './did-you-mean.js';
import type { GitConfigEntry } from './git-config-reader.js';

/** Values of one section by canonical key, every value in file order (single-valued keys take the last). */
export type SectionValues = Map<string, string[]>;

export interface CollectedSections {
  readonly replication: SectionValues;
  readonly gerrit: SectionValues;
  /** By remote name as written, in order of first appearance; repeated sections merge, as in git. */
  readonly remotes: Map<string, SectionValues>;
}

/** Where problems and warnings go, so every one is reported at once instead of failing on the first. */
export interface Reporter {
  readonly file: string;
  problem(key: string, message: string): void;
  warning(key: string, message: string): void;
}

export function createReporter(file: string): Reporter & { problems: ConfigProblem[]; warnings: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  // A key repeated in the file must not repeat its message.
  const seen = new Set<string>();
  const add = (list: ConfigProblem[], kind: string, key: string, message: string): void => {
    const id = `${kind}\0${key}\0${message}`;
    if (seen.has(id)) return;
    seen.add(id);
    list.push({ file, key, message });
  };
  return { file, problems, warnings, problem: (key, message) => add(problems, 'p', key, message), warning: (key, message) => add(warnings, 'w', key, message) };
}

const SECTION_IGNORED = 'section ignored: refrelay reads only [replication], [remote "NAME"] and [gerrit]';
const INCLUDE_IGNORED = 'section ignored: refrelay does not follow config includes';

/**
 * Sorts git-config entries into the three sections refrelay reads, reporting
 * unknown keys (with a did-you-mean), Gerrit-only keys (one warning each) and
 * foreign sections (one warning each).
 */
export function collectSections(entries: readonly GitConfigEntry[], report: Reporter): CollectedSections {
  const collected: CollectedSections = { replication: new Map(), gerrit: new Map(), remotes: new Map() };
  for (const entry of entries) {
    const { section, subsection } = entry;
    if (!isKnownSection(section)) {
      const where = subsection === undefined ? section : `${section}.${subsection}`;
      report.warning(where, section === 'include' || section === 'includeif' ? INCLUDE_IGNORED : SECTION_IGNORED);
      continue;
    }
    const keys = SECTION_KEYS[section];
    if (section === 'remote') {
      if (subsection === undefined) {
        report.problem(`remote.${entry.name}`, 'a remote needs a name, as in [remote "backup"]');
        continue;
      }
      let values = collected.remotes.get(subsection);
      if (!values) collected.remotes.set(subsection, (values = new Map()));
      addValue(values, entry, `remote.${subsection}`, keys, report);
      continue;
    }
    if (subsection !== undefined) {
      report.problem(`${section}.${subsection}`, `[${section}] takes no name; write [${section}]`);
      continue;
    }
    addValue(collected[section], entry, section, keys, report);
  }
  return collected;
}

function addValue(values: SectionValues, entry: GitConfigEntry, prefix: string, keys: SectionKeys, report: Reporter): void {
  const key = canonicalKey(keys, entry.name);
  if (key === undefined) {
    report.problem(`${prefix}.${entry.name}`, unknownKeyMessage(entry.name, allKeys(keys)));
    return;
  }
  const reason = keys.gerritOnly[key];
  if (reason !== undefined) {
    report.warning(`${prefix}.${key}`, reason);
    return;
  }
  const list = values.get(key);
  if (list) list.push(entry.value);
  else values.set(key, [entry.value]);
}

/** git semantics for a single-valued key given several times: the last one wins. */
export function lastValue(values: SectionValues, key: string): string | undefined {
  return values.get(key)?.at(-1);
}

export function allValues(values: SectionValues, key: string): string[] {
  return values.get(key) ?? [];
}
