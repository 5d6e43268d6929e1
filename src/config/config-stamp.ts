import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fanoutDirOf, isFanoutFileName } from './fanout-folder.js';

/**
 * What `autoReload` compares from one pass to the next: each file the config is read from, by
 * path, with its mtime, size and inode (an in-place edit moves mtime or size, an editor's
 * save-by-rename moves the inode). The fan-out folder has an entry of its own, so making or
 * removing it counts as a change even while it holds no file.
 */
export type ConfigStamp = ReadonlyMap<string, string>;

/**
 * Reads the stamp of `file` and its fan-out folder: one stat of the file, one of the folder, one
 * listing, and one stat per `*.config` in it. Undefined when the config file itself cannot be
 * stat'ed (being replaced right now): the next pass looks again.
 */
export async function readConfigStamp(file: string): Promise<ConfigStamp | undefined> {
  const stamp = new Map<string, string>();
  const main = await fileStamp(file);
  if (main === undefined) return undefined;
  stamp.set(file, main);
  const dir = fanoutDirOf(file);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    if (code !== 'ENOENT') stamp.set(dir, code);
    return stamp;
  }
  stamp.set(dir, 'folder');
  const files = names.filter(isFanoutFileName).map((name) => join(dir, name));
  const stamps = await Promise.all(files.map(fileStamp));
  for (const [index, path] of files.entries()) {
    const value = stamps[index];
    if (value !== undefined) stamp.set(path, value);
  }
  return stamp;
}

/** Pure: the paths added, removed or changed between two stamps, sorted. */
export function changedConfigFiles(before: ConfigStamp, after: ConfigStamp): string[] {
  const changed = new Set<string>();
  for (const [path, value] of after) if (before.get(path) !== value) changed.add(path);
  for (const path of before.keys()) if (!after.has(path)) changed.add(path);
  return [...changed].sort();
}

/** A symlink counts as what it points to, as when the config is read. */
async function fileStamp(path: string): Promise<string | undefined> {
  try {
    const info = await stat(path);
    return `${info.mtimeMs}:${info.size}:${info.ino}`;
  } catch {
    return undefined;
  }
}
