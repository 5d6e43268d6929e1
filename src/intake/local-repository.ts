import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../errors.js';

/** Where a project's repository is on this master: what the daemon pushes from (`schedule/push-job.ts`). */
export function localRepositoryPath(basePath: string, project: string): string {
  return join(basePath, `${project}.git`);
}

/**
 * A project named by hand (`enqueue --project`) must have its repository under `basePath`:
 * a typo would otherwise be queued, reported as queued, and fail only later in the daemon
 * (`local-missing`). One `stat`, on the local disk, before the store or the spool is touched.
 * Only a path that is certainly not a repository folder is refused; a `stat` this user may not
 * make (EACCES) is left to the daemon, which may run as another user.
 */
export async function assertLocalRepository(basePath: string, project: string): Promise<void> {
  const path = localRepositoryPath(basePath, project);
  let problem: string;
  try {
    if ((await stat(path)).isDirectory()) return;
    problem = 'is not a folder';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') return;
    problem = 'does not exist';
  }
  throw new UsageError(`enqueue: project ${JSON.stringify(project)} has no repository: ${path} ${problem} (replication.basePath); nothing queued`);
}
