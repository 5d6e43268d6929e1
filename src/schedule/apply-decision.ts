import { redactUrl } from '../runtime/redact.js';
import { retryDelayMs } from './backoff.js';
import type { ClaimLedger } from './claim-ledger.js';
import type { JobHeartbeat } from './job-heartbeat.js';
import type { JobDecision, JobVerdict, UnitResult } from './job-outcome.js';
import type { JobResult } from './job-result.js';
import type { Lease, SchedulerDeps } from './ports.js';
import { isEmpty, type RefRejections } from './ref-rejections.js';
import type { UriGroup } from './uri-groups.js';
import type { UriState } from './uri-state.js';
import type { WaitingTask } from '../store/store-types.js';

/** Thrown by `fence` when the lock is no longer this node's: the job stops writing at once. */
export class LockLost extends Error {}

/** One push unit's result, with the remote and project it pushed. */
export type PushedUnit = UnitResult & { readonly remote: string; readonly project: string };

/** What every step of one job works with, under its lock. */
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

/** What a decision is applied to besides the job: its URI's state and what its push found. */
export interface DecisionInputs {
  readonly state: UriState | undefined;
  readonly rejections: RefRejections | undefined;
  readonly failedRefs: number;
  readonly refusedForNow: number;
  /** Claimed tasks parked in failed/ before the push (refused names): counted as failed (`--drain` exits 1 for them too). */
  readonly parked: number;
}

/** The store moves, retry state, log lines and events of a decision, in that order; fenced. */
export async function applyDecision(job: Job, decision: JobDecision<PushedUnit>, inputs: DecisionInputs): Promise<JobResult> {
  const failed = await moveUnits(job, decision, inputs);
  const failedTasks = failed + inputs.parked;
  const { verdict } = decision;
  switch (verdict.kind) {
    case 'aborted':
      return { kind: 'aborted', ...alsoFailed(failedTasks) };
    case 'host-down': {
      const why = verdict.overloaded ? 'host overloaded: fewer pushes to it at once, spaced out' : 'host unreachable, its circuit is open';
      job.deps.log.warn({ uri: redactUrl(job.group.uri), reason: verdict.reason }, `${why}; the tasks wait without spending a retry`);
      return { kind: 'host-down', ...alsoFailed(failedTasks) };
    }
    case 'give-up':
      await giveUp(job, verdict);
      return { kind: 'failed', claimed: verdict.names.length + failedTasks };
    case 'retry': {
      const notBefore = await scheduleRetry(job, verdict, inputs);
      return { kind: 'retry', notBefore, attempts: verdict.attempts, ...alsoFailed(failedTasks) };
    }
    default:
      await keepOnlyRejections(job, inputs);
      if (failed > 0 && failed === job.claimed.size) return { kind: 'failed', claimed: failedTasks };
      return {
        kind: 'pushed',
        claimed: job.claimed.size,
        failedRefs: inputs.failedRefs,
        ...alsoFailed(failedTasks),
        ...(inputs.refusedForNow > 0 ? { refusedForNow: inputs.refusedForNow } : {}),
      };
  }
}

/** Queues again, finishes and fails the decision's units; returns how many tasks failed. */
async function moveUnits(
  { deps, group, lock, claims, claimed }: Job,
  { finish, requeue, fail }: JobDecision<PushedUnit>,
  inputs: DecisionInputs,
): Promise<number> {
  const { store, log } = deps;
  const uri = redactUrl(group.uri);
  if (requeue.length > 0) claims.movedOut(await store.reset(lock.claimName, tasksNamed(claimed, requeue)));
  for (const { names } of finish) if (!claims.pushedAll(names)) await store.finish(lock.claimName, [...names]);
  let failedTasks = 0;
  for (const unit of fail) {
    const reason = unit.failure!.message;
    failedTasks += unit.names.length;
    claims.movedOut(await store.fail(lock.claimName, [...unit.names], { reason, attempts: (inputs.state?.attempts ?? 0) + 1 }));
    log.error({ uri, remote: unit.remote, project: unit.project, tasks: unit.names.length, reason }, 'task failed');
    deps.events?.({ type: 'task-failed', remote: unit.remote, uri, uriKey: group.uriKey, tasks: unit.names.length, reason });
  }
  return failedTasks;
}

type RetryVerdict = Extract<JobVerdict, { kind: 'retry' | 'give-up' }>;

/** Retries are spent: the tasks fail and the URI's backoff is forgotten. */
async function giveUp({ deps, group, lock, claims }: Job, verdict: RetryVerdict): Promise<void> {
  const { remote, uriKey } = group;
  const uri = redactUrl(group.uri);
  const reason = `${verdict.reason} (gave up after ${verdict.attempts} attempts)`;
  await fence(lock);
  claims.movedOut(await deps.store.fail(lock.claimName, [...verdict.names], { reason, attempts: verdict.attempts }));
  await deps.store.deleteUriState(uriKey);
  deps.log.error({ uri, remote: remote.name, attempts: verdict.attempts, reason: verdict.reason }, 'task failed: retries exhausted');
  deps.events?.({ type: 'task-failed', remote: remote.name, uri, uriKey, tasks: verdict.names.length, reason });
}

/** Records the URI's backoff, then queues the tasks again; returns when they may be tried. */
async function scheduleRetry(job: Job, verdict: RetryVerdict, inputs: DecisionInputs): Promise<number> {
  const { deps, group, lock, claims } = job;
  const { remote, uriKey } = group;
  const { attempts, reason } = verdict;
  const now = deps.clock.now();
  const notBefore = now + retryDelayMs(remote.replicationRetryMs, attempts, deps.random);
  await writeState(job, { attempts, lastError: reason, notBefore }, inputs.rejections, now);
  claims.movedOut(await deps.store.reset(lock.claimName, tasksNamed(job.claimed, verdict.names)));
  const uri = redactUrl(group.uri);
  deps.log.warn({ uri, attempts, retryInMs: notBefore - now, reason }, 'retry scheduled');
  deps.events?.({ type: 'retry-scheduled', remote: remote.name, uri, uriKey, attempts, retryInMs: notBefore - now, reason });
  return notBefore;
}

/** After a push without a retry, the URI's state keeps only its runs of refused refs (no backoff), or goes. */
async function keepOnlyRejections(job: Job, inputs: DecisionInputs): Promise<void> {
  if (!isEmpty(inputs.rejections)) {
    await writeState(job, { attempts: 0, lastError: '', notBefore: 0 }, inputs.rejections, job.deps.clock.now());
  } else if (inputs.state !== undefined) {
    await fence(job.lock);
    await job.deps.store.deleteUriState(job.group.uriKey);
  }
}

/** The URI's state file, written under the lock: its backoff, and its runs of refused refs if any. */
async function writeState(
  { deps, group, lock }: Job,
  backoff: Pick<UriState, 'attempts' | 'lastError' | 'notBefore'>,
  rejections: RefRejections | undefined,
  now: number,
): Promise<void> {
  await fence(lock);
  const state: UriState = {
    uri: group.uri,
    ...backoff,
    updatedAt: now,
    nodeId: deps.config().nodeId,
    ...(isEmpty(rejections) ? {} : { refRejections: rejections }),
  };
  await deps.store.writeUriState(group.uriKey, state);
}

function tasksNamed(claimed: ReadonlyMap<string, WaitingTask>, names: Iterable<string>): WaitingTask[] {
  return [...names].map((name) => claimed.get(name)!);
}

export function alsoFailed(failedTasks: number): { failedTasks?: number } {
  return failedTasks > 0 ? { failedTasks } : {};
}
