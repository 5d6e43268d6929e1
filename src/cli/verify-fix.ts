import type { ReplicationConfig } from '../config/types.js';
import { StoreError } from '../errors.js';
import type { DriftReport } from '../intake/verify.js';
import { TaskStore } from '../store/task-store.js';
import type { Task } from '../task/task.js';
import { EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE } from './exit-codes.js';
import { plural } from '../runtime/plural.js';

/** What `verify --fix` did with the repairs: all of them queued, or the store's refusal. */
export type RepairOutcome =
  { readonly tasks: number; readonly queued: number; readonly error?: undefined } | { readonly tasks: number; readonly queued: 0; readonly error: string };

/**
 * Queues the repair tasks. A store that cannot be written is an outcome to report beside the
 * drift, not an error that would hide it; nothing to repair never touches the store.
 */
export async function queueRepairs(config: ReplicationConfig, tasks: readonly Task[]): Promise<RepairOutcome> {
  if (tasks.length === 0) return { tasks: 0, queued: 0 };
  const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
  try {
    return { tasks: tasks.length, queued: (await store.createMany(tasks)).length };
  } catch (error) {
    if (error instanceof StoreError) return { tasks: tasks.length, queued: 0, error: error.message };
    throw error;
  }
}

/**
 * Plain `verify` fails on anything not in sync. With `--fix`, queued drift is the success the
 * documented `verify --fix && daemon --drain` needs: 1 only when a repair was not queued, 4 when
 * a destination could not be checked at all (the others' repairs are queued).
 */
export function verifyExitCode(states: readonly DriftReport['state'][], repair: RepairOutcome | undefined): number {
  if (repair === undefined) return states.every((state) => state === 'in-sync') ? EXIT_OK : EXIT_FAILED;
  if (repair.error !== undefined) return EXIT_FAILED;
  return states.includes('unreachable') ? EXIT_UNREACHABLE : EXIT_OK;
}

/** The `--fix` part of the summary line. */
export function describeRepair(repair: RepairOutcome): string {
  return repair.error === undefined
    ? `; queued ${plural(repair.queued, 'task')} to repair the drift`
    : `; could not queue ${plural(repair.tasks, 'task')} to repair the drift`;
}
