import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/load-config.js';
import { changeLines, progressLine, waitReport } from '../../../src/cli/format-wait.js';
import { waitDestinations, type WaitDestination } from '../../../src/intake/wait-destinations.js';
import { applyConfirmation, beginConfirmation, followDestination, observe, type FollowedDestination } from '../../../src/observe/ref-wait.js';
import { entries } from '../config/config-entries.js';

const VALUE = 'c'.repeat(40);
const result = validateConfig(
  entries('replication.storePath=/store', 'remote.dr.url=https://bot:pw@dr.example/${name}.git', 'remote.ci.url=/ci/${name}.git'),
  '/etc/refrelay/replication.config',
  'n1',
);
const destinations = waitDestinations(result.config!, 'app', 'refs/heads/main', []) as WaitDestination[];

function state(waiting: number, answer?: { value: string | null }): FollowedDestination {
  const followed = followDestination();
  observe(followed, { waiting, running: false, backoff: undefined, failed: undefined, lastResultAt: 0 });
  if (answer !== undefined) {
    beginConfirmation(followed);
    applyConfirmation(followed, answer, VALUE);
  }
  return followed;
}

describe('what refrelay wait prints', () => {
  it('a progress line counting the destinations by state, with the time left', () => {
    expect(progressLine(destinations, [state(0, { value: VALUE }), state(2)], 'refs/heads/main', 90_000)).toBe('wait: 1/2 replicated, 1 waiting; 1m30s left');
  });

  it('one line per change of a destination, its password hidden', () => {
    const shown: string[] = [];
    const waiting = [state(2), state(1)];
    expect(changeLines(destinations, waiting, shown)).toEqual([
      'wait: dr https://bot:***@dr.example/app.git: waiting (2 tasks waiting)',
      'wait: ci /ci/app.git: waiting (1 task waiting)',
    ]);
    expect(changeLines(destinations, [state(1), state(1)], shown)).toEqual([]);
    expect(changeLines(destinations, [state(1), state(0, { value: VALUE })], shown)).toEqual(['wait: ci /ci/app.git: replicated (has refs/heads/main)']);
  });

  it('--json: the result, and per destination its state, with the URI redacted', () => {
    const report = JSON.parse(
      waitReport({
        project: 'app',
        ref: 'refs/heads/main',
        value: VALUE,
        destinations,
        followed: [state(0, { value: null }), state(0, { value: VALUE })],
        code: 1,
        elapsedMs: 1234.4,
        json: true,
      }),
    ) as unknown;
    expect(report).toEqual({
      version: 1,
      project: 'app',
      ref: 'refs/heads/main',
      value: VALUE,
      result: 'lagging',
      elapsedMs: 1234,
      destinations: [
        {
          remote: 'dr',
          uri: 'https://bot:***@dr.example/app.git',
          ref: 'refs/heads/main',
          state: 'lagging',
          detail: 'has no refs/heads/main, and no task of it is waiting',
        },
        { remote: 'ci', uri: '/ci/app.git', ref: 'refs/heads/main', state: 'replicated', detail: 'has refs/heads/main' },
      ],
    });
  });
});
