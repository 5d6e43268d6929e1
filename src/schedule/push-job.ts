import { join } from 'node:path';
import type { RemoteConfig } from '../config/types.js';
import { redactUrl } from '../runtime/redact.js';
import type { PushOutcome } from '../push/git-pusher.js';
import { FAILURE_POLICY, retryLimit, type FailureKind } from '../push/failure-policy.js';
import type { WaitingTask } from '../store/store-types.js';
import { DEFAULT_BACKOFF_CAP_MS, retryDelayMs } from './backoff.js';
import type { Lease, SchedulerDeps } from './ports.js';
import type { PushSlot } from './push-slots.js';
import type { UriGroup } from './uri-groups.js';
import { ClaimLedger } from './claim-ledger.js';
import { JobHeartbeat } from './job-heartbeat.js';
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
  switch (result.kind) {
    case 'failed':
      return result.claimed;
    case 'pushed':
      return result.failedRefs + (result.failedTasks ?? 0);
    case 'retry':
    case 'aborted':
    case 'stalled':
    case 'host-down':
      return result.failedTasks ?? 0;
    default:
      return 0;
  }
}

class LockLost extends Error {}

/** For callers that do not limit pushes (tests of a single job): the slot is always free. */
export const unlimitedSlot: PushSlot = { acquire: async (signal) => !signal.aborted, release: () => undefined };

/**
 * One consolidated push of a URI: take its lock, claim every waiting task of it, wait for a push
 * slot of its remote, push the union of their refs, then finish, retry with backoff or park in
 * failed/. The slot is released as soon as the git pushes are over. Every store write is fenced:
 * it happens only while the lock is still ours.
 */
export async function runPushJob(deps: SchedulerDeps, group: UriGroup, signal: AbortSignal, slot: PushSlot = unlimitedSlot): Promise<JobResult> {
  const { store, clock, log } = deps;
  const config = deps.config();
  // The retry state is read under the lock (below), where it is authoritative; this node's
  // distributor remembers notBefore from earlier results while the state file is listed, so no
  // read is needed before.
  const acquiredFrom = clock.monotonic();
  const lock = await deps.locks.acquire(group.uriKey, group.uri);
  if (lock === undefined) return { kind: 'locked' };
  // The push stops when the node stops (signal), as soon as the lock is found lost, or when the
  // lock's record could not be written for so long that peers may soon judge it stale.
  const jobControl = new AbortController();
  const onOuterAbort = (): void => jobControl.abort();
  signal.addEventListener('abort', onOuterAbort, { once: true });
  if (signal.aborted) jobControl.abort();
  const claims = new ClaimLedger(lock);
  const heartbeat = new JobHeartbeat(deps, lock, group.uri, jobControl, config.lockStaleMs, acquiredFrom);
  heartbeat.start();
  try {
    const result = await claimAndPush(deps, group, lock, claims, jobControl.signal, slot, heartbeat.onPushSpawn);
    const stall = heartbeat.stall;
    // Stopped by its own heartbeat: the tasks went back to waiting/ (or stay in the lease folder
    // for a takeover), and the node learns its store is failing.
    if (stall !== undefined && result.kind === 'aborted') return { kind: 'stalled', error: stall.error, ...alsoFailed(result.failedTasks ?? 0) };
    return result;
  } catch (error) {
    if (error instanceof LockLost) return { kind: 'lock-lost' };
    throw error;
  } finally {
    slot.release();
    await heartbeat.stop();
    signal.removeEventListener('abort', onOuterAbort);
    const uri = redactUrl(group.uri);
    await claims.close(store, (error) => log.warn({ uri, err: String(error) }, 'could not move the finished claim folder aside; deleting its files one by one')).catch((error: unknown) => log.warn({ uri, err: String(error) }, 'could not release the URI lock'));
  }
}

