import { FULL_SYNC_REF, type Task } from '../task/task.js';
import type { DriftReport } from './verify.js';
import type { Destination } from './plan-tasks.js';
import { plural } from '../runtime/plural.js';

/** Failed tasks of one verified destination whose refs verify found in sync there. */
export interface FailedInSync<T> {
  readonly remote: string;
  /** Redacted, as verify prints it. */
  readonly uri: string;
  readonly tasks: readonly T[];
}

/**
 * The failed tasks verify has just proved needless: they failed before `readBefore` (so before
 * verify read the destinations: a ref that moved and failed again since is not judged by an older
 * reading; a task whose failure time is unknown is kept), their remote, project and URI are a
 * destination it read, the destination answered, and none of their refs is among the refs verify
 * would push to repair it (`fixRefs`: missing, different, or extra under mirror). A full-sync task
 * needs the whole destination in sync. Refs the remote never pushes are no drift to verify, so they
 * do not keep a task. Pure: `reports[i]` is the report of `destinations[i]`.
 */
export function failedNowInSync<T extends { readonly task: Task; readonly reason?: { readonly at: number } | undefined }>(
  failed: readonly T[],
  destinations: readonly Destination[],
  reports: readonly DriftReport[],
  readBefore: number,
): FailedInSync<T>[] {
  const byDestination = new Map<string, number>();
  destinations.forEach((destination, i) => byDestination.set(destinationKey(destination.remote.name, destination.project, destination.uri), i));
  const found = new Map<number, T[]>();
  for (const item of failed) {
    if (!failedBefore(item, readBefore)) continue;
    const index = byDestination.get(destinationKey(item.task.remote, item.task.project, item.task.uri));
    const report = index === undefined ? undefined : reports[index];
    if (index === undefined || report === undefined || !refsInSync(item.task.refs, report)) continue;
    const tasks = found.get(index);
    if (tasks === undefined) found.set(index, [item]);
    else tasks.push(item);
  }
  return [...found.entries()].sort(([a], [b]) => a - b).map(([index, tasks]) => ({ remote: reports[index]!.remote, uri: reports[index]!.uri, tasks }));
}

/** Whether a failed task's reason record says it failed before `readBefore`; false when it says nothing. */
export function failedBefore(item: { readonly reason?: { readonly at: number } | undefined }, readBefore: number): boolean {
  return item.reason !== undefined && item.reason.at < readBefore;
}

function refsInSync(refs: readonly string[], report: DriftReport): boolean {
  if (report.state === 'unreachable') return false;
  if (refs.includes(FULL_SYNC_REF)) return report.state === 'in-sync';
  const toRepair = new Set(report.fixRefs);
  return refs.every((ref) => !toRepair.has(ref));
}

function destinationKey(remote: string, project: string, uri: string): string {
  return `${remote}\u0000${project}\u0000${uri}`;
}

/** verify's line for one destination: what it found in failed/, or what `--fix` dropped. */
export function describeFailedInSync(found: FailedInSync<unknown>, dropped: number | undefined): string {
  const where = `${found.remote} ${found.uri}`;
  if (dropped !== undefined) return `failed/      ${where}: dropped ${plural(dropped, 'failed task')} whose refs are now in sync`;
  const count = found.tasks.length;
  return `failed/      ${where}: ${plural(count, 'failed task')} whose refs are now in sync; \`refrelay verify --fix\` drops ${count === 1 ? 'it' : 'them'}`;
}
