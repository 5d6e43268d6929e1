import { parseGitConfigList, type GitConfigEntry } from '../../../src/config/git-config-reader.js';

/**
 * Builds entries as `git config --list` would give them, from `key=value`
 * lines (`key` alone is a bare boolean): section and name lower-cased, the
 * subsection kept as written.
 */
export function entries(...lines: string[]): GitConfigEntry[] {
  const records = lines.map((line) => {
    const eq = line.indexOf('=');
    const key = eq < 0 ? line : line.slice(0, eq);
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    const gitKey = key.slice(0, first).toLowerCase() + key.slice(first, last) + key.slice(last).toLowerCase();
    return eq < 0 ? gitKey : `${gitKey}\n${line.slice(eq + 1)}`;
  });
  return parseGitConfigList(records.map((r) => `${r}\0`).join(''));
}
