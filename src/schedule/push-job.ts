import { join } from 'node:path';
import type { RemoteConfig } from '../config/types.js';
import { redactUrl } from '../runtime/redact.js';
import type { PushFailure, PushOutcome } from '../push/git-pusher.js';
import { FAILURE_POLICY } from '../push/failure-policy.js';
import type { WaitingTask } from '../store/store-types.js';
import { DEFAULT_BACKOFF_CAP_MS, retryDelayMs } from './backoff.js';
import type { Lease, SchedulerDeps } from './ports.js';
import type { PushSlot } from './push-slots.js';
import type { UriGroup } from './uri-groups.js';
import { ClaimLedger } from './claim-ledger.js';
import { JobHeartbeat } from './job-heartbeat.js';
import { decideJobOutcome, type JobDecision, type UnitResult } from './job-outcome.js';
import { logPush } from './push-log.js';
import { isEmpty, type RefRejections } from './ref-rejections.js';
import { settleRefs } from './settle-refs.js';
import { capNotBefore, parseUriState, type UriState } from './uri-state.js';

/**
 * `failedRefs`: rejected refs parked in failed/, one task file each. `refusedForNow`: refs the
 * destination refused for a passing-looking reason while taking others; their tasks wait again. `failedTasks` (present only
 * when not 0): claimed tasks of another push unit of the same URI that failed for good meanwhile.
 */
export type JobResult =
  | { readonly kind: 'pushed'; readonly claimed: number; readonly failedRefs: number; readonly failedTasks?: number; readonly refusedForNow?: number }
  | { readonly kind: 'retry'; readonly notBefore: number; readonly attempts: number; readonly failedTasks?: number }
  | { readonly kind: 'failed'; readonly claimed: number }
  | { readonly kind: 'backoff'; readonly notBefore: number }
  /** The host's circuit is open: the tasks wait, the URI's retry count unchanged. */
  | { readonly kind: 'host-down'; readonly failedTasks?: number }
  | { readonly kind: 'locked' }
  | { readonly kind: 'nothing-claimed' }
  | { readonly kind: 'aborted'; readonly failedTasks?: number }
  | { readonly kind: 'lock-lost' }
  /** Stopped by its own heartbeat: the lock's record could not be written (`error`, the last failure) for lockStale / 2. */
  | { readonly kind: 'stalled'; readonly error: unknown; readonly failedTasks?: number };

/** How many task files a job put in failed/: what `daemon --drain` exits 1 for. */
export function movedToFailed(result: JobResult): number {
  if (result.kind === 'failed') return result.claimed;
  const failedTasks = 'failedTasks' in result ? (result.failedTasks ?? 0) : 0;
  return result.kind === 'pushed' ? result.failedRefs + failedTasks : failedTasks;
}

class LockLost extends Error {}

/** For callers that do not limit pushes (tests of a single job): the slot is always free. */
export const unlimitedSlot: PushSlot = { acquire: async (signal) => !signal.aborted, release: () => undefined };

/** What every step of one job works with, under its lock. */
interface Job {
  readonly deps: SchedulerDeps;
  readonly group: UriGroup;
  readonly lock: Lease;
  readonly claims: ClaimLedger;
  readonly heartbeat: JobHeartbeat;
}

/**
 * One consolidated push of a URI: take its lock, claim every waiting task of it, wait for a push
 * slot of its remote, push the union of their refs, then finish, retry with backoff or park in
 * failed/. The slot is released as soon as the git pushes are over. Every store write is fenced:
 * it happens only while the lock is still ours.
 */
export async function runPushJob(deps: SchedulerDeps, group: UriGroup, signal: AbortSignal, slot: PushSlot = unlimitedSlot): Promise<JobResult> {
  // The retry state is read under the lock (below), where it is authoritative; this node's
  // distributor remembers notBefore from earlier results while the state file is listed, so no
  // read is needed before.
  const acquiredFrom = deps.clock.monotonic();
  const lock = await deps.locks.acquire(group.uriKey, group.uri);
  if (lock === undefined) return { kind: 'locked' };
  const heartbeat = new JobHeartbeat(deps, lock, group.uri, signal, deps.config().lockStaleMs, acquiredFrom);
  const job: Job = { deps, group, lock, claims: new ClaimLedger(lock), heartbeat };
  heartbeat.start();
  try {
    const result = await claimAndPush(job, slot);
    // Stopped by its own heartbeat: the tasks went back to waiting/ (or stay in the lease folder
    // for a takeover), and the node learns its store is failing.
    const stall = heartbeat.stall;
    if (stall !== undefined && result.kind === 'aborted') return { kind: 'stalled', error: stall.error, ...alsoFailed(result.failedTasks ?? 0) };
    return result;
  } catch (error) {
    if (error instanceof LockLost) return { kind: 'lock-lost' };
    throw error;
  } finally {
    slot.release();
    await heartbeat.stop();
    const uri = redactUrl(group.uri);
    await job.claims
      .close(deps.store, (error) => deps.log.warn({ uri, err: String(error) }, 'could not move the finished claim folder aside; deleting its files one by one'))
      .catch((error: unknown) => deps.log.warn({ uri, err: String(error) }, 'could not release the URI lock'));
  }
}

