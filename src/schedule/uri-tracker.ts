import type { ReplicationConfig } from '../config/types.js';
import type { WaitingListing } from '../store/task-store.js';
import { DueIndex, type Handoff } from './due-index.js';
import { dueAt, newSchedule, type Due, type UriSchedule } from './due-planner.js';
import type { JobTable } from './job-table.js';
import type { Membership } from '../cluster/live-nodes.js';
import type { SchedulerDeps } from './ports.js';
import { handoffMs, preferredElsewhere, preferredTurn } from './preferred-node.js';
import type { PreferredTurn } from '../store/preferred-turn.js';
import type { UntrustedFolder, UriGroup } from './uri-groups.js';
import { WaitingGroups } from './waiting-groups.js';

/**
 * This node's memory of the waiting URIs between passes: each URI's group (regrouped only where
 * the listing changed), its schedule (jitter, backoff, recheck) and its place in the due index.
 * A URI is indexed anew whenever one of those changes or its job starts or ends, so a pass costs
 * what changed (DESIGN.md "Scheduling"). The store stays the truth: schedules of URIs that left
 * the listing are dropped, and remembered backoffs end when their uri-state file is gone.
 */
export class UriTracker {
  readonly index = new DueIndex();
  private readonly byUri = new Map<string, UriSchedule>();
  /** The waiting work by URI, regrouped where the listing changed. */
  private readonly waiting = new WaitingGroups();
  /** The config and live nodes the index was built for: new ones index every URI anew. */
  private indexedConfig: ReplicationConfig | undefined;
  private indexedMembership: Membership | undefined;
  /** URIs whose group went while their schedule is kept: forgotten on the next listing that still lacks them. */
  private readonly gone = new Set<string>();
  /** URIs this node recovered from a dead holder, taken without a handoff until their next job (see expedite). */
  private readonly expedited = new Set<string>();
  /** URIs whose schedule holds a persisted backoff (see forgetClearedBackoffs). */
  private readonly backedOff = new Set<string>();

  constructor(
    private readonly deps: Pick<SchedulerDeps, 'config' | 'random' | 'clock' | 'store' | 'membership'>,
    private readonly jobs: JobTable,
  ) {}

  get groups(): ReadonlyMap<string, UriGroup> {
    return this.waiting.groups;
  }

  get schedules(): ReadonlyMap<string, UriSchedule> {
    return this.byUri;
  }

  untrusted(): UntrustedFolder[] {
    return this.waiting.untrusted();
  }

  /**
   * Takes in a listing. `fresh`: it read the store; a listing reused from memory lacks what this
   * node put back in waiting/ since (a retry keeps its backoff here), so only a fresh one tells
   * which URIs have nothing left.
   */
  async update(config: ReplicationConfig, listing: WaitingListing, fresh: boolean): Promise<void> {
    const changed = this.waiting.update(config, listing);
    const membership = this.deps.membership?.();
    if (config !== this.indexedConfig || membership !== this.indexedMembership) {
      this.indexedConfig = config;
      this.indexedMembership = membership;
      this.index.clear();
      // Every URI, and those that went since (their schedules become candidates to drop).
      for (const key of new Set([...this.waiting.groups.keys(), ...changed])) this.reindex(key);
    } else {
      for (const key of changed) this.reindex(key);
    }
    if (!fresh) return;
    for (const key of this.gone) if (!this.waiting.groups.has(key) && !this.jobs.has(key)) this.dropSchedule(key);
    this.gone.clear();
    await this.forgetClearedBackoffs(this.deps.clock.now());
  }

  /** Every waiting URI with its due time, those being pushed with more work waiting included (the status view). */
  waitingView(offsetMs: number): Due[] {
    const config = this.deps.config();
    const waiting = [...this.index.waiting(offsetMs)];
    for (const [key, job] of this.jobs) {
      const group = this.waiting.groups.get(key);
      if (group !== undefined) waiting.push({ group, at: dueAt(group, this.byUri.get(key), config, offsetMs), host: job.host });
    }
    return waiting;
  }

