import { join } from 'node:path';
import type { RemoteConfig } from '../config/types.js';
import { redactUrl } from '../runtime/redact.js';
import type { PushFailure, PushOutcome } from '../push/git-pusher.js';
import { FAILURE_POLICY } from '../push/failure-policy.js';
import type { WaitingTask } from '../store/store-types.js';
import { waitingFolderName } from '../store/store-paths.js';
import { DEFAULT_BACKOFF_CAP_MS } from './backoff.js';
import type { SchedulerDeps } from './ports.js';
import { alsoFailed, applyDecision, fence, LockLost, type Job, type PushedUnit } from './apply-decision.js';
import type { JobResult } from './job-result.js';
import type { PushSlot } from './push-slots.js';
import type { UriGroup } from './uri-groups.js';
import { ClaimLedger } from './claim-ledger.js';
import { JobHeartbeat } from './job-heartbeat.js';
import { decideJobOutcome } from './job-outcome.js';
import { logPush } from './push-log.js';
import { settleRefs } from './settle-refs.js';
import { parkRefused, sortClaimed } from './park-untrusted.js';
import { capNotBefore, parseUriState, type UriState } from './uri-state.js';

/** For callers that do not limit pushes (tests of a single job): the slot is always free. */
export const unlimitedSlot: PushSlot = { acquire: async (signal) => !signal.aborted, release: () => undefined };

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
  // The folder this node learned is moved in as the claim folder: one rename claims its tasks.
  const lock = await deps.locks.acquire(group.uriKey, group.uri, waitingFolderName(group.uriKey, group.lane));
  if (lock === undefined) return { kind: 'locked' };
  const heartbeat = new JobHeartbeat(deps, lock, group.uri, signal, deps.config().lockStaleMs, acquiredFrom);
  const job: Job = { deps, group, lock, claims: new ClaimLedger(lock), heartbeat, claimed: new Map(), pushStarted: [] };
  heartbeat.start();
  try {
    const result = await claimAndPush(job, slot);
    // Stopped by its own heartbeat: the tasks went back to waiting/ (or stay in the lease folder
    // for a takeover), and the node learns its store is failing.
    const stall = heartbeat.stall;
    if (stall !== undefined && result.kind === 'aborted') return { kind: 'stalled', error: stall.error, ...alsoFailed(result.failedTasks ?? 0) };
    return result;
  } catch (error) {
    if (!(error instanceof LockLost)) throw error;
    await queueAgainAfterLostLock(job);
    return { kind: 'lock-lost' };
  } finally {
    slot.release();
    await heartbeat.stop();
    const uri = redactUrl(group.uri);
    await job.claims
      .close(deps.store, (error) => deps.log.warn({ uri, err: String(error) }, 'could not move the finished claim folder aside; deleting its files one by one'))
      // The lock is released even then, or left to recovery when the release failed too: pushed
      // tasks still in its folder go back to waiting/ and are pushed again, never lost.
      .catch((error: unknown) => deps.log.warn({ uri, err: String(error) }, 'could not finish the claim folder; its lock is released or left to recovery'));
  }
}

/**
 * A push that ends without the lock may have landed refs read before a peer took the URI over and
 * pushed newer ones: a node paused between reading its local refs and starting git, past
 * lockStale, pushes what it read once it runs again. Its tasks are queued again (never replacing a
 * waiting file), so a push that starts after this one — and reads the refs anew — sets the
 * destination right. waiting/ takes writes from anyone, so nothing is fenced here.
 */
async function queueAgainAfterLostLock({ deps, group, pushStarted }: Job): Promise<void> {
  if (pushStarted.length === 0) return;
  const uri = redactUrl(group.uri);
  const tasks = pushStarted.map((item) => item.task);
  try {
    await deps.store.createMany(tasks);
    deps.log.warn({ uri, tasks: tasks.length }, 'lost the URI lock after starting a push; its tasks are queued again');
    return;
  } catch (error) {
    // A lock is mostly lost to a store that failed the holder's writes: it may refuse this one too.
    if (deps.spool === undefined) {
      deps.log.error({ uri, tasks: tasks.length, err: String(error) }, 'lost the URI lock after starting a push, and could not queue its tasks again');
      return;
    }
    deps.log.warn(
      { uri, tasks: tasks.length, err: String(error) },
      'lost the URI lock after starting a push; the store refused its tasks, so they are spooled',
    );
  }
  try {
    await deps.spool(tasks);
  } catch (error) {
    deps.log.error({ uri, tasks: tasks.length, err: String(error) }, 'lost the URI lock after starting a push, and could not queue or spool its tasks again');
  }
}