/** Under the lock: check the backoff, claim the URI's waiting tasks, wait for a slot, push. */
async function claimAndPush(deps: SchedulerDeps, group: UriGroup, lock: Lease, claims: ClaimLedger, signal: AbortSignal, slot: PushSlot, onPushSpawn: (pid: number) => void): Promise<JobResult> {
  const { store, clock, log } = deps;
  // Re-read under the lock: a peer may have failed this URI just before we took it.
  const state = await readRetryState(deps, group, lock);
  if (state !== undefined && state.notBefore > clock.now()) return { kind: 'backoff', notBefore: state.notBefore };

  const claimedNames = new Set(await store.claim(lock.claimName, group.tasks.map((item) => item.name)));
  claims.claimed(claimedNames);
  const claimed = group.tasks.filter((item) => claimedNames.has(item.name));
  if (claimed.length === 0) return { kind: 'nothing-claimed' };
  log.info({ uri: redactUrl(group.uri), tasks: claimed.length, lease: lock.leaseId }, 'claimed');
  deps.events?.({ type: 'claimed', remote: group.remote.name, uri: redactUrl(group.uri), uriKey: group.uriKey, tasks: claimed.length, oldestQueuedAtMs: oldestMtime(claimed) });
  if (!(await slot.acquire(signal))) {
    // Stopped, or the lock lost, before a push slot came free: nothing was pushed.
    await fence(lock);
    claims.movedOut(await store.reset(lock.claimName, claimed.map((item) => item.name)));
    return { kind: 'aborted' };
  }
  if (deps.hosts?.mayPush(group.uri, group.uriKey) === false) {
    // Claimed ahead, and the host's circuit opened meanwhile: back to waiting, retries unspent.
    slot.release();
    await fence(lock);
    claims.movedOut(await store.reset(lock.claimName, claimed.map((item) => item.name)));
    return { kind: 'host-down' };
  }
  return await pushClaimed(deps, group, lock, claims, claimed, state, signal, onPushSpawn, () => slot.release());
}

/**
 * The URI's retry state, its notBefore capped (see capNotBefore). A capped state is written back,
 * so the next read — by this node or a peer, an hour on — finds the backoff over instead of
 * capping the same far-future notBefore again, an hour at a time, forever.
 */
