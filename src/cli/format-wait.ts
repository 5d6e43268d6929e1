import type { WaitDestination } from '../intake/wait-destinations.js';
import { describeFollowed, type FollowedDestination, type ShownState } from '../observe/ref-wait.js';
import { formatAge } from '../observe/time-text.js';
import { redactUrl } from '../runtime/redact.js';
import { plainTable, printable, reasonText } from './format-failed.js';
import { plural } from '../runtime/plural.js';

/** Version of the `wait --json` shape. */
export const WAIT_FORMAT_VERSION = 1;

const RESULTS = { 0: 'replicated', 1: 'lagging', 4: 'unreachable' } as const;

/** `wait: 1/3 replicated, 1 pushing, 1 backing-off; 9m12s left`: redrawn on a terminal while waiting. */
export function progressLine(destinations: readonly WaitDestination[], followed: readonly FollowedDestination[], ref: string, leftMs: number): string {
  const counts = new Map<ShownState, number>();
  for (const item of followed) {
    const { state } = describeFollowed(item, ref);
    counts.set(state, (counts.get(state) ?? 0) + 1);
  }
  const others = [...counts].filter(([state]) => state !== 'replicated').map(([state, count]) => `${count} ${state}`);
  return `wait: ${counts.get('replicated') ?? 0}/${destinations.length} replicated${others.length === 0 ? '' : `, ${others.join(', ')}`}; ${formatAge(Math.max(0, leftMs))} left`;
}

/**
 * `wait: dr /srv/dr/app.git: backing-off (…)` for each destination whose state changed since the
 * last call; `shown` keeps the last state of each, by index.
 */
export function changeLines(destinations: readonly WaitDestination[], followed: readonly FollowedDestination[], shown: string[]): string[] {
  const lines: string[] = [];
  destinations.forEach((destination, i) => {
    const { state, detail } = describeFollowed(followed[i]!, destination.ref);
    if (shown[i] === state) return;
    shown[i] = state;
    lines.push(`wait: ${destination.remote.name} ${printable(redactUrl(destination.uri))}: ${state} (${reasonText(detail)})`);
  });
  return lines;
}

export interface WaitOutcome {
  readonly project: string;
  readonly ref: string;
  readonly value: string;
  readonly destinations: readonly WaitDestination[];
  readonly followed: readonly FollowedDestination[];
  readonly code: 0 | 1 | 4;
  readonly elapsedMs: number;
  readonly json: boolean;
}

function summary(outcome: WaitOutcome, open: number): string {
  const what = `${printable(outcome.ref)} of ${printable(outcome.project)} at ${outcome.value.slice(0, 12)}`;
  const after = formatAge(outcome.elapsedMs);
  const total = outcome.destinations.length;
  if (outcome.code === 0) return `wait: ${what} is on ${total === 1 ? 'the destination' : `all ${total} destinations`} (${after})`;
  if (outcome.code === 4) return `wait: ${what}: ${plural(open, 'destination')} could not be reached to confirm (${after})`;
  return `wait: ${what}: ${plural(open, 'destination')} of ${total} lag${open === 1 ? 's' : ''} (${after})`;
}

/** The final report: one line per destination and a summary, or the `--json` document. */
export function waitReport(outcome: WaitOutcome): string {
  const rows = outcome.destinations.map((destination, i) => ({
    remote: destination.remote.name,
    uri: redactUrl(destination.uri),
    ref: destination.ref,
    ...describeFollowed(outcome.followed[i]!, destination.ref),
  }));
  const open = rows.filter((row) => row.state !== 'replicated').length;
  if (outcome.json) {
    const document = {
      version: WAIT_FORMAT_VERSION,
      project: outcome.project,
      ref: outcome.ref,
      value: outcome.value,
      result: RESULTS[outcome.code],
      elapsedMs: Math.round(outcome.elapsedMs),
      destinations: rows,
    };
    return `${JSON.stringify(document, null, 2)}\n`;
  }
  const table = plainTable(rows.map((row) => [row.state.toUpperCase(), row.remote, printable(row.uri), reasonText(row.detail)]));
  return `${table}\n${summary(outcome, open)}\n`;
}