/** Under the lock: check the backoff, claim the URI's waiting tasks, wait for a slot, push. */
async function claimAndPush(job: Job, slot: PushSlot): Promise<JobResult> {
  const { deps, group, lock, claims } = job;
  const { store, clock, log } = deps;
  // Re-read under the lock: a peer may have failed this URI just before we took it.
  const state = await readRetryState(job);
  if (state !== undefined && state.notBefore > clock.now()) {
    // Its tasks were moved in with the claim folder: back where they came from, unread.
    if (lock.leasedFolder !== undefined) await store.giveBack(lock.claimName, lock.leasedFolder, new Set());
    return { kind: 'backoff', notBefore: state.notBefore };
  }

  const all = await store.claim(lock.claimName, group.uriKey, lock.leasedFolder);
  claims.claimed(all.map(({ name }) => name));
  const sorted = sortClaimed(deps.config(), group.uriKey, all, deps.storeClockOffsetMs?.() ?? 0, clock.now());
  const parked = await parkRefused(deps, lock, group.uriKey, group.uri, sorted.park);
  for (const tasks of sorted.park.values()) claims.movedOut(tasks.map(({ name }) => name));
  if (sorted.putBack.length > 0) {
    await fence(lock);
    claims.movedOut(await store.reset(lock.claimName, sorted.putBack));
  }
  const claimed = sorted.push;
  for (const item of claimed) job.claimed.set(item.name, item);
  if (claimed.length === 0) return { kind: 'nothing-claimed', ...alsoFailed(parked) };
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
    claims.movedOut(await store.reset(lock.claimName, claimed));
    return { kind: 'aborted', ...alsoFailed(parked) };
  }
  if (deps.hosts?.mayPush(group.uri, group.uriKey) === false) {
    // Claimed ahead, and the host's circuit opened meanwhile: back to waiting, retries unspent.
    slot.release();
    await fence(lock);
    claims.movedOut(await store.reset(lock.claimName, claimed));
    return { kind: 'host-down', ...alsoFailed(parked) };
  }
  return pushClaimed(job, state, parked, () => slot.release());
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

/** Pushes each unit of the claim and applies the decision; `parked`: refused tasks already moved to failed/. */
async function pushClaimed(job: Job, state: UriState | undefined, parked: number, onPushesDone: () => void): Promise<JobResult> {
  const { deps, group, lock } = job;
  const config = deps.config();
  const results: PushedUnit[] = [];
  let rejections = state?.refRejections;
  let failedRefs = 0;
  const units = pushUnits([...job.claimed.values()]);
  for (const [index, unit] of units.entries()) {
    const remote: RemoteConfig = config.remotes.find((candidate) => candidate.name === unit.remote) ?? group.remote;
    const names = unit.tasks.map((item) => item.name);
    const refs = [...new Set(unit.tasks.flatMap((item) => item.task.refs))];
    await fence(lock);
    job.pushStarted.push(...unit.tasks);
    deps.events?.({ type: 'push-started', remote: remote.name, uri: redactUrl(group.uri), uriKey: group.uriKey, project: unit.project, refs });
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
    logPush(deps, group, `${lock.leaseId}.${index + 1}`, unit.project, remote.name, refs, outcome, oldestMtime(unit.tasks));
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
  return applyDecision(job, decision, { state, rejections, failedRefs, refusedForNow, parked });
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

function oldestMtime(tasks: readonly WaitingTask[]): number {
  return tasks.reduce((oldest, item) => Math.min(oldest, item.mtimeMs), Number.POSITIVE_INFINITY);
}