/** Under the lock: check the backoff, claim the URI's waiting tasks, wait for a slot, push. */
async function claimAndPush(job: Job, slot: PushSlot): Promise<JobResult> {
  const { deps, group, lock, claims } = job;
  const { store, clock, log } = deps;
  // Re-read under the lock: a peer may have failed this URI just before we took it.
  const state = await readRetryState(job);
  if (state !== undefined && state.notBefore > clock.now()) return { kind: 'backoff', notBefore: state.notBefore };

  const claimedNames = new Set(
    await store.claim(
      lock.claimName,
      group.tasks.map((item) => item.name),
    ),
  );
  claims.claimed(claimedNames);
  const claimed = group.tasks.filter((item) => claimedNames.has(item.name));
  if (claimed.length === 0) return { kind: 'nothing-claimed' };
  log.info({ uri: redactUrl(group.uri), tasks: claimed.length, lease: lock.leaseId }, 'claimed');
  deps.events?.({
    type: 'claimed',
    remote: group.remote.name,
    uri: redactUrl(group.uri),
    uriKey: group.uriKey,
    tasks: claimed.length,
    oldestQueuedAtMs: oldestMtime(claimed),
  });
  if (!(await slot.acquire(job.heartbeat.signal))) {
    // Stopped, or the lock lost, before a push slot came free: nothing was pushed.
    await fence(lock);
    claims.movedOut(
      await store.reset(
        lock.claimName,
        claimed.map((item) => item.name),
      ),
    );
    return { kind: 'aborted' };
  }
  if (deps.hosts?.mayPush(group.uri, group.uriKey) === false) {
    // Claimed ahead, and the host's circuit opened meanwhile: back to waiting, retries unspent.
    slot.release();
    await fence(lock);
    claims.movedOut(
      await store.reset(
        lock.claimName,
        claimed.map((item) => item.name),
      ),
    );
    return { kind: 'host-down' };
  }
  return await pushClaimed(job, claimed, state, () => slot.release());
}

/**
 * The URI's retry state, its notBefore capped (see capNotBefore). A capped state is written back,
 * so the next read — by this node or a peer, an hour on — finds the backoff over instead of
 * capping the same far-future notBefore again, an hour at a time, forever.
 */
async function readRetryState({ deps, group, lock }: Job): Promise<UriState | undefined> {
  const read = parseUriState(await deps.store.readUriState(group.uriKey));
  if (read === undefined) return undefined;
  const state = capNotBefore(read, deps.clock.now(), DEFAULT_BACKOFF_CAP_MS);
  if (state === read) return state;
  await fence(lock);
  // Under the URI's own key, so the URI is the group's, whatever the file said.
  const repaired: UriState = { ...state, uri: group.uri };
  await deps.store.writeUriState(group.uriKey, repaired);
  deps.log.warn(
    { uri: redactUrl(group.uri), notBefore: read.notBefore, cappedTo: repaired.notBefore, capMs: DEFAULT_BACKOFF_CAP_MS },
    'retry state asked for a backoff beyond the cap; capped',
  );
  return repaired;
}

async function fence(lock: Lease): Promise<void> {
  if (!(await lock.stillMine())) throw new LockLost();
}

/** Tasks of one URI grouped by (remote, project): each group is one git push. */
function pushUnits(claimed: readonly WaitingTask[]): Array<{ remote: string; project: string; tasks: WaitingTask[] }> {
  const units = new Map<string, { remote: string; project: string; tasks: WaitingTask[] }>();
  for (const item of claimed) {
    const key = `${item.task.remote}\u0000${item.task.project}`;
    let unit = units.get(key);
    if (unit === undefined) units.set(key, (unit = { remote: item.task.remote, project: item.task.project, tasks: [] }));
    unit.tasks.push(item);
  }
  return [...units.values()];
}

/** A push unit's result, with what its log lines name. */
type PushedUnit = UnitResult & { readonly remote: string; readonly project: string };

