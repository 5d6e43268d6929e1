import { readdir, stat } from 'node:fs/promises';
import { errnoName } from '../runtime/errno.js';

/** Checks of a local destination path (a plain path or file:// URL) before pushing to or creating it. */
export async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

export async function isAbsentOrEmpty(path: string): Promise<boolean> {
  try {
    return (await readdir(path)).length === 0;
  } catch (error) {
    return errnoName(error) === 'ENOENT';
  }
}
