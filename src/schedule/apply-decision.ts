import { redactUrl } from '../runtime/redact.js';
import { retryDelayMs } from './backoff.js';
import type { ClaimLedger } from './claim-ledger.js';
import type { JobHeartbeat } from './job-heartbeat.js';
import type { JobDecision, UnitResult } from './job-outcome.js';
import type { JobResult } from './job-result.js';
import type { Lease, SchedulerDeps } from './ports.js';
import { isEmpty, type RefRejections } from './ref-rejections.js';
import type { UriGroup } from './uri-groups.js';
import type { UriState } from './uri-state.js';
import type { WaitingTask } from '../store/store-types.js';

/** What every step of one job works with, under its lock. */
/** Thrown by `fence` when the lock is no longer this node's: the job stops writing at once. */
export class LockLost extends Error {}

/** One push unit's result, with the remote and project it pushed. */
export type PushedUnit = UnitResult & { readonly remote: string; readonly project: string };

export interface Job {
  readonly deps: SchedulerDeps;
  readonly group: UriGroup;
  readonly lock: Lease;
  readonly claims: ClaimLedger;
  readonly heartbeat: JobHeartbeat;
  /** The claimed tasks it pushes, by file name. */
  readonly claimed: Map<string, WaitingTask>;
  /** Claimed tasks whose git push was started: queued again if the lock turns out lost (push-job.ts queueAgainAfterLostLock). */
  readonly pushStarted: WaitingTask[];
}

export async function fence(lock: Lease): Promise<void> {
  if (!(await lock.stillMine())) throw new LockLost();
}

/** Tasks of one URI grouped by (remote, project): each group is one git push. */
/** The store moves, retry state, log lines and events of a decision, in that order; fenced. */
export async function applyDecision(
  { deps, group, lock, claims }: Job,
  { finish, requeue, fail, verdict }: JobDecision<PushedUnit>,
  job: {
    state: UriState | undefined;
    rejections: RefRejections | undefined;
    /** The tasks this job pushes, by file name. */
    claimed: ReadonlyMap<string, WaitingTask>;
    failedRefs: number;
    refusedForNow: number;
  },
): Promise<JobResult> {
  const { store, clock, log } = deps;
  const uri = redactUrl(group.uri);
  const { remote, uriKey } = group;
  if (requeue.length > 0) claims.movedOut(await store.reset(lock.claimName, tasksNamed(job.claimed, requeue)));
  for (const { names } of finish) if (!claims.pushedAll(names)) await store.finish(lock.claimName, [...names]);
  let failedTasks = 0;
  for (const unit of fail) {
    const reason = unit.failure!.message;
    failedTasks += unit.names.length;
    claims.movedOut(await store.fail(lock.claimName, [...unit.names], { reason, attempts: (job.state?.attempts ?? 0) + 1 }));
    log.error({ uri, remote: unit.remote, project: unit.project, tasks: unit.names.length, reason }, 'task failed');
    deps.events?.({ type: 'task-failed', remote: unit.remote, uri, uriKey, tasks: unit.names.length, reason });
  }
  if (verdict.kind === 'aborted') return { kind: 'aborted', ...alsoFailed(failedTasks) };
  if (verdict.kind === 'host-down') {
    const why = verdict.overloaded ? 'host overloaded: fewer pushes to it at once, spaced out' : 'host unreachable, its circuit is open';
    log.warn({ uri, reason: verdict.reason }, `${why}; the tasks wait without spending a retry`);
    return { kind: 'host-down', ...alsoFailed(failedTasks) };
  }
  if (verdict.kind === 'give-up') {
    const reason = `${verdict.reason} (gave up after ${verdict.attempts} attempts)`;
    await fence(lock);
    claims.movedOut(await store.fail(lock.claimName, [...verdict.names], { reason, attempts: verdict.attempts }));
    await store.deleteUriState(uriKey);
    log.error({ uri, remote: remote.name, attempts: verdict.attempts, reason: verdict.reason }, 'task failed: retries exhausted');
    deps.events?.({ type: 'task-failed', remote: remote.name, uri, uriKey, tasks: verdict.names.length, reason });
    return { kind: 'failed', claimed: verdict.names.length + failedTasks };
  }
  const now = clock.now();
  if (verdict.kind === 'retry') {
    const { attempts, reason } = verdict;
    const notBefore = now + retryDelayMs(remote.replicationRetryMs, attempts, deps.random);
    await fence(lock);
    await store.writeUriState(uriKey, {
      uri: group.uri,
      attempts,
      lastError: reason,
      notBefore,
      updatedAt: now,
      nodeId: deps.config().nodeId,
      ...withRejections(job.rejections),
    });
    claims.movedOut(await store.reset(lock.claimName, tasksNamed(job.claimed, verdict.names)));
    log.warn({ uri, attempts, retryInMs: notBefore - now, reason }, 'retry scheduled');
    deps.events?.({ type: 'retry-scheduled', remote: remote.name, uri, uriKey, attempts, retryInMs: notBefore - now, reason });
    return { kind: 'retry', notBefore, attempts, ...alsoFailed(failedTasks) };
  }
  if (!isEmpty(job.rejections)) {
    // No backoff: the runs of refused refs are all that is kept.
    await fence(lock);
    await store.writeUriState(uriKey, {
      uri: group.uri,
      attempts: 0,
      lastError: '',
      notBefore: 0,
      updatedAt: now,
      nodeId: deps.config().nodeId,
      refRejections: job.rejections,
    } satisfies UriState);
  } else if (job.state !== undefined) {
    await fence(lock);
    await store.deleteUriState(uriKey);
  }
  if (failedTasks > 0 && failedTasks === job.claimed.size) return { kind: 'failed', claimed: failedTasks };
  return {
    kind: 'pushed',
    claimed: job.claimed.size,
    failedRefs: job.failedRefs,
    ...alsoFailed(failedTasks),
    ...(job.refusedForNow > 0 ? { refusedForNow: job.refusedForNow } : {}),
  };
}

function withRejections(rejections: RefRejections | undefined): { refRejections?: RefRejections } {
  return isEmpty(rejections) ? {} : { refRejections: rejections };
}

function tasksNamed(claimed: ReadonlyMap<string, WaitingTask>, names: Iterable<string>): WaitingTask[] {
  return [...names].map((name) => claimed.get(name)!);
}

export function alsoFailed(failedTasks: number): { failedTasks?: number } {
  return failedTasks > 0 ? { failedTasks } : {};
}
