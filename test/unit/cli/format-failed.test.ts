import { describe, expect, it } from 'vitest';
import { drainSummary, failedListRows, plainTable, printable, reasonText, refsText, sinceText } from '../../../src/cli/format-failed.js';
import type { FailedTaskStatus } from '../../../src/observe/failed-view.js';

function failed(n: number, fields: Partial<FailedTaskStatus> = {}): FailedTaskStatus {
  const key = String(n).padStart(40, '0');
  return {
    uriKey: 'a'.repeat(40),
    name: `${key}.json`,
    taskKey: key,
    uri: `/dest/app${n}.git`,
    remote: 'dr',
    project: `app${n}`,
    refs: ['refs/heads/blocked'],
    reason: 'rejected by the destination: [remote rejected] (pre-receive hook declined)',
    failedAt: Date.UTC(2026, 0, 1, 12, 0, n),
    failedAgeMs: 1000,
    ...fields,
  };
}

describe('failed tasks as text', () => {
  it('daemon --drain names the first 10 parked tasks with uri, refs and reason, then counts the rest', () => {
    const text = drainSummary(
      Array.from({ length: 12 }, (_, i) => failed(i + 1)),
      12,
      10,
    );
    const lines = text.split('\n');
    expect(lines[0]).toBe('refrelay: 12 tasks moved to failed/ during this run:');
    expect(lines[1]).toBe('  /dest/app1.git refs/heads/blocked: rejected by the destination: [remote rejected] (pre-receive hook declined)');
    expect(lines[10]).toBe('  /dest/app10.git refs/heads/blocked: rejected by the destination: [remote rejected] (pre-receive hook declined)');
    expect(lines.slice(11)).toEqual([
      '  … and 2 more (refrelay failed list)',
      'refrelay: see them with `refrelay failed list`; put them back with `refrelay retry`, or drop them with `refrelay failed drop`',
      '',
    ]);
    expect(drainSummary([], 2, 10)).toBe('refrelay: 2 tasks moved to failed/ during this run; none is there any more (retried or dropped meanwhile)\n');
  });

  it('failed list: one aligned line per task with key, remote, uri, project, refs, since and reason', () => {
    const rows = failedListRows([
      failed(1),
      failed(2, { refs: ['refs/heads/a', 'refs/heads/b', 'refs/heads/c', 'refs/heads/d', 'refs/heads/e'], reason: null, project: 'team/app2' }),
    ]);
    expect(plainTable(rows)).toBe(
      [
        'TASK                                      REMOTE  URI             PROJECT    REFS                                              SINCE                 REASON',
        `${'1'.padStart(40, '0')}  dr      /dest/app1.git  app1       refs/heads/blocked                                2026-01-01T12:00:01Z  rejected by the destination: [remote rejected] (pre-receive hook declined)`,
        `${'2'.padStart(40, '0')}  dr      /dest/app2.git  team/app2  refs/heads/a refs/heads/b refs/heads/c (+2 more)  2026-01-01T12:00:02Z  no reason recorded`,
      ].join('\n'),
    );
  });

  it('keeps store text on one line: line breaks become spaces, other control characters escapes, a long reason is cut', () => {
    expect(printable('a\r\n  b\u001b[31mc\u2028')).toBe('a b\\u001b[31mc\\u2028');
    expect(refsText(['refs/heads/x\u0007'])).toBe('refs/heads/x\\u0007');
    expect(reasonText('x'.repeat(400))).toBe(`${'x'.repeat(300)}…`);
  });

  it('shows a failure time no Date can hold as -, instead of failing the whole list', () => {
    expect(sinceText(Date.UTC(2026, 0, 1, 12))).toBe('2026-01-01T12:00:00Z');
    expect(sinceText(1e16)).toBe('-');
    expect(failedListRows([failed(1, { failedAt: 1e16 })])[1]![5]).toBe('-');
  });
});
