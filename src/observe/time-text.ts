/** Times for people, shared by `status` and the page. Pure. */

/** An instant in ISO 8601 (UTC); `-` for a number no Date can hold (a store record may say 1e20). */
export function formatInstant(ms: number): string {
  const date = new Date(ms);
  return Number.isNaN(date.getTime()) ? '-' : date.toISOString();
}

/** An age or a wait: `45s`, `3m07s`, `2h05m`; rounded down, so an age is never shown ahead of itself. */
export function formatAge(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** A wait for something to start: `due now`, or `in 42s`. */
export function formatWait(ms: number): string {
  return ms <= 0 ? 'due now' : `in ${formatAge(ms)}`;
}

/**
 * A node's clock offset from the store's, signed: `+0.4s`, `-10m00s`. The sign is decided after
 * rounding, so a few milliseconds behind is `+0.0s`, never `-0.0s`.
 */
export function formatOffset(ms: number): string {
  const abs = Math.abs(ms);
  // Below 59.95 s one decimal (which would round up to "60.0s" beyond that), then minutes.
  if (abs >= 59_950) return `${ms < 0 ? '-' : '+'}${formatAge(abs)}`;
  const tenths = Math.round(abs / 100);
  return `${ms < 0 && tenths > 0 ? '-' : '+'}${(tenths / 10).toFixed(1)}s`;
}
