import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ConfigProblem } from '../errors.js';
import { readGitConfig, readGitConfigInput, type GitConfigEntry } from './git-config-reader.js';

/** One fan-out file as git reads it: its entries, or the problem that kept it from being read. */
export interface FanoutFile {
  readonly file: string;
  readonly entries: readonly GitConfigEntry[];
  readonly problems: readonly ConfigProblem[];
}

/** Section of the separator put before each file; git lower-cases it, the subsection stays. */
const SEPARATOR_SECTION = 'refrelay-fanout-file';

/**
 * Reads every fan-out file with ONE git run, because `enqueue` loads the config on every push
 * and a site may have hundreds of remotes (git costs a few ms per run). The files go to git's
 * stdin one after the other, each behind a separator section `[refrelay-fanout-file "<tag>.<N>"]`
 * that says which file the entries that follow belong to. Two newlines before it end
 * whatever the previous file left open (a `\` continuation line). The tag is a hash of all the
 * text, so no file can contain a separator that passes for a real one.
 *
 * Whenever that shortcut could mean something else than reading the file alone (a file git
 * rejects, keys before a file's first section, a file that cannot be read), the files concerned
 * are read alone, one git run each, which also names the file in the problem.
 */
export function readFanoutFiles(files: readonly string[]): FanoutFile[] {
  if (files.length <= 1) return files.map(readAlone);
  const texts = files.map(readText);
  const readable = texts.flatMap((text, index) => (text === undefined ? [] : [index]));
  const together = readTogether(
    readable.map((index) => texts[index]!),
    readable,
  );
  return files.map((file, index) => {
    const entries = together?.get(index);
    return entries === undefined ? readAlone(file) : { file, entries, problems: [] };
  });
}

function readAlone(file: string): FanoutFile {
  const read = readGitConfig(file);
  return { file, entries: read.entries, problems: read.problems };
}

function readText(file: string): Buffer | undefined {
  try {
    return readFileSync(file);
  } catch {
    return undefined;
  }
}

/** Entries by index of the file, for the files the joint read vouches for; undefined when git refused the text. */
function readTogether(texts: readonly Buffer[], indexes: readonly number[]): Map<number, GitConfigEntry[]> | undefined {
  if (texts.length === 0) return new Map();
  const hash = createHash('sha1');
  for (const text of texts) hash.update(text);
  const tag = hash.digest('hex');
  const parts = texts.flatMap((text, position) => [Buffer.from(`\n\n[${SEPARATOR_SECTION} "${tag}.${indexes[position]}"]\nstart = true\n`), text]);
  const read = readGitConfigInput(Buffer.concat(parts), '(fan-out files)');
  if (read.problems.length > 0) return undefined;
  return splitBySeparator(read.entries, tag);
}

/**
 * Pure: assigns each entry to the file whose separator precedes it. The first key under a
 * separator is its own; any other key there stood before the file's first section, which git
 * refuses in a file alone, so that file is left out (and read alone).
 */
export function splitBySeparator(entries: readonly GitConfigEntry[], tag: string): Map<number, GitConfigEntry[]> {
  const byFile = new Map<number, GitConfigEntry[]>();
  const doubtful = new Set<number>();
  const prefix = `${tag}.`;
  let current: number | undefined;
  for (const entry of entries) {
    if (entry.section === SEPARATOR_SECTION && entry.subsection?.startsWith(prefix)) {
      const index = Number(entry.subsection.slice(prefix.length));
      if (index === current) doubtful.add(index);
      else byFile.set((current = index), []);
      continue;
    }
    if (current !== undefined) byFile.get(current)!.push(entry);
  }
  for (const index of doubtful) byFile.delete(index);
  return byFile;
}
