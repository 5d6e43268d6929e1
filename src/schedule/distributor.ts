import { redactUrl } from '../observe/redact.js';
import type { SchedulerDeps } from './ports.js';
import { movedToFailed, runPushJob, type JobResult } from './push-job.js';
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
 */
export class Distributor {
  private readonly schedules = new Map<string, UriSchedule>();
  private readonly inFlight = new Map<string, InFlight>();
  private resolutions: ResolutionCache = new WeakMap();
  private resolutionsFor: ReplicationConfig | undefined;
  private accepting = true;
  private failedToFailedDir = 0;

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly onJobDone: (result: JobResult, group: UriGroup) => void = () => undefined,
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
      let schedule = this.schedules.get(group.uriKey);
      if (schedule === undefined) {
        schedule = { jitterMs: deps.random.next() * config.randomDelayMs, notBefore: 0, recheckAt: 0 };
        this.schedules.set(group.uriKey, schedule);
      }
      // mtimes are the store's clock; convert to ours before comparing.
      const batchDue = group.oldestMtimeMs - offset + Math.max(group.remote.replicationDelayMs, config.distributionIntervalMs) + schedule.jitterMs;
      const at = Math.max(batchDue, schedule.notBefore, schedule.recheckAt);
      if (at <= now) due.push({ group, at });
      else nextDueAt = nextDueAt === undefined ? at : Math.min(nextDueAt, at);
    }
    due.sort((a, b) => a.at - b.at);

    let started = 0;
    for (const { group } of due) {
      if (!this.accepting) break;
      if (this.runningFor(group.remote.name) >= group.remote.threads) continue;
      this.start(group);
      started++;
    }
    return { pendingUris: groups.size + [...this.inFlight.keys()].filter((key) => !groups.has(key)).length, started, nextDueAt };
  }

  private runningFor(remoteName: string): number {
    let count = 0;
    for (const job of this.inFlight.values()) if (job.group.remote.name === remoteName) count++;
    return count;
  }

  private start(group: UriGroup): void {
    const controller = new AbortController();
    const startedAt = this.deps.clock.now();
    const done = runPushJob(this.deps, group, controller.signal).then(
      (result) => this.finished(group, result),
      (error: unknown) => {
        this.deps.log.error({ uri: redactUrl(group.uri), err: error instanceof Error ? error.message : String(error) }, 'push job failed');
        this.finished(group, { kind: 'locked' });
      },
    );
    this.inFlight.set(group.uriKey, { group, controller, startedAt, done });
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
    this.onJobDone(result, group);
  }
}
