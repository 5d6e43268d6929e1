import type { Log } from '../runtime/log.js';
import type { TaskStore } from '../store/task-store.js';

/** Temp files older than this in building/ were left by a crash. */
const BUILDING_MAX_AGE_MS = 60 * 60 * 1000;
/** How often a node sweeps building/ and failed/dropped/: leftovers are rare and cost nothing meanwhile. */
export const SWEEP_EVERY_MS = 5 * 60 * 1000;

/**
 * Removes what crashes and retention leave in the store: temp files in building/, then dropped
 * failed tasks past `replication.retention` (store/dropped-tasks.ts). A building/ sweep that
 * throws fails the pass it runs in, like the pass's listing would; a dropped folder this node may
 * not delete is only logged: it must not stop its pushes.
 */
export async function sweepStoreLeftovers(store: Pick<TaskStore, 'sweepBuilding' | 'sweepDropped'>, retentionMs: number, log: Log): Promise<void> {
  const swept = await store.sweepBuilding(BUILDING_MAX_AGE_MS);
  if (swept > 0) log.info({ files: swept }, 'swept temp files left in building/');
  await store.sweepDropped(retentionMs).then(
    (folders) => {
      if (folders > 0) log.info({ folders, retentionMs }, 'deleted dropped failed tasks older than replication.retention');
    },
    (error: unknown) => log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not delete dropped failed tasks in failed/dropped/'),
  );
}
