import type { FailedTaskStatus } from '../observe/failed-view.js';
import { plural } from '../runtime/plural.js';
import { formatInstant } from '../observe/time-text.js';

/** Refs named per task; the rest are counted (a full sync or a big update can carry thousands). */
const REFS_SHOWN = 3;
/** A reason longer than this (git's stderr can be long) is cut; `--json` has it whole. */
const REASON_CHARS = 300;

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;

/**
 * Store text (a task's project and refs, git's stderr) on one terminal line: line breaks become
 * a space and other control characters an escape, so a hostile task file cannot move the cursor
 * or forge lines of its own.
 */
export function printable(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function refsText(refs: readonly string[]): string {
  const shown = refs.slice(0, REFS_SHOWN).map(printable).join(' ');
  return refs.length > REFS_SHOWN ? `${shown} (+${refs.length - REFS_SHOWN} more)` : shown;
}

export function reasonText(reason: string | null): string {
  if (reason === null) return 'no reason recorded';
  const chars = Array.from(printable(reason));
  return chars.length > REASON_CHARS ? `${chars.slice(0, REASON_CHARS).join('')}…` : chars.join('');
}

/** `2026-01-01T12:00:00Z`: the second is precise enough to tell failures apart. */
export function sinceText(at: number): string {
  return formatInstant(at).replace(/\.\d{3}Z$/, 'Z');
}

/** `refrelay failed list`: the header, then one row per task. */
export function failedListRows(tasks: readonly FailedTaskStatus[]): string[][] {
  return [
    ['TASK', 'REMOTE', 'URI', 'PROJECT', 'REFS', 'SINCE', 'REASON'],
    ...tasks.map((task) => [
      task.taskKey,
      printable(task.remote),
      printable(task.uri),
      printable(task.project),
      refsText(task.refs),
      sinceText(task.failedAt),
      reasonText(task.reason),
    ]),
  ];
}

/** Plain aligned columns, the last one unpadded: one line per row, for people and for grep. */
export function plainTable(rows: readonly string[][]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** What a count of more tasks than are shown adds: `… and 3 more (HINT)`. */
export function andMore(shown: number, total: number, hint: string): string[] {
  return total > shown ? [`… and ${total - shown} more (${hint})`] : [];
}

/**
 * `daemon --drain` ends with exit 1 when it parked tasks: what it parked and why, the first
 * `limit` of them, one line each, so a cron mail or a CI log says it without a look at the store.
 */
export function drainSummary(parked: readonly FailedTaskStatus[], movedToFailed: number, limit: number): string {
  if (parked.length === 0) {
    return `refrelay: ${plural(movedToFailed, 'task')} moved to failed/ during this run; ` + 'none is there any more (retried or dropped meanwhile)\n';
  }
  const lines = [`refrelay: ${plural(parked.length, 'task')} moved to failed/ during this run:`];
  for (const task of parked.slice(0, limit)) lines.push(`  ${printable(task.uri)} ${refsText(task.refs)}: ${reasonText(task.reason)}`);
  lines.push(...andMore(Math.min(limit, parked.length), parked.length, 'refrelay failed list').map((line) => `  ${line}`));
  lines.push('refrelay: see them with `refrelay failed list`; put them back with `refrelay retry`, or drop them with `refrelay failed drop`');
  return `${lines.join('\n')}\n`;
}
