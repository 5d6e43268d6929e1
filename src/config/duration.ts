/** What a bare number means: Gerrit reads most delays in seconds, `replicationRetry` in minutes. */
export type BareDurationUnit = 'milliseconds' | 'seconds' | 'minutes';

export const DURATION_HINT = 'expected a duration such as 15s, 2m, 500ms';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

const BARE_UNIT_MS: Record<BareDurationUnit, number> = { milliseconds: 1, seconds: SECOND, minutes: MINUTE };

// Gerrit's ConfigUtil accepts these spellings, so a Gerrit config keeps working.
const SUFFIX_MS: ReadonlyMap<string, number> = new Map([
  ...['ms', 'msec', 'msecs', 'millisecond', 'milliseconds'].map((s) => [s, 1] as const),
  ...['s', 'sec', 'secs', 'second', 'seconds'].map((s) => [s, SECOND] as const),
  ...['m', 'min', 'mins', 'minute', 'minutes'].map((s) => [s, MINUTE] as const),
  ...['h', 'hr', 'hrs', 'hour', 'hours'].map((s) => [s, HOUR] as const),
  ...['d', 'day', 'days'].map((s) => [s, DAY] as const),
]);

/**
 * Parses `15s`, `2 min`, `500ms`, or a bare whole number in the key's Gerrit
 * unit. Returns milliseconds, or the error message to show for the key.
 */
export function parseDuration(text: string, bareUnit: BareDurationUnit = 'seconds'): number | string {
  const match = /^\s*(\d+)\s*([a-z]*)\s*$/i.exec(text);
  if (!match) return `${DURATION_HINT}, got "${text}"`;
  const amount = Number(match[1]);
  const suffix = (match[2] ?? '').toLowerCase();
  const unitMs = suffix === '' ? BARE_UNIT_MS[bareUnit] : SUFFIX_MS.get(suffix);
  if (unitMs === undefined) return `${DURATION_HINT}, got "${text}"`;
  const ms = amount * unitMs;
  if (!Number.isSafeInteger(ms)) return `duration too large, got "${text}"`;
  return ms;
}

/** Short human form for `config check`: 15000 → "15s", 90000 → "1m30s", 0 → "0s". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const parts: string[] = [];
  let rest = ms;
  for (const [unit, size] of [
    ['d', DAY],
    ['h', HOUR],
    ['m', MINUTE],
    ['s', SECOND],
  ] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  if (rest > 0) parts.push(`${rest}ms`);
  return parts.join('');
}
