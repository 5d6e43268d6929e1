/** Repeating and one-shot timers, injected so the core runs under a fake clock in tests. */
export interface Timers {
  every(intervalMs: number, action: () => void): () => void;
  after(delayMs: number, action: () => void): () => void;
}

export const systemTimers: Timers = {
  every(intervalMs, action) {
    const handle = setInterval(action, intervalMs);
    handle.unref();
    return () => clearInterval(handle);
  },
  after(delayMs, action) {
    const handle = setTimeout(action, delayMs);
    return () => clearTimeout(handle);
  },
};