  /**
   * How long a listing made now leaves a new folder unread for another node's turn
   * (preferred-node.ts preferredTurn), from what this node knows of its URI: due already by its
   * learned folders, or recovered here.
   */
  preferredTurn(now: number, offsetMs: number): PreferredTurn | undefined {
    const config = this.deps.config();
    return preferredTurn(this.deps.membership?.(), config, {
      isDue: (key) => {
        const group = this.waiting.groups.get(key);
        return group !== undefined && dueAt(group, this.byUri.get(key), config, offsetMs) <= now;
      },
      isExpedited: (key) => this.expedited.has(key),
    });
  }

  /** A URI's group or schedule changed, or its job started or ended: it is indexed anew. */
  reindex(key: string): void {
    const group = this.waiting.groups.get(key);
    if (group === undefined) {
      this.index.delete(key);
      if (this.byUri.has(key)) this.gone.add(key);
      return;
    }
    let schedule = this.byUri.get(key);
    if (schedule === undefined) this.byUri.set(key, (schedule = newSchedule(group.uri, this.deps.config(), this.deps.random)));
    if (this.jobs.has(key)) {
      this.index.delete(key);
      this.expedited.delete(key);
    } else {
      this.index.set(group, schedule, this.deps.config(), this.expedited.has(key) ? undefined : this.handoff(group));
    }
  }

  /**
   * A URI another live node is preferred for waits here one more pass of every node
   * (distributionInterval + randomDelay: each node draws its own jitter) after it came due, and
   * as long after this node first saw its newest folder, so its preferred node claims it first
   * (preferred-node.ts). The second wait is for a URI long overdue: a backlog URI that gets a live
   * update is due at once for every node that learns the new folder, and they would all reach for
   * it in the same pass. A folder this node left unread for the preferred node's turn counts
   * from when it was first listed: that turn was the wait.
   */
  private handoff(group: UriGroup): Handoff | undefined {
    if (!preferredElsewhere(group.uriKey, this.indexedMembership)) return undefined;
    return { ms: handoffMs(this.deps.config()), seenAt: Math.min(group.seenAt, this.deps.clock.now()) };
  }

  /**
   * A URI whose tasks this node just recovered from a dead holder: the recovered tasks keep their
   * old mtimes, so their batch is due already; any lock-refused wait, the jitter and the handoff
   * are dropped until its next job, so this node (the one that took over) goes first.
   */
  expedite(key: string): void {
    const schedule = this.byUri.get(key) ?? { jitterMs: 0, notBefore: 0, recheckAt: 0 };
    this.expedited.add(key);
    this.setSchedule(key, { ...schedule, jitterMs: 0, recheckAt: Math.min(schedule.recheckAt, this.deps.clock.now()) });
  }

  setSchedule(key: string, schedule: UriSchedule): void {
    this.byUri.set(key, schedule);
    if (schedule.notBefore > 0) this.backedOff.add(key);
    else this.backedOff.delete(key);
    this.reindex(key);
  }

  private dropSchedule(key: string): void {
    this.byUri.delete(key);
    this.expedited.delete(key);
    this.backedOff.delete(key);
  }

  /**
   * The store is the truth: a remembered backoff holds only while its URI's state file is there;
   * one deleted (`refrelay retry`, or by hand) ends it on the next pass. One `readdir` of
   * uri-state/ (names only: one file per URI in backoff) on the passes that list waiting/ afresh,
   * and only while this node remembers a backoff. A file rewritten with an earlier notBefore is
   * not seen here; the push job reads it under the lock when the remembered backoff ends.
   */
  private async forgetClearedBackoffs(now: number): Promise<void> {
    const remembered: Array<[string, UriSchedule]> = [];
    for (const key of this.backedOff) {
      const schedule = this.byUri.get(key);
      if (schedule === undefined || schedule.notBefore <= now) this.backedOff.delete(key);
      else if (!this.jobs.has(key)) remembered.push([key, schedule]);
    }
    if (remembered.length === 0) return;
    const listed = new Set(await this.deps.store.listUriStateKeys());
    for (const [key, { notBefore }] of remembered) {
      // Unless a job that ended during the readdir set a new backoff, its file written after it.
      const current = this.byUri.get(key);
      if (!listed.has(key) && current !== undefined && current.notBefore === notBefore) this.setSchedule(key, { ...current, notBefore: 0 });
    }
  }
}