async function readRetryState(deps: SchedulerDeps, group: UriGroup, lock: Lease): Promise<UriState | undefined> {
  const read = parseUriState(await deps.store.readUriState(group.uriKey));
  if (read === undefined) return undefined;
  const state = capNotBefore(read, deps.clock.now(), DEFAULT_BACKOFF_CAP_MS);
  if (state === read) return state;
  await fence(lock);
  // Under the URI's own key, so the URI is the group's, whatever the file said.
  const repaired: UriState = { ...state, uri: group.uri };
  await deps.store.writeUriState(group.uriKey, repaired);
  deps.log.warn({ uri: redactUrl(group.uri), notBefore: read.notBefore, cappedTo: repaired.notBefore, capMs: DEFAULT_BACKOFF_CAP_MS }, 'retry state asked for a backoff beyond the cap; capped');
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

async function pushClaimed(
  deps: SchedulerDeps,
  group: UriGroup,
  lock: Lease,
  claims: ClaimLedger,
  claimed: readonly WaitingTask[],
  state: UriState | undefined,
  signal: AbortSignal,
  onPushSpawn: (pid: number) => void,
  onPushesDone: () => void,
): Promise<JobResult> {
  const { store, clock, log } = deps;
  const config = deps.config();
  let failedRefs = 0;
  let retryable: { message: string; kind: FailureKind } | undefined;
  /** Every retryable failure so far was the host's (open circuit, or overload): no retry is spent. */
  let hostDown = true;
  let overloaded = false;
  let failedTasks = 0;
  let aborted = false;
  let refusedForNow = 0;
  let rejections = state?.refRejections;
  const toRetry: string[] = [];
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
      signal,
      onPushSpawn,
    });
    // The git work is over; the store bookkeeping that remains need not hold a push slot.
    if (index === units.length - 1) onPushesDone();
    await fence(lock);
    logPush(deps, group, `${lock.leaseId}.${index + 1}`, unit.project, remote.name, refs.length, outcome, oldestMtime(unit.tasks));
    const failure = outcome.failure;
    // Reached: the host answered (even with a rejection or an error), and did not say it is busy.
    const host = failure === undefined ? 'reached' : FAILURE_POLICY[failure.kind].host;
    if (host === 'reached') deps.hosts?.reached(group.uri);
    if (outcome.result !== 'failed') {
      const settled = await settleRefs(deps, { project: unit.project, uri: group.uri, remote: remote.name }, outcome.refs, rejections, config.refRejectionLimit);
      failedRefs += settled.parked;
      rejections = settled.rejections;
      if (settled.untracked.length > 0) {
        retryable = { message: `the destination refused ${settled.untracked.length} refs: ${settled.untracked[0]!.reason}`, kind: 'transient' };
        toRetry.push(...names);
        hostDown = false;
      } else if (settled.retry.length > 0) {
        // Only these refs are in trouble: the tasks are pushed again after rescheduleDelay, without a backoff that would hold up the URI's other updates.
        refusedForNow += settled.retry.length;
        claims.movedOut(await store.reset(lock.claimName, names));
        log.warn({ uri: redactUrl(group.uri), project: unit.project, refs: settled.retry.map((item) => item.ref), reason: settled.retry[0]!.reason, limit: config.refRejectionLimit }, 'refs refused by the destination; pushing them again');
      } else if (!claims.pushedAll(names)) {
        await store.finish(lock.claimName, names);
      }
      continue;
    }
    if (failure === undefined) throw new Error('a failed push outcome carries its failure');
    if (!FAILURE_POLICY[failure.kind].countsAgainstRetries) {
      aborted = true;
      claims.movedOut(await store.reset(lock.claimName, names));
    } else if (!failure.retryable) {
      failedTasks += names.length;
      claims.movedOut(await store.fail(lock.claimName, names, { reason: failure.message, attempts: (state?.attempts ?? 0) + 1 }));
      log.error({ uri: redactUrl(group.uri), remote: remote.name, project: unit.project, tasks: names.length, reason: failure.message }, 'task failed');
      deps.events?.({ type: 'task-failed', remote: remote.name, uri: redactUrl(group.uri), uriKey: group.uriKey, tasks: names.length, reason: failure.message });
    } else {
      retryable = { message: failure.message, kind: failure.kind };
      toRetry.push(...names);
      let absorbed = false;
      if (host === 'overloaded') {
        overloaded = true;
        absorbed = deps.hosts?.overloaded(group.uri, failure.retryAfterMs) === true;
      } else if (host === 'connection-failed') {
        absorbed = deps.hosts?.connectionFailed(group.uri, group.uriKey, remote.replicationRetryMs, failure.message) === true;
      }
      if (!absorbed) hostDown = false;
    }
  }

  if (retryable !== undefined && hostDown) {
    await fence(lock);
    claims.movedOut(await store.reset(lock.claimName, toRetry));
    const why = overloaded ? 'host overloaded: fewer pushes to it at once, spaced out' : 'host unreachable, its circuit is open';
    log.warn({ uri: redactUrl(group.uri), reason: retryable.message }, `${why}; the tasks wait without spending a retry`);
    return { kind: 'host-down', ...alsoFailed(failedTasks) };
  }

  if (retryable !== undefined) {
    const attempts = (state?.attempts ?? 0) + 1;
    const remote = group.remote;
    const limit = retryLimit(retryable.kind, remote.replicationMaxRetries);
    await fence(lock);
    if (limit > 0 && attempts > limit) {
      claims.movedOut(await store.fail(lock.claimName, toRetry, { reason: `${retryable.message} (gave up after ${attempts} attempts)`, attempts }));
      await store.deleteUriState(group.uriKey);
      log.error({ uri: redactUrl(group.uri), remote: remote.name, attempts, reason: retryable.message }, 'task failed: retries exhausted');
      deps.events?.({ type: 'task-failed', remote: remote.name, uri: redactUrl(group.uri), uriKey: group.uriKey, tasks: toRetry.length, reason: `${retryable.message} (gave up after ${attempts} attempts)` });
      return { kind: 'failed', claimed: toRetry.length + failedTasks };
    }
    const now = clock.now();
    const notBefore = now + retryDelayMs(remote.replicationRetryMs, attempts, deps.random);
    const next: UriState = { uri: group.uri, attempts, lastError: retryable.message, notBefore, updatedAt: now, nodeId: config.nodeId, ...withRejections(rejections) };
    await store.writeUriState(group.uriKey, next);
    claims.movedOut(await store.reset(lock.claimName, toRetry));
    log.warn({ uri: redactUrl(group.uri), attempts, retryInMs: notBefore - now, reason: retryable.message }, 'retry scheduled');
    deps.events?.({ type: 'retry-scheduled', remote: remote.name, uri: redactUrl(group.uri), uriKey: group.uriKey, attempts, retryInMs: notBefore - now, reason: retryable.message });
    return { kind: 'retry', notBefore, attempts, ...alsoFailed(failedTasks) };
  }
  if (aborted) return { kind: 'aborted', ...alsoFailed(failedTasks) };
  if (!isEmpty(rejections)) {
    // No backoff: the runs of refused refs are all that is kept.
    await fence(lock);
    const now = clock.now();
    await store.writeUriState(group.uriKey, { uri: group.uri, attempts: 0, lastError: '', notBefore: 0, updatedAt: now, nodeId: config.nodeId, refRejections: rejections } satisfies UriState);
  } else if (state !== undefined) {
    await fence(lock);
    await store.deleteUriState(group.uriKey);
  }
  if (failedTasks > 0 && failedTasks === claimed.length) return { kind: 'failed', claimed: failedTasks };
  return { kind: 'pushed', claimed: claimed.length, failedRefs, ...alsoFailed(failedTasks), ...(refusedForNow > 0 ? { refusedForNow } : {}) };
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
