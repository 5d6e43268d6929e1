import { redactText, redactUrl } from '../runtime/redact.js';
import type { Lease, SchedulerDeps } from './ports.js';
import type { ReplicationConfig } from '../config/types.js';
import type { WaitingTask } from '../store/task-store.js';
import { untrustedReason, type UntrustedFolder } from './uri-groups.js';
import { shownRemote } from '../task/names.js';

/**
 * How long a task no remote of this node's config may push waits before it is parked: long enough
 * for a config change rolling through the cluster (reload, restart) to reach every node —
 * lockStale plus two passes. Until then a node with the new config may still push it.
 */
export function refusalGraceMs(config: ReplicationConfig): number {
  return config.lockStaleMs + 2 * (config.distributionIntervalMs + config.randomDelayMs);
}

/** Claimed tasks sorted by what may happen to them (DESIGN.md "Waiting folders"). */
export interface SortedClaim {
  readonly push: WaitingTask[];
  /** Refused past their grace, by reason: parked in failed/. */
  readonly park: Map<string, WaitingTask[]>;
  /** Refused, but younger than their grace: back to waiting/. */
  readonly putBack: WaitingTask[];
}

/** Every claimed task is checked again: a folder's tasks are anyone's input, its first task spoke for them all. */
export function sortClaimed(config: ReplicationConfig, uriKey: string, claimed: readonly WaitingTask[], offsetMs: number, now: number): SortedClaim {
  const sorted: SortedClaim = { push: [], park: new Map(), putBack: [] };
  const graceMs = refusalGraceMs(config);
  for (const item of claimed) {
    const reason = untrustedReason(config, item.task, uriKey);
    if (reason === undefined) sorted.push.push(item);
    else if (now - (item.mtimeMs - offsetMs) < graceMs) sorted.putBack.push(item);
    else {
      const same = sorted.park.get(reason);
      if (same === undefined) sorted.park.set(reason, [item]);
      else same.push(item);
    }
  }
  return sorted;
}

/** Moves refused claimed tasks to `failed/<uriKey>/` with their reason, under `lock`; returns how many went. */
export async function parkRefused(
  deps: SchedulerDeps,
  lock: Lease,
  uriKey: string,
  uri: string,
  park: ReadonlyMap<string, readonly WaitingTask[]>,
): Promise<number> {
  let parked = 0;
  for (const [reason, tasks] of park) {
    if (!(await lock.stillMine())) break;
    const moved = await deps.store.fail(
      lock.claimName,
      tasks.map(({ name }) => name),
      { reason },
    );
    parked += moved.length;
    const remote = shownRemote(tasks[0]!.task.remote);
    deps.log.error({ uri: redactUrl(uri), remote, tasks: moved.length, reason: redactText(reason) }, 'task refused: parked in failed/ without pushing');
    deps.events?.({ type: 'task-failed', remote, uri: redactUrl(uri), uriKey, tasks: moved.length, reason: redactText(reason) });
  }
  return parked;
}

/**
 * A URI whose folder's task no node may push: its tasks are claimed under the URI's lock like any
 * other state change, the refused ones past their grace parked in failed/ with their reason, and
 * the rest put back. Returns how many were parked; 0 when the lock is taken (the next pass tries
 * again).
 */
export async function parkUntrusted(deps: SchedulerDeps, uriKey: string, uri: string, offsetMs: number): Promise<number> {
  const lock = await deps.locks.acquire(uriKey, uri);
  if (lock === undefined) return 0;
  try {
    const claimed = await deps.store.claim(lock.claimName, uriKey);
    const sorted = sortClaimed(deps.config(), uriKey, claimed, offsetMs, deps.clock.now());
    const parked = await parkRefused(deps, lock, uriKey, uri, sorted.park);
    const back = [...sorted.push, ...sorted.putBack];
    if (back.length > 0 && (await lock.stillMine())) await deps.store.reset(lock.claimName, back);
    return parked;
  } finally {
    await lock.release().catch((error: unknown) => deps.log.warn({ uri: redactUrl(uri), err: String(error) }, 'could not release the URI lock'));
  }
}

/**
 * URIs whose folder's task is refused, each with whether it waited long enough (refusalGraceMs)
 * to be parked. A URI whose refused folders are all younger is listed too (a drain waits for it).
 */
export function untrustedByUri(
  untrusted: readonly UntrustedFolder[],
  config: ReplicationConfig,
  offsetMs: number,
  now: number,
): Map<string, { uri: string; due: boolean }> {
  const graceMs = refusalGraceMs(config);
  const byUri = new Map<string, { uri: string; due: boolean }>();
  for (const { folder } of untrusted) {
    const due = now - (folder.oldestMtimeMs - offsetMs) >= graceMs;
    const known = byUri.get(folder.uriKey);
    if (known === undefined) byUri.set(folder.uriKey, { uri: folder.sample.task.uri, due });
    else if (due) byUri.set(folder.uriKey, { ...known, due });
  }
  return byUri;
}
