import type { ReplicationConfig } from '../config/types.js';
import type { SchedulerDeps } from './ports.js';
import { groupWaiting, withoutTasks, type Grouping, type ResolutionCache } from './uri-groups.js';

/** The distributor's grouping of waiting/, kept between passes so a pass may reuse its listing. */
export class WaitingGrouping {
  private resolutions: ResolutionCache = new WeakMap();
  private resolutionsFor: ReplicationConfig | undefined;
  /** The last grouping: of which listing, and how many of the names forgotten since it it lacks. */
  private grouped: { grouping: Grouping; listing: number; applied: number } | undefined;

  constructor(private readonly store: SchedulerDeps['store']) {}

  /**
   * The waiting tasks by URI. A pass that reuses the listing starts from the last grouping and
   * drops what this node claimed since (see WaitingListing.changes) — regrouping a backlog of
   * 100,000 tasks over 10,000 URIs on every freed slot cost 16 ms a pass, dropping one URI's claims
   * 1 ms; the result is the same grouping. A new config starts afresh: its remotes resolve URIs anew.
   */
  async grouping(config: ReplicationConfig, reuse: boolean): Promise<Grouping> {
    const { store } = this;
    if (this.resolutionsFor !== config) {
      this.resolutions = new WeakMap();
      this.resolutionsFor = config;
      this.grouped = undefined;
    }
    const before = store.waitingChanges?.();
    const last = this.grouped;
    if (reuse && before !== undefined && last !== undefined && last.listing === before.listing) {
      const grouping = withoutTasks(config, last.grouping, before.forgotten.slice(last.applied), this.resolutions);
      this.grouped = { grouping, listing: before.listing, applied: before.forgotten.length };
      return grouping;
    }
    const forgottenBefore = before?.forgotten.length ?? 0;
    const waiting = await store.listWaiting({ cached: reuse });
    const grouping = groupWaiting(config, waiting, this.resolutions);
    const after = store.waitingChanges?.();
    // What the grouping already lacks may be dropped again (nothing happens): it starts from the
    // names forgotten before the cached listing was read, or from none after a fresh one. Another
    // listing under way or started meanwhile (the status page) moves the counter and leaves no
    // base: the next pass groups afresh. A fresh listing of new files moves it twice.
    if (before === undefined || after === undefined) this.grouped = undefined;
    else if (reuse) this.grouped = after.listing === before.listing ? { grouping, listing: before.listing, applied: forgottenBefore } : undefined;
    else this.grouped = after.listing === before.listing + 1 || after.listing === before.listing + 2 ? { grouping, listing: after.listing, applied: 0 } : undefined;
    return grouping;
  }
}
