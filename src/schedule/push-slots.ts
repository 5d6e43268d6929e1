import type { FairCandidate, FairReservation, FairShare } from './fair-share.js';

/** A job's standing in the fair share: what it is, and its reservation (charged once it pushes). */
export interface FairClaim {
  readonly candidate: FairCandidate;
  readonly reservation: FairReservation;
  /** Started while no slot was free, to wait for one: it owns none, and jobs that do go first. */
  readonly ahead: boolean;
}

/** One job's claim on a push slot. `release` may be called any number of times. */
export interface PushSlot {
  /** Resolves true once the slot is this job's, false when `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<boolean>;
  release(): void;
}

interface Waiter {
  readonly remote: string;
  readonly limit: () => number;
  readonly fair: FairClaim | undefined;
  grant(): void;
}

export interface PushSlotsOptions {
  /** Node-wide cap on concurrent pushes (`replication.maxPushes`), read on every grant. */
  readonly nodeLimit?: () => number;
  /** Chooses between waiters when a slot frees; FIFO without it. */
  readonly fairShare?: FairShare;
  /** True: keep the freed slot for something better than `best` that is not waiting yet. */
  readonly hold?: (best: FairCandidate) => boolean;
}

/**
 * At most `threads` git pushes per remote and `maxPushes` per node at once. A job that got its
 * lock and claimed its tasks ahead of time waits here, and a freed slot goes straight to a waiter
 * — the one the fair share picks among those whose remote has room — so no pass of the
 * distributor stands between one push and the next.
 */
export class PushSlots {
  private readonly busyByRemote = new Map<string, number>();
  private busyTotal = 0;
  private readonly queue: Waiter[] = [];

  constructor(private readonly options: PushSlotsOptions = {}) {}

  /** Slots of `remote` in use right now. */
  busy(remote: string): number {
    return this.busyByRemote.get(remote) ?? 0;
  }

  /** Slots in use on this node. */
  get total(): number {
    return this.busyTotal;
  }

  /** `limit` is read on every grant, so a reloaded `threads` applies to the next push. */
  slot(remote: string, limit: () => number, fair?: FairClaim): PushSlot {
    let state: 'idle' | 'waiting' | 'held' | 'released' = 'idle';
    let settle: ((granted: boolean) => void) | undefined;
    let stopCharging: (() => void) | undefined;
    const waiter: Waiter = {
      remote,
      limit,
      fair,
      grant: () => {
        stopCharging = fair?.reservation.begin();
        settle?.(true);
      },
    };
    const cancelWait = (): void => {
      if (state !== 'waiting') return;
      const index = this.queue.indexOf(waiter);
      if (index >= 0) this.queue.splice(index, 1);
      settle?.(false);
    };
    return {
      acquire: (signal) => {
        if (state !== 'idle') return Promise.resolve(state === 'held');
        if (signal.aborted) {
          state = 'released';
          return Promise.resolve(false);
        }
        state = 'waiting';
        return new Promise<boolean>((resolve) => {
          settle = (granted) => {
            signal.removeEventListener('abort', cancelWait);
            settle = undefined;
            state = granted ? 'held' : 'released';
            resolve(granted);
          };
          signal.addEventListener('abort', cancelWait, { once: true });
          this.queue.push(waiter);
          this.pump();
        });
      },
      release: () => {
        fair?.reservation.cancel(); // no-op once the push began
        if (state === 'waiting') cancelWait();
        else if (state === 'held') {
          state = 'released';
          stopCharging?.();
          this.busyByRemote.set(remote, this.busy(remote) - 1);
          this.busyTotal--;
          this.pump();
        } else state = 'released';
      },
    };
  }

  /** Hands out free slots again: what a hold was waiting for may have started, or gone. */
  reconsider(): void {
    this.pump();
  }

  private pump(): void {
    const nodeLimit = this.options.nodeLimit ?? (() => Number.POSITIVE_INFINITY);
    while (this.queue.length > 0 && this.busyTotal < nodeLimit()) {
      const ready = this.queue.filter((waiter) => this.busy(waiter.remote) < waiter.limit());
      if (ready.length === 0) return;
      const fair = this.options.fairShare;
      // Jobs started for a free slot own one and go first; jobs taken ahead share what is left.
      const owners = ready.filter((waiter) => waiter.fair?.ahead !== true);
      const pool = owners.length > 0 ? owners : ready;
      const described = pool.filter((waiter) => waiter.fair !== undefined);
      // Waiters without a description (tests of one job) keep their arrival order.
      const next = fair === undefined || described.length < pool.length ? pool[0]! : fair.choose(pool, (waiter) => waiter.fair!.candidate)!;
      if (next.fair?.ahead === true && this.options.hold?.(next.fair.candidate) === true) return;
      this.queue.splice(this.queue.indexOf(next), 1);
      this.busyByRemote.set(next.remote, this.busy(next.remote) + 1);
      this.busyTotal++;
      next.grant();
    }
  }
}
