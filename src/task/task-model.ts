import { STORE_RECORD_MAX_BYTES } from '../runtime/bounded-read.js';

/** The refs value Gerrit and refrelay use for "push every ref of the project". */
export const FULL_SYNC_REF = '..all..';

/** One ref update for one destination URI: the unit that is persisted and claimed. */
export interface Task {
  readonly project: string;
  readonly refs: readonly string[];
  readonly uri: string;
  readonly remote: string;
}

/** Full syncs (replicate, replicate on startup) are bulk work; single ref updates are live. */
export type Lane = 'live' | 'bulk';

export function laneOfTask(task: Pick<Task, 'refs'>): Lane {
  return task.refs.length === 1 && task.refs[0] === FULL_SYNC_REF ? 'bulk' : 'live';
}

/**
 * Two tasks that push the same thing must have the same key on every node, so the
 * ref order and duplicates a caller happened to produce must not reach the hash.
 * A full sync already covers every single ref, so it absorbs them.
 * The result is frozen because parsed tasks are cached and shared between callers.
 */
export function canonicalTask(task: Task): Task {
  const refs = task.refs.includes(FULL_SYNC_REF) ? [FULL_SYNC_REF] : uniqueSorted(task.refs);
  return Object.freeze({ project: task.project, refs: Object.freeze(refs), uri: task.uri, remote: task.remote });
}

function uniqueSorted(refs: readonly string[]): string[] {
  // Default sort compares UTF-16 code units: locale-independent, so every node agrees.
  const sorted = [...refs].sort();
  // `slice` keeps only what is used: an array built by `filter` has room for 17 refs, and a node
  // holds one parsed task per waiting folder (100,000 of them on a long queue).
  return sorted.filter((ref, i) => i === 0 || ref !== sorted[i - 1]).slice();
}

/**
 * The most bytes of ref names one task file carries: a reader refuses a task file over
 * STORE_RECORD_MAX_BYTES (1 MiB), and project, URI and remote need room beside them.
 */
const TASK_REFS_MAX_BYTES = STORE_RECORD_MAX_BYTES / 2;

/**
 * A task as tasks whose files readers accept: its refs, in canonical order, cut into runs of at
 * most TASK_REFS_MAX_BYTES. Every node cuts the same update the same way, so queuing it twice
 * still makes the same files; the parts wait in one folder and go in one push.
 */
export function tasksWithinSize(task: Task): Task[] {
  const { refs } = canonicalTask(task);
  const runs: string[][] = [[]];
  let bytes = 0;
  for (const ref of refs) {
    const size = Buffer.byteLength(JSON.stringify(ref)) + 1;
    if (bytes + size > TASK_REFS_MAX_BYTES && runs.at(-1)!.length > 0) {
      runs.push([]);
      bytes = 0;
    }
    runs.at(-1)!.push(ref);
    bytes += size;
  }
  return runs.length === 1 ? [task] : runs.map((run) => ({ ...task, refs: run }));
}
