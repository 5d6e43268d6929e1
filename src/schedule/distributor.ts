import type { NodeSchedule } from '../observe/http-server.js';
import { redactUrl } from '../observe/redact.js';
import type { SchedulerDeps } from './ports.js';
import { movedToFailed, runPushJob, type JobResult } from './push-job.js';
import { PushSlots, type PushSlot } from './push-slots.js';
import type { ReplicationConfig } from '../config/types.js';
import { groupByUri, type ResolutionCache, type UriGroup } from './uri-groups.js';

/** What this node remembers about a URI between passes (the store remains the truth). */
interface UriSchedule {
  /** uniform(0, randomDelay), drawn once per batch so the due time does not move every pass. */
  jitterMs: number;
  /** Persisted backoff seen in uri-state; not pushed before it. */
  notBefore: number;
  /** Not looked at again before this: lock refused, or updates that arrived during a push. */
  recheckAt: number;
}

interface InFlight {
  readonly group: UriGroup;
  readonly controller: AbortController;
  readonly startedAt: number;
  readonly done: Promise<void>;
  /** Until its git pushes are over; then the job only finishes, resets or parks task files. */
  readonly phase: { active: boolean };
}

export interface TickReport {
  /** URIs with work this node may take (waiting, or being pushed by this node). */
  readonly pendingUris: number;
  readonly started: number;
  /** Earliest local time at which a waiting URI becomes due; undefined when none waits. */
  readonly nextDueAt: number | undefined;
}

/**
 * The distributor: every pass lists `waiting/`, groups tasks by URI, and starts a push for each
 * URI whose due time has come — oldest task mtime + max(replicationDelay, distributionInterval)
 * + jitter, never before the URI's persisted backoff — within each remote's `threads`.
 *
 * `threads` bounds the git pushes a remote runs at once, not the store work around them. A job
 * whose pushes are over gives its slot away while it finishes its task files. And a URI due for
 * longer than one pass of every node (distributionInterval + randomDelay) — a backlog no other
 * node took — is locked and claimed ahead, while all slots are busy, so its push starts the moment
 * one frees. A URI only just due is never taken ahead: an idle peer may push it at once; nor is
 * the tail of a backlog (no more than 2 × threads due URIs left), which peers share out. Per
 * remote at most 2 × threads jobs are active and 3 × threads exist, so a slow store cannot pile
 * up held locks.
 */
export class Distributor {
  private readonly schedules = new Map<string, UriSchedule>();
  private readonly inFlight = new Map<string, InFlight>();
  private resolutions: ResolutionCache = new WeakMap();
  private resolutionsFor: ReplicationConfig | undefined;
  private readonly pushSlots = new PushSlots();
  /** The last pass's view of each waiting URI, for `/status` and the page. */
  private lastPass: Array<{ group: UriGroup; at: number }> = [];
  private accepting = true;
  private failedToFailedDir = 0;

  /**
   * `onSlotFree` runs when a job ends and when a job's pushes are over (its slot is free for the
   * next URI while it finishes): the daemon runs a pass then.
   */
  constructor(
    private readonly deps: SchedulerDeps,
    private readonly onSlotFree: () => void = () => undefined,
  ) {}

  get runningCount(): number {
    return this.inFlight.size;
  }

  /** How many task files this node put in failed/ since it started (whole tasks and parked rejected refs). */
  get failedCount(): number {
    return this.failedToFailedDir;
  }

  runningUris(): string[] {
    return [...this.inFlight.values()].map((job) => redactUrl(job.group.uri));
  }

  /** A URI whose tasks were just recovered from a dead holder: push it on the next pass. */
  expedite(uriKey: string): void {
    const schedule = this.schedules.get(uriKey);
    const now = this.deps.clock.now();
    // The recovered tasks keep their old mtimes, so their batch is already due; clear any
    // lock-refused wait and jitter so this node (the one that took over) goes first.
    if (schedule === undefined) this.schedules.set(uriKey, { jitterMs: 0, notBefore: 0, recheckAt: 0 });
    else {
      schedule.jitterMs = 0;
      schedule.recheckAt = Math.min(schedule.recheckAt, now);
    }
  }

  /** Stop starting pushes; running ones go on (graceful shutdown, first phase). */
  stopAccepting(): void {
    this.accepting = false;
  }

  abortAll(): void {
    for (const job of this.inFlight.values()) job.controller.abort();
  }

