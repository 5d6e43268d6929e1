/** One job's claim on its remote's push slots. `release` may be called any number of times. */
export interface PushSlot {
  /** Resolves true once the slot is this job's, false when `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<boolean>;
  release(): void;
}

interface RemoteSlots {
  busy: number;
  readonly queue: Array<{ grant: () => void }>;
}

/**
 * At most `threads` git pushes per remote at once. A job that got its lock and claimed its tasks
 * ahead of time waits here, and a freed slot goes straight to the longest waiter: no pass of the
 * distributor stands between one push and the next.
 */
export class PushSlots {
  private readonly remotes = new Map<string, RemoteSlots>();

  /** Slots of `remote` in use right now. */
  busy(remote: string): number {
    return this.remotes.get(remote)?.busy ?? 0;
  }

  /** `limit` is read on every acquire, so a reloaded `threads` applies to the next push. */
  slot(remote: string, limit: () => number): PushSlot {
    const slots = this.slotsOf(remote);
    let state: 'idle' | 'waiting' | 'held' | 'released' = 'idle';
    let cancelWait: (() => void) | undefined;
    const pump = (): void => {
      while (slots.queue.length > 0 && slots.busy < limit()) {
        slots.busy++;
        slots.queue.shift()!.grant();
      }
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
          const settle = (granted: boolean): void => {
            signal.removeEventListener('abort', onAbort);
            cancelWait = undefined;
            state = granted ? 'held' : 'released';
            resolve(granted);
          };
          const waiter = { grant: () => settle(true) };
          const onAbort = (): void => {
            const index = slots.queue.indexOf(waiter);
            if (index >= 0) slots.queue.splice(index, 1);
            settle(false);
          };
          cancelWait = onAbort;
          signal.addEventListener('abort', onAbort, { once: true });
          slots.queue.push(waiter);
          pump();
        });
      },
      release: () => {
        if (state === 'waiting') cancelWait?.();
        else if (state === 'held') {
          slots.busy--;
          state = 'released';
          pump();
        } else state = 'released';
      },
    };
  }

  private slotsOf(remote: string): RemoteSlots {
    let slots = this.remotes.get(remote);
    if (slots === undefined) this.remotes.set(remote, (slots = { busy: 0, queue: [] }));
    return slots;
  }
}
