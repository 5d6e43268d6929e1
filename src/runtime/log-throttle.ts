/**
 * At most one log line per key and interval: the first goes out, the ones within the interval
 * after it are only counted, and the next line that goes out carries that count. A failing store
 * fails every pass and every job of a node, several times a second; one line a minute says as much.
 */
export class LogThrottle {
  private readonly keys = new Map<string, { loggedAt: number; suppressed: number }>();

  constructor(private readonly intervalMs: number) {}

  /** `log`: write this line now, saying `suppressed` lines were left out before it. */
  take(key: string, now: number): { log: boolean; suppressed: number } {
    const last = this.keys.get(key);
    if (last !== undefined && now - last.loggedAt < this.intervalMs) {
      last.suppressed++;
      return { log: false, suppressed: 0 };
    }
    this.keys.set(key, { loggedAt: now, suppressed: 0 });
    return { log: true, suppressed: last?.suppressed ?? 0 };
  }
}
