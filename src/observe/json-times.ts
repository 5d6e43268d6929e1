/**
 * Durations and instants as whole milliseconds in the JSON that refrelay shows: `status --json`
 * and the HTTP endpoints (`/status`, `/readyz`, `/healthz`). Their sources are fractional (file
 * mtimes carry nanoseconds, the monotonic clock microseconds), and `20464.0693359375` tells a
 * reader nothing `20464` does not. Fields are found by the naming rule every time field follows
 * (STYLE.md: `…Ms` durations, `…At` instants; history events' `at`), so a field added later is
 * rounded too. Pure; pass as the replacer of `JSON.stringify`.
 */
export function wholeMilliseconds(key: string, value: unknown): unknown {
  if (typeof value !== 'number' || !Number.isFinite(value) || Number.isInteger(value)) return value;
  if (key !== 'at' && !key.endsWith('Ms') && !key.endsWith('At')) return value;
  // `|| 0`: -0.3 rounds to -0, which is no time a reader should see.
  return Math.round(value) || 0;
}

/** `JSON.stringify(value, null, 2)` with times as whole milliseconds, and a final newline. */
export function timesJson(value: unknown): string {
  return `${JSON.stringify(value, wholeMilliseconds, 2)}\n`;
}