  async whenIdle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()].map((job) => job.done));
  }

  async tick(): Promise<TickReport> {
    const { deps } = this;
    const config = deps.config();
    const waiting = await deps.store.listWaiting();
    if (this.resolutionsFor !== config) {
      this.resolutions = new WeakMap();
      this.resolutionsFor = config;
    }
    const groups = groupByUri(config, waiting, this.resolutions);
    for (const key of this.schedules.keys()) if (!groups.has(key) && !this.inFlight.has(key)) this.schedules.delete(key);

    const offset = deps.storeClockOffsetMs?.() ?? 0;
    const now = deps.clock.now();
    const due: Array<{ group: UriGroup; at: number }> = [];
    let nextDueAt: number | undefined;
    for (const group of groups.values()) {
      if (this.inFlight.has(group.uriKey)) continue;
      if (!this.schedules.has(group.uriKey)) {
        this.schedules.set(group.uriKey, { jitterMs: deps.random.next() * config.randomDelayMs, notBefore: 0, recheckAt: 0 });
      }
      const at = this.dueAt(group, config, offset);
      if (at <= now) due.push({ group, at });
      else nextDueAt = nextDueAt === undefined ? at : Math.min(nextDueAt, at);
    }
    due.sort((a, b) => a.at - b.at);
    this.lastPass = [...groups.values()].map((group) => ({ group, at: this.dueAt(group, config, offset) }));

    let started = 0;
    const takeAheadAfterMs = config.distributionIntervalMs + config.randomDelayMs;
    const dueLeft = new Map<string, number>();
    for (const { group } of due) dueLeft.set(group.remote.name, (dueLeft.get(group.remote.name) ?? 0) + 1);
    for (const { group, at } of due) {
      if (!this.accepting) break;
      const left = dueLeft.get(group.remote.name) ?? 0;
      // The tail of a backlog is left to idle peers: taken ahead, it would wait here for a slot.
      const backlogged = now - at >= takeAheadAfterMs && left > 2 * group.remote.threads;
      if (!this.hasRoom(group.remote, backlogged)) continue;
      dueLeft.set(group.remote.name, left - 1);
      this.start(group);
      started++;
    }
    return { pendingUris: groups.size + [...this.inFlight.keys()].filter((key) => !groups.has(key)).length, started, nextDueAt };
  }

  /** mtimes are the store's clock; `offset` converts them to ours. */
  private dueAt(group: UriGroup, config: ReplicationConfig, offset: number): number {
    const schedule = this.schedules.get(group.uriKey);
    const batchDue = group.oldestMtimeMs - offset + Math.max(group.remote.replicationDelayMs, config.distributionIntervalMs) + (schedule?.jitterMs ?? 0);
    return Math.max(batchDue, schedule?.notBefore ?? 0, schedule?.recheckAt ?? 0);
  }

  /** What this node plans, as of its last pass: next push per URI, backoff, running pushes. */
  schedule(nodeId: string): NodeSchedule {
    const now = this.deps.clock.now();
    const uris: Array<NodeSchedule['uris'][number]> = [];
    const listed = new Set<string>();
    for (const { group, at } of this.lastPass) {
      listed.add(group.uriKey);
      const job = this.inFlight.get(group.uriKey);
      const notBefore = this.schedules.get(group.uriKey)?.notBefore ?? 0;
      uris.push({
        uri: redactUrl(group.uri),
        remote: group.remote.name,
        waiting: group.tasks.length,
        nextDueInMs: job === undefined ? at - now : null,
        backoffUntilMs: notBefore > now ? notBefore - now : null,
        running: job !== undefined,
        runningForMs: job === undefined ? null : now - job.startedAt,
      });
    }
    for (const job of this.inFlight.values()) {
      if (listed.has(job.group.uriKey)) continue;
      uris.push({ uri: redactUrl(job.group.uri), remote: job.group.remote.name, waiting: 0, nextDueInMs: null, backoffUntilMs: null, running: true, runningForMs: now - job.startedAt });
    }
    uris.sort((a, b) => Number(b.running) - Number(a.running) || (a.nextDueInMs ?? 0) - (b.nextDueInMs ?? 0));
    return { nodeId, uris };
  }

  private hasRoom(remote: UriGroup['remote'], backlogged: boolean): boolean {
    let active = 0;
    let jobs = 0;
    for (const job of this.inFlight.values()) {
      if (job.group.remote.name !== remote.name) continue;
      jobs++;
      if (job.phase.active) active++;
    }
    if (jobs >= 3 * remote.threads) return false;
    return active < remote.threads || (backlogged && active < 2 * remote.threads);
  }

  private threadsOf(group: UriGroup): number {
    return this.deps.config().remotes.find((remote) => remote.name === group.remote.name)?.threads ?? group.remote.threads;
  }

  private start(group: UriGroup): void {
    const controller = new AbortController();
    const startedAt = this.deps.clock.now();
    const phase = { active: true };
    const remoteSlot = this.pushSlots.slot(group.remote.name, () => this.threadsOf(group));
    const slot: PushSlot = {
      acquire: (signal) => remoteSlot.acquire(signal),
      release: () => {
        remoteSlot.release();
        if (!phase.active) return;
        phase.active = false;
        this.onSlotFree();
      },
    };
    const done = runPushJob(this.deps, group, controller.signal, slot).then(
      (result) => this.finished(group, result),
      (error: unknown) => {
        this.deps.log.error({ uri: redactUrl(group.uri), err: error instanceof Error ? error.message : String(error) }, 'push job failed');
        this.finished(group, { kind: 'locked' });
      },
    );
    this.inFlight.set(group.uriKey, { group, controller, startedAt, done, phase });
  }

  private finished(group: UriGroup, result: JobResult): void {
    this.inFlight.delete(group.uriKey);
    const config = this.deps.config();
    const now = this.deps.clock.now();
    const schedule = this.schedules.get(group.uriKey) ?? { jitterMs: 0, notBefore: 0, recheckAt: 0 };
    switch (result.kind) {
      case 'backoff':
      case 'retry':
        schedule.notBefore = result.notBefore;
        break;
      case 'locked':
      case 'lock-lost':
        schedule.recheckAt = now + config.distributionIntervalMs;
        break;
      default:
        // Updates that arrived while this URI was pushed go in the next push, after rescheduleDelay.
        schedule.recheckAt = now + group.remote.rescheduleDelayMs;
        schedule.notBefore = 0;
        schedule.jitterMs = this.deps.random.next() * config.randomDelayMs;
    }
    // Parked rejected refs count too: anything that ended in failed/ makes `--drain` exit 1.
    this.failedToFailedDir += movedToFailed(result);
    this.schedules.set(group.uriKey, schedule);
    this.onSlotFree();
  }
}
