import type { ReplicationEvent } from '../schedule/events.js';

/**
 * When this node's pushes to each remote last delivered and last failed, so that /readyz can call a
 * remote that refuses every push lagging as soon as its work waits, not only once a task has
 * waited `caughtUpThreshold` (DESIGN.md "Scheduling", Endpoints). Times are this node's clock.
 */
export class RemoteDelivery {
  private readonly remotes = new Map<string, { deliveredAt?: number; failedAt?: number }>();

  /** `startedAt`: a remote this node never delivered to counts as delivered when the node started. */
  constructor(private readonly startedAt: number) {}

  record(event: ReplicationEvent, now: number): void {
    if (event.type !== 'pushed') return;
    const remote = this.remotes.get(event.remote) ?? {};
    if (event.result === 'failed') remote.failedAt = now;
    else remote.deliveredAt = now;
    this.remotes.set(event.remote, remote);
  }

  /**
   * Of the remotes with work waiting, those whose last push failed and that delivered nothing for
   * longer than `thresholdMs`: a remote idle for an hour whose next push works is not one of them.
   */
  failing(waiting: Iterable<string>, now: number, thresholdMs: number): string[] {
    const failing: string[] = [];
    for (const name of waiting) {
      const remote = this.remotes.get(name);
      if (remote?.failedAt === undefined) continue;
      const deliveredAt = remote.deliveredAt ?? this.startedAt;
      if (remote.failedAt >= deliveredAt && now - deliveredAt > thresholdMs) failing.push(name);
    }
    return failing.sort();
  }
}
