import type { Log } from '../runtime/log.js';
import type { Clock } from '../runtime/clock.js';
import type { TaskStore } from '../store/task-store.js';

/**
 * Finished claim folders (done/) are deleted when the node has no push in flight, so their
 * unlinks do not compete with pushes for the CPU and the store; a node that is never idle sweeps
 * once this many have piled up.
 */
export const DONE_SWEEP_BACKLOG = 64;
/** A busy node's sweep takes this many folders at a time, so claims never queue long behind it. */
const DONE_SWEEP_BUSY_FOLDERS = 16;
const DONE_SWEEP_RETRY_MS = 60_000;
/** Nothing due within this long counts as idle: a sweep then does not delay a push. */
export const DONE_SWEEP_QUIET_MS = 500;

/** Deletes the claim folders this node retired into done/, off the push path (DESIGN.md, store layout). */
export class DoneSweeper {
  /** Folders retired since the last sweep; 1 at start for what a crash left. */
  private pending = 1;
  private sweeping: Promise<void> | undefined;
  private failedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: Pick<TaskStore, 'sweepDone'>,
    private readonly clock: Clock,
    private readonly log: Log,
  ) {}

  retired(): void {
    this.pending++;
  }

  /** In the background: the loop's passes go on meanwhile. At most one sweep at a time. */
  maybeSweep(idle: boolean): void {
    if (this.sweeping !== undefined || this.pending === 0) return;
    // After a failure (permissions, an outage), retry a minute later rather than on every pass.
    if (this.clock.monotonic() - this.failedAt < DONE_SWEEP_RETRY_MS) return;
    if (!idle && this.pending < DONE_SWEEP_BACKLOG) return;
    const pending = this.pending;
    this.pending = 0;
    // Bounded even when idle: a burst may arrive meanwhile, and its claims share the store.
    const limit = idle ? DONE_SWEEP_BACKLOG : DONE_SWEEP_BUSY_FOLDERS;
    this.sweeping = this.store
      .sweepDone(limit)
      .then(
        (swept) => {
          // Counted as handled even when a folder could not go yet (a `.nfs*` file in it): the
          // next idle sweep tries again, and a stuck folder cannot keep the node sweeping.
          this.pending += Math.max(0, pending - limit);
          if (swept >= limit && this.pending === 0) this.pending = 1; // more may be left
        },
        (error: unknown) => {
          this.pending += pending;
          this.failedAt = this.clock.monotonic();
          this.warnSweepFailed(error);
        },
      )
      .finally(() => {
        this.sweeping = undefined;
      });
  }

  private warnSweepFailed(error: unknown): void {
    this.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'could not delete finished claim folders in done/');
  }

  /** At shutdown: what the last pushes retired goes now, so a stopped node leaves nothing behind. */
  async finish(): Promise<void> {
    await this.sweeping;
    if (this.pending > 0) await this.store.sweepDone().catch((error: unknown) => this.warnSweepFailed(error));
  }
}
