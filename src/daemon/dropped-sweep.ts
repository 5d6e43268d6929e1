import type { Log } from '../runtime/log.js';
import type { TaskStore } from '../store/task-store.js';

/**
 * Deletes dropped failed tasks past `replication.retention` (store/dropped-tasks.ts). Run with the
 * building/ sweep; a folder this node may not delete is logged and must not stop its pushes.
 */
export async function sweepDroppedTasks(store: Pick<TaskStore, 'sweepDropped'>, retentionMs: number, log: Log): Promise<void> {
  await store.sweepDropped(retentionMs).then(
    (folders) => {
      if (folders > 0) log.info({ folders, retentionMs }, 'deleted dropped failed tasks older than replication.retention');
    },
    (error: unknown) => log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not delete dropped failed tasks in failed/dropped/'),
  );
}
