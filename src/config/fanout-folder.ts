import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { ConfigProblem } from '../errors.js';
import { FILE_PROBLEM_KEY } from './git-config-reader.js';

/**
 * Gerrit's fan-out folder: `etc/replication/` beside `etc/replication.config`. When it exists,
 * the remotes come only from its `*.config` files, one remote per file, named after the file.
 */
export const FANOUT_DIR_NAME = 'replication';

const FANOUT_SUFFIX = '.config';

/** Where the fan-out folder of a config file is: `replication/` beside it, whatever the file's own name. */
export function fanoutDirOf(configFile: string): string {
  return join(dirname(resolve(configFile)), FANOUT_DIR_NAME);
}

/** Gerrit reads every name ending in `.config`, dot files included. */
export function isFanoutFileName(name: string): boolean {
  return name.endsWith(FANOUT_SUFFIX);
}

/** The remote a fan-out file defines: its name without `.config` (`eu.mirror.config` → `eu.mirror`). */
export function remoteNameOfFile(file: string): string {
  return basename(file).slice(0, -FANOUT_SUFFIX.length);
}

/** What is at the fan-out place: nothing (remotes stay in the config file), or the files to read. */
export type FanoutListing =
  | { readonly present: false }
  | { readonly present: true; readonly dir: string; readonly files: readonly string[]; readonly problems: readonly ConfigProblem[] };

/**
 * Lists the fan-out folder of `configFile`: absolute paths of its `*.config` regular files (a
 * symlink counts as what it points to), sorted by name so the remotes come in a stable order.
 * Sub-folders and other names are not read, as in Gerrit. A file that cannot be examined is
 * listed anyway, so that reading it reports why; a dangling link is not a file and is left out.
 */
export function listFanoutFolder(configFile: string): FanoutListing {
  const dir = fanoutDirOf(configFile);
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) {
      return listingProblem(
        dir,
        `not a folder: with anything named "${FANOUT_DIR_NAME}" beside the config file Gerrit reads the remotes from that folder, and fails to start when it is a file; remove or rename it`,
      );
    }
    names = readdirSync(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { present: false };
    return listingProblem(dir, `cannot list the folder (${code ?? String(error)}); Gerrit fails to start then too`);
  }
  const files = names
    .filter(isFanoutFileName)
    .sort()
    .map((name) => join(dir, name))
    .filter(isFileOrUnknown);
  return { present: true, dir, files, problems: [] };
}

function isFileOrUnknown(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ELOOP' && code !== 'ENOTDIR';
  }
}

function listingProblem(dir: string, message: string): FanoutListing {
  return { present: true, dir, files: [], problems: [{ file: dir, key: FILE_PROBLEM_KEY, message }] };
}
