import type { ReplicationConfig } from '../config/types.js';
import type { DueIndex } from './due-index.js';
import type { SchedulerStore } from './ports.js';

/** URIs whose batch is due within a pass and this long are read ahead (store/read-ahead.ts). */
const READ_AHEAD_LEAD_MS = 1000;
/** URIs read ahead per pass, at most. */
const READ_AHEAD_URIS = 256;

/**
 * After each pass, has the store read the tasks of the URIs due within the next pass and
 * READ_AHEAD_LEAD_MS, so they are read while their batch waits, not after their claim on the path
 * to the push. One read-ahead at a time, never awaited: a pass does not wait for it.
 */
export class ReadAheadSoon {
  private running = false;

  constructor(private readonly store: SchedulerStore) {}

  afterPass(index: DueIndex, now: number, offsetMs: number, config: ReplicationConfig): void {
    const { store } = this;
    if (store.readAhead === undefined || this.running) return;
    const soon = index.dueBy(now + config.distributionIntervalMs + READ_AHEAD_LEAD_MS, offsetMs, READ_AHEAD_URIS);
    if (soon.length === 0) return;
    this.running = true;
    void store
      .readAhead(soon)
      .catch(() => undefined)
      .finally(() => {
        this.running = false;
      });
  }
}