async function pushClaimed(job: Job, claimed: readonly WaitingTask[], state: UriState | undefined, onPushesDone: () => void): Promise<JobResult> {
  const { deps, group, lock } = job;
  const config = deps.config();
  const results: PushedUnit[] = [];
  let rejections = state?.refRejections;
  let failedRefs = 0;
  const units = pushUnits(claimed);
  for (const [index, unit] of units.entries()) {
    const remote: RemoteConfig = config.remotes.find((candidate) => candidate.name === unit.remote) ?? group.remote;
    const names = unit.tasks.map((item) => item.name);
    const refs = [...new Set(unit.tasks.flatMap((item) => item.task.refs))];
    await fence(lock);
    const outcome: PushOutcome = await deps.pusher.push({
      remote,
      uri: group.uri,
      localRepo: join(config.basePath ?? '', `${unit.project}.git`),
      refs,
      signal: job.heartbeat.signal,
      onPushSpawn: job.heartbeat.onPushSpawn,
    });
    // The git work is over; the store bookkeeping that remains need not hold a push slot.
    if (index === units.length - 1) onPushesDone();
    await fence(lock);
    logPush(deps, group, `${lock.leaseId}.${index + 1}`, unit.project, remote.name, refs.length, outcome, oldestMtime(unit.tasks));
    const heldByHost = tellHost(job, remote, outcome.failure);
    const base = { names, remote: remote.name, project: unit.project };
    if (outcome.result === 'failed') {
      if (outcome.failure === undefined) throw new Error('a failed push outcome carries its failure');
      results.push({ ...base, failure: outcome.failure, heldByHost });
      continue;
    }
    const settled = await settleRefs(deps, { project: unit.project, uri: group.uri, remote: remote.name }, outcome.refs, rejections, config.refRejectionLimit);
    failedRefs += settled.parked;
    rejections = settled.rejections;
    if (settled.untracked.length > 0) {
      results.push({
        ...base,
        failure: { kind: 'transient', message: `the destination refused ${settled.untracked.length} refs: ${settled.untracked[0]!.reason}` },
      });
    } else {
      // Only these refs are in trouble: the tasks are pushed again after rescheduleDelay, without a backoff that would hold up the URI's other updates.
      results.push({ ...base, refusedForNow: settled.retry.length });
      if (settled.retry.length > 0)
        deps.log.warn(
          {
            uri: redactUrl(group.uri),
            project: unit.project,
            refs: settled.retry.map((item) => item.ref),
            reason: settled.retry[0]!.reason,
            limit: config.refRejectionLimit,
          },
          'refs refused by the destination; pushing them again',
        );
    }
  }
  const decision = decideJobOutcome(results, { attempts: state?.attempts ?? 0, maxRetries: group.remote.replicationMaxRetries });
  const refusedForNow = results.reduce((sum, unit) => sum + (unit.refusedForNow ?? 0), 0);
  return applyDecision(job, decision, { state, rejections, claimed: claimed.length, failedRefs, refusedForNow });
}

/** Tells the host's circuit and pacing what the push found; true when they take the failure as the host's. */
function tellHost({ deps: { hosts }, group }: Job, remote: RemoteConfig, failure: PushFailure | undefined): boolean {
  switch (failure === undefined ? 'reached' : FAILURE_POLICY[failure.kind].host) {
    case 'reached':
      hosts?.reached(group.uri);
      return false;
    case 'overloaded':
      return hosts?.overloaded(group.uri, failure!.retryAfterMs) === true;
    case 'connection-failed':
      return hosts?.connectionFailed(group.uri, group.uriKey, remote.replicationRetryMs, failure!.message) === true;
    default:
      return false;
  }
}

/** The store moves, retry state, log lines and events of a decision, in that order; fenced. */
async function applyDecision(
  { deps, group, lock, claims }: Job,
  { finish, requeue, fail, verdict }: JobDecision<PushedUnit>,
  job: { state: UriState | undefined; rejections: RefRejections | undefined; claimed: number; failedRefs: number; refusedForNow: number },
): Promise<JobResult> {
  const { store, clock, log } = deps;
  const uri = redactUrl(group.uri);
  const { remote, uriKey } = group;
  if (requeue.length > 0) claims.movedOut(await store.reset(lock.claimName, [...requeue]));
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
    claims.movedOut(await store.reset(lock.claimName, [...verdict.names]));
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
  if (failedTasks > 0 && failedTasks === job.claimed) return { kind: 'failed', claimed: failedTasks };
  return {
    kind: 'pushed',
    claimed: job.claimed,
    failedRefs: job.failedRefs,
    ...alsoFailed(failedTasks),
    ...(job.refusedForNow > 0 ? { refusedForNow: job.refusedForNow } : {}),
  };
}

function withRejections(rejections: RefRejections | undefined): { refRejections?: RefRejections } {
  return isEmpty(rejections) ? {} : { refRejections: rejections };
}

function alsoFailed(failedTasks: number): { failedTasks?: number } {
  return failedTasks > 0 ? { failedTasks } : {};
}

function oldestMtime(tasks: readonly WaitingTask[]): number {
  return tasks.reduce((oldest, item) => Math.min(oldest, item.mtimeMs), Number.POSITIVE_INFINITY);
}
