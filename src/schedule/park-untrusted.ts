import { redactText, redactUrl } from '../runtime/redact.js';
import type { SchedulerDeps } from './ports.js';
import type { ReplicationConfig } from '../config/types.js';
import type { UntrustedTask } from './uri-groups.js';

/**
 * Moves task files no node may push (see untrustedReason) to `failed/<uriKey>/` with their reason,
 * under the URI's lock like any other state change of its tasks: claimed into the lease folder,
 * then failed. Returns how many were parked; 0 when the lock is taken (the next pass tries again).
 */
export async function parkUntrusted(deps: SchedulerDeps, uriKey: string, uri: string, tasks: readonly UntrustedTask[]): Promise<number> {
  const lock = await deps.locks.acquire(uriKey, uri);
  if (lock === undefined) return 0;
  let parked = 0;
  try {
    const byReason = new Map<string, UntrustedTask[]>();
    for (const task of tasks) {
      const same = byReason.get(task.reason);
      if (same === undefined) byReason.set(task.reason, [task]);
      else same.push(task);
    }
    for (const [reason, group] of byReason) {
      const claimed = await deps.store.claim(
        lock.claimName,
        group.map(({ item }) => item.name),
      );
      if (claimed.length === 0) continue;
      if (!(await lock.stillMine())) break;
      const moved = await deps.store.fail(lock.claimName, claimed, { reason });
      parked += moved.length;
      const remote = group[0]!.item.task.remote;
      deps.log.error({ uri: redactUrl(uri), remote, tasks: moved.length, reason: redactText(reason) }, 'task refused: parked in failed/ without pushing');
      deps.events?.({ type: 'task-failed', remote, uri: redactUrl(uri), uriKey, tasks: moved.length, reason: redactText(reason) });
    }
  } finally {
    await lock.release().catch((error: unknown) => deps.log.warn({ uri: redactUrl(uri), err: String(error) }, 'could not release the URI lock'));
  }
  return parked;
}

/**
 * Refused tasks per URI, with those that waited long enough for a config change rolling through
 * the cluster (reload, restart) to reach this node: lockStale plus two passes. A URI whose tasks
 * are all younger is listed with none (a drain still waits for it).
 */
export function untrustedByUri(
  untrusted: readonly UntrustedTask[],
  config: ReplicationConfig,
  offsetMs: number,
  now: number,
): Map<string, { uri: string; tasks: UntrustedTask[] }> {
  const graceMs = config.lockStaleMs + 2 * (config.distributionIntervalMs + config.randomDelayMs);
  const byUri = new Map<string, { uri: string; tasks: UntrustedTask[] }>();
  for (const entry of untrusted) {
    let batch = byUri.get(entry.uriKey);
    if (batch === undefined) byUri.set(entry.uriKey, (batch = { uri: entry.item.task.uri, tasks: [] }));
    if (now - (entry.item.mtimeMs - offsetMs) >= graceMs) batch.tasks.push(entry);
  }
  return byUri;
}
