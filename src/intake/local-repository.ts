import { statSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { errnoName } from '../runtime/errno.js';

/** Where a project's repository is on this master: what the daemon pushes from (`schedule/push-job.ts`). */
export function localRepositoryPath(basePath: string, project: string): string {
  return join(basePath, `${project}.git`);
}

/** Errors that mean no repository is there; a name too long for the file system cannot name one either. */
const NOT_THERE = new Set(['ENOENT', 'ENOTDIR', 'ENAMETOOLONG']);

/**
 * Why `path` is certainly not a folder, or undefined when it is one or may be: a `stat` this user
 * may not make (EACCES) is left to whoever uses the folder next, which may run as another user.
 */
export function folderProblem(path: string): 'does not exist' | 'is not a folder' | undefined {
  try {
    return statSync(path).isDirectory() ? undefined : 'is not a folder';
  } catch (error) {
    const code = errnoName(error);
    return NOT_THERE.has(code ?? '') ? 'does not exist' : undefined;
  }
}

/**
 * A project named by hand (`enqueue --project`) must have its repository under `basePath`:
 * a typo would otherwise be queued, reported as queued, and fail only later in the daemon
 * (`local-missing`). One `stat`, on the local disk, before the store or the spool is touched.
 * Only a path that is certainly not a repository folder is refused; the daemon judges the rest.
 */
export async function assertLocalRepository(basePath: string, project: string): Promise<void> {
  const path = localRepositoryPath(basePath, project);
  const problem = folderProblem(path);
  if (problem === undefined) return;
  throw new UsageError(`enqueue: project ${JSON.stringify(project)} has no repository: ${path} ${problem} (replication.basePath); nothing queued`);
}
