import type { Lease, SchedulerDeps } from './ports.js';

/**
 * What became of the tasks claimed under one lease. Pushed tasks are not deleted one by one: when
 * every claimed task was pushed or moved out (back to waiting/, to failed/), the lease retires its
 * claim folder whole — one rename that also releases the lock (Lease.retire) — and the files are
 * deleted later, off the push path. Otherwise (an error midway, a lease without retire) the
 * pushed ones are deleted here and the lock released as usual; tasks still claimed then go back
 * to waiting/ through the lock's recovery.
 */
export class ClaimLedger {
  private readonly open = new Set<string>();
  private readonly pushed: string[] = [];

  constructor(private readonly lock: Lease) {}

  claimed(names: Iterable<string>): void {
    for (const name of names) this.open.add(name);
  }

  movedOut(names: readonly string[]): void {
    for (const name of names) this.open.delete(name);
  }

  /** Pushed: true when the lease will retire them; false when the caller must finish them now. */
  pushedAll(names: readonly string[]): boolean {
    if (this.lock.retire === undefined) return false;
    for (const name of names) {
      this.open.delete(name);
      this.pushed.push(name);
    }
    return true;
  }

  /** Finish the pushed tasks and release the lock; `onRetireError` hears why the one-step way failed. */
  async close(store: SchedulerDeps['store'], onRetireError: (error: unknown) => void): Promise<void> {
    if (this.pushed.length > 0 && this.open.size === 0 && this.lock.retire !== undefined) {
      try {
        await this.lock.retire(new Set(this.pushed));
        return;
      } catch (error) {
        // The store refused the move (its done/ folder missing, a permission): the slow path below.
        onRetireError(error);
      }
    }
    try {
      if (this.pushed.length > 0 && (await this.lock.stillMine())) await store.finish(this.lock.claimName, this.pushed);
    } finally {
      await this.lock.release();
    }
  }
}
