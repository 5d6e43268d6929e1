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

  /**
   * Finish the pushed tasks and release the lock; `onRetireError` hears why the one-step way
   * failed. Whatever the store throws, a lock not retired is released: this node's own observer
   * never looks at a lock it holds, so one kept by mistake would stop its URI until a restart.
   */
  async close(store: SchedulerDeps['store'], onRetireError: (error: unknown) => void): Promise<void> {
    let retired = false;
    try {
      retired = this.pushed.length > 0 && this.open.size === 0 && (await this.retire(store, onRetireError));
      if (retired) return;
      if (this.pushed.length > 0 && (await this.lock.stillMine())) await store.finish(this.lock.claimName, this.pushed);
      if (this.lock.leasedFolder !== undefined && (await this.lock.stillMine())) await this.giveBackLate(store);
    } finally {
      if (!retired) await this.lock.release();
    }
  }

  private async retire(store: SchedulerDeps['store'], onRetireError: (error: unknown) => void, firstTry = true): Promise<boolean> {
    if (this.lock.retire === undefined) return false;
    const pushed = new Set(this.pushed);
    try {
      await this.lock.retire(pushed);
      return true;
    } catch (error) {
      // A claim folder that was a waiting folder refuses to retire while it holds tasks this push
      // never claimed (they arrived after the claim read it): those go back, and it retires.
      // A give-back the store fails too is tried again on the slow path.
      const givenBack = firstTry && this.lock.leasedFolder !== undefined ? await this.giveBackLate(store).catch(() => []) : [];
      if (givenBack.length > 0) return this.retire(store, onRetireError, false);
      // The store refused the move (its done/ folder missing, a permission): the slow path.
      onRetireError(error);
      return false;
    }
  }

  /** Task files in a claim folder made from a waiting folder that this job never claimed → back to that folder. */
  private giveBackLate(store: SchedulerDeps['store']): Promise<string[]> {
    return store.giveBack(this.lock.claimName, this.lock.leasedFolder!, new Set([...this.open, ...this.pushed]));
  }
}
