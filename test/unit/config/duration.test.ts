import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../src/config/duration.js';

describe('parseDuration', () => {
  it.each([
    ['500ms', 500],
    ['15s', 15_000],
    ['2m', 120_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['0', 0],
    ['0s', 0],
  ])('reads the short suffix form %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['10 sec', 10_000],
    ['1 second', 1000],
    ['3 seconds', 3000],
    ['5 min', 300_000],
    ['1 minute', 60_000],
    ['2 minutes', 120_000],
    ['1 hour', 3_600_000],
    ['2 hours', 7_200_000],
    ['250 milliseconds', 250],
  ])('reads the git-like long form %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it('ignores case and surrounding whitespace', () => {
    expect(parseDuration('  15S ')).toBe(15_000);
    expect(parseDuration('2 Minutes')).toBe(120_000);
    expect(parseDuration('500MS')).toBe(500);
  });

  it('reads a bare number in the key default unit: seconds unless told minutes', () => {
    expect(parseDuration('15')).toBe(15_000);
    expect(parseDuration('15', 'seconds')).toBe(15_000);
    expect(parseDuration('2', 'minutes')).toBe(120_000);
    expect(parseDuration('2', 'milliseconds')).toBe(2);
  });

  it('keeps an explicit suffix even when the bare unit is minutes', () => {
    expect(parseDuration('30s', 'minutes')).toBe(30_000);
  });

  it.each(['soon', '-5s', '-1', '1.5s', '', '   ', '5 fortnights', 's', '10s5'])('rejects %j with the duration hint', (text) => {
    expect(parseDuration(text)).toBe(`expected a duration such as 15s, 2m, 500ms, got "${text}"`);
  });

  it('rejects a duration too large to count in milliseconds', () => {
    expect(parseDuration('99999999999999999999d')).toMatch(/^duration too large/);
  });
});

describe('formatDuration', () => {
  it('writes compact human units', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(250)).toBe('250ms');
    expect(formatDuration(15_000)).toBe('15s');
    expect(formatDuration(90_000)).toBe('1m30s');
    expect(formatDuration(3_600_000)).toBe('1h');
    expect(formatDuration(1500)).toBe('1s500ms');
  });
});
