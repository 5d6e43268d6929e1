import { describe, expect, it } from 'vitest';
import { renderTrendCharts } from '../../../src/observe/trend-charts.js';
import { mergeTrends, MinuteTrend, parseTrend, TREND_MINUTES, type TrendMinute } from '../../../src/observe/trend.js';
import { FakeClock } from '../../support/fake-clock.js';

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

describe("a node's minute trend", () => {
  it('counts pushes and failures per remote in the minute they end, and keeps the last count of the queue', () => {
    const clock = new FakeClock(T0 + 5_000);
    const trend = new MinuteTrend(() => clock.now());
    trend.recordPush('dr', false);
    trend.recordPush('dr', true);
    trend.sampleWaiting({ dr: 7 });
    trend.sampleWaiting({ dr: 4, ci: 1 });
    clock.advance(MINUTE);
    trend.recordPush('ci', false);
    expect(trend.snapshot()).toEqual([
      { at: T0, waiting: { dr: 4, ci: 1 }, pushes: { dr: 2 }, failures: { dr: 1 } },
      { at: T0 + MINUTE, waiting: {}, pushes: { ci: 1 }, failures: {} },
    ]);
  });

  it('keeps only the last hour', () => {
    const clock = new FakeClock(T0);
    const trend = new MinuteTrend(() => clock.now());
    for (let i = 0; i < TREND_MINUTES + 10; i++) {
      trend.recordPush('dr', false);
      clock.advance(MINUTE);
    }
    const minutes = trend.snapshot();
    expect(minutes).toHaveLength(TREND_MINUTES);
    expect(minutes[0]!.at).toBe(T0 + 11 * MINUTE);
  });
});

describe('trend files from the store', () => {
  it('keeps the well-formed minutes of a file and leaves out the rest', () => {
    const text = JSON.stringify({
      minutes: [
        { at: T0, waiting: { dr: 1 }, pushes: {}, failures: {} },
        { at: 'soon', waiting: {}, pushes: {}, failures: {} },
        { at: T0 + MINUTE, waiting: { dr: -1 }, pushes: {}, failures: {} },
        { at: T0 + 2 * MINUTE, waiting: {}, pushes: { dr: 1.5 }, failures: {} },
        { at: T0 + 3 * MINUTE + 7, waiting: {}, pushes: { dr: 2 }, failures: [] },
        { at: T0 + 4 * MINUTE + 7, waiting: {}, pushes: { dr: 2 }, failures: {} },
        null,
      ],
    });
    expect(parseTrend(text)).toEqual([
      { at: T0, waiting: { dr: 1 }, pushes: {}, failures: {} },
      { at: T0 + 4 * MINUTE, waiting: {}, pushes: { dr: 2 }, failures: {} },
    ]);
    expect(parseTrend('not json')).toEqual([]);
    expect(parseTrend('{"minutes": 3}')).toEqual([]);
  });
});

describe("the cluster's last hour", () => {
  const node = (minutes: Partial<TrendMinute>[]): TrendMinute[] => minutes.map((m) => ({ at: T0, waiting: {}, pushes: {}, failures: {}, ...m }));

  it('sums pushes and failures over the nodes, takes the largest count of the queue, and leaves minutes nobody counted empty', () => {
    const now = T0 + (TREND_MINUTES - 1) * MINUTE + 30_000;
    const merged = mergeTrends(
      [
        node([
          { at: now - MINUTE, waiting: { dr: 3 }, pushes: { dr: 2 }, failures: { dr: 1 } },
          { at: T0 - MINUTE, pushes: { dr: 100 } },
        ]),
        node([{ at: now - MINUTE, waiting: { dr: 5 }, pushes: { dr: 1, ci: 4 } }]),
      ],
      now,
    );
    expect(merged.minutes).toHaveLength(TREND_MINUTES);
    expect(merged.minutes[0]).toBe(T0);
    expect(merged.remotes).toEqual(['ci', 'dr']);
    expect(merged.waiting.dr!.at(-2)).toBe(5);
    expect(merged.waiting.dr!.at(-1)).toBeNull();
    expect(merged.pushes.dr!.reduce((a, b) => a + b)).toBe(3);
    expect(merged.pushes.ci!.at(-2)).toBe(4);
    expect(merged.failures.dr!.at(-2)).toBe(1);
    expect(merged.failures.ci).toBeUndefined();
  });

  it('draws one series per remote with its values, a dot for a lone minute, and escapes remote names', () => {
    const now = T0 + (TREND_MINUTES - 1) * MINUTE;
    const html = renderTrendCharts(
      mergeTrends(
        [
          node([
            { at: now - MINUTE, waiting: { '<b>': 2 }, pushes: { '<b>': 1 } },
            { at: now, waiting: { '<b>': 1 }, pushes: { '<b>': 2 }, failures: { '<b>': 1 } },
          ]),
          node([{ at: now - 30 * MINUTE, waiting: { dr: 4 } }]),
        ],
        now,
      ),
    );
    expect(html).not.toContain('<b>');
    expect(html).toContain('data-remote="&#60;b&#62;"');
    const values = (chart: string, remote: string): string =>
      new RegExp(`id="${chart}"[\\s\\S]*?data-remote="${remote}" data-values="([^"]*)"`).exec(html)![1]!;
    expect(values('chart-waiting', '&#60;b&#62;').split(',').slice(-2)).toEqual(['2', '1']);
    expect(
      values('chart-failures', 'dr')
        .split(',')
        .every((value) => value === '0'),
    ).toBe(true);
    expect(/id="chart-waiting"[\s\S]*?data-remote="dr"[^>]*><circle /.test(html)).toBe(true);
    expect(renderTrendCharts(mergeTrends([], now))).toContain('no data yet');
  });
});
