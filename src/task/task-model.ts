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
