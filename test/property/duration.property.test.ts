import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration, type BareDurationUnit } from '../../src/config/duration.js';

const bareUnit = fc.constantFrom<BareDurationUnit>('milliseconds', 'seconds', 'minutes');
const BARE_MS: Record<BareDurationUnit, number> = { milliseconds: 1, seconds: 1000, minutes: 60_000 };

const SUFFIXES: readonly (readonly [string, number])[] = [
  ...['ms', 'msec', 'msecs', 'millisecond', 'milliseconds'].map((s) => [s, 1] as const),
  ...['s', 'sec', 'secs', 'second', 'seconds'].map((s) => [s, 1000] as const),
  ...['m', 'min', 'mins', 'minute', 'minutes'].map((s) => [s, 60_000] as const),
  ...['h', 'hr', 'hrs', 'hour', 'hours'].map((s) => [s, 3_600_000] as const),
  ...['d', 'day', 'days'].map((s) => [s, 86_400_000] as const),
];

const durationLike = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('', ' ', '\t', '-', '+', '0', '00', '1e', '\u00a0'),
      fc.oneof(fc.nat().map(String), fc.constantFrom('9'.repeat(16), '9'.repeat(30), '9007199254740991', '9007199254740992', '1.5', '')),
      fc.constantFrom('', ' ', '  '),
      fc.oneof(fc.constantFrom(...SUFFIXES.map(([s]) => s)), fc.constantFrom('MS', 'Sec', 'fortnight', 'µs', 'ſ', 'K', 'w', 'y', '')),
      fc.constantFrom('', ' ', '\n', 'x', 's'),
    )
    .map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

describe('parseDuration', () => {
  it('gives whole milliseconds (a safe integer ≥ 0) or a message, for any text', () => {
    fc.assert(
      fc.property(durationLike, bareUnit, (text, unit) => {
        const parsed = parseDuration(text, unit);
        if (typeof parsed === 'string') expect(parsed.endsWith(`got "${text}"`)).toBe(true);
        else expect({ text, ok: Number.isSafeInteger(parsed) && parsed >= 0 }).toEqual({ text, ok: true });
      }),
      { seed: 8001, numRuns: 3000 },
    );
  });

  it('reads n<suffix> as n times the unit, whatever the case and spacing', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 10_000_000 }),
        fc.constantFrom(...SUFFIXES),
        fc.constantFrom('', ' ', '  '),
        fc.boolean(),
        bareUnit,
        (n, [suffix, unitMs], space, upper, unit) => {
          const text = ` ${n}${space}${upper ? suffix.toUpperCase() : suffix} `;
          const expected = n * unitMs;
          expect(parseDuration(text, unit)).toBe(Number.isSafeInteger(expected) ? expected : `duration too large, got "${text}"`);
        },
      ),
      { seed: 8002, numRuns: 1000 },
    );
  });

  it("reads a bare whole number in the key's own unit", () => {
    fc.assert(
      fc.property(fc.nat({ max: 1_000_000_000 }), bareUnit, (n, unit) => {
        expect(parseDuration(String(n), unit)).toBe(n * BARE_MS[unit]);
      }),
      { seed: 8003, numRuns: 500 },
    );
  });

  it('refuses a negative duration', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1 }), fc.constantFrom('', 's', 'ms', 'm'), bareUnit, (n, suffix, unit) => {
        expect(typeof parseDuration(`-${n}${suffix}`, unit)).toBe('string');
      }),
      { seed: 8004, numRuns: 300 },
    );
  });
});

describe('formatDuration', () => {
  it('writes parts (d, h, m, s, ms) that each parse and add up to the duration', () => {
    fc.assert(
      fc.property(fc.oneof(fc.nat(), fc.maxSafeNat(), fc.constantFrom(0, 1, 999, 1000, 60_000, 86_400_000)), (ms) => {
        const text = formatDuration(ms);
        expect(text).toMatch(/^(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?(?:\d+ms)?$/);
        expect(text).not.toBe('');
        const parts = text.match(/\d+(?:ms|[dhms])/g) ?? [];
        const total = parts.reduce((sum, part) => sum + (parseDuration(part) as number), 0);
        expect(total).toBe(ms);
      }),
      { seed: 8005, numRuns: 1000 },
    );
  });
});
