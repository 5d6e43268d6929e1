import { watch } from 'node:fs';

/** A burst of local store writes (new tasks above all) becomes one early distributor pass. */
const WATCH_HINT_DEBOUNCE_MS = 50;

/**
 * A local hint only: other nodes' writes arrive through the periodic listing. The watch is on
 * building/, where every task written on this machine starts (temp, then link into waiting/) —
 * as do the store's other atomic writes (retry state, failure reasons), rare enough to wake a
 * pass too — not on waiting/: there every claim and reset is an event, and while this node pushed
 * each of them woke a pass that listed the whole folder again (a listing of 100,000 waiting
 * tasks costs ~100 ms) instead of one per interval. The last event of a write, the temp's
 * removal, comes after the task is in waiting/.
 *
 * `building` is StorePaths.building. Returns what ends the watch; when the folder cannot be watched
 * there is nothing to end, and the periodic listing still finds every task.
 */
export function watchLocalWrites(building: string, wake: () => void): () => void {
  try {
    let hinted = false;
    const watcher = watch(building, { persistent: false }, () => {
      if (hinted) return;
      hinted = true;
      setTimeout(() => {
        hinted = false;
        wake();
      }, WATCH_HINT_DEBOUNCE_MS).unref();
    });
    watcher.on('error', () => undefined);
    return () => watcher.close();
  } catch {
    return () => undefined;
  }
}
