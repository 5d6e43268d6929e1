import { describe, expect, it } from 'vitest';
import { keysNotFound, parseFailedSelector, selectsFailed, type FailedSelector, type FailedSelectorArgs } from '../../../src/cli/failed-selector.js';
import type { Task } from '../../../src/task/task.js';

const KEY_A = 'a'.repeat(40);
const KEY_B = 'b'.repeat(40);
const app: Task = { project: 'team/app', refs: ['refs/heads/blocked'], uri: 'ssh://git@dr.example.com/team/app.git', remote: 'dr' };
const lib: Task = { project: 'team/lib', refs: ['refs/heads/main'], uri: 'ssh://git@gh.example.com/team/lib.git', remote: 'gh' };

function selector(args: Partial<FailedSelectorArgs>): FailedSelector {
  const parsed = parseFailedSelector({ all: false, keys: [], ...args });
  if ('problem' in parsed) throw new Error(parsed.problem);
  return parsed;
}

function problem(args: Partial<FailedSelectorArgs>): string | undefined {
  const parsed = parseFailedSelector({ all: false, keys: [], ...args });
  return 'problem' in parsed ? parsed.problem : undefined;
}

describe('which failed tasks failed drop selects', () => {
  it('--all selects every task', () => {
    const all = selector({ all: true });
    expect([selectsFailed(all, KEY_A, app), selectsFailed(all, KEY_B, lib)]).toEqual([true, true]);
  });

  it('--remote exactly, --uri as a substring, --project as exact, prefix/* or ^regex, keys with or without .json; all given must match', () => {
    const pick = (args: Partial<FailedSelectorArgs>): boolean[] => [selectsFailed(selector(args), KEY_A, app), selectsFailed(selector(args), KEY_B, lib)];
    expect(pick({ remote: 'dr' })).toEqual([true, false]);
    expect(pick({ remote: 'd' })).toEqual([false, false]);
    expect(pick({ uri: 'gh.example.com/team' })).toEqual([false, true]);
    expect(pick({ project: 'team/app' })).toEqual([true, false]);
    expect(pick({ project: 'team/*' })).toEqual([true, true]);
    expect(pick({ project: '^team/(lib|x)' })).toEqual([false, true]);
    expect(pick({ keys: [KEY_B] })).toEqual([false, true]);
    expect(pick({ keys: [`${KEY_A}.json`, KEY_B] })).toEqual([true, true]);
    expect(pick({ remote: 'dr', project: 'team/lib' })).toEqual([false, false]);
    expect(pick({ keys: [KEY_A], remote: 'gh' })).toEqual([false, false]);
  });

  it('refuses no selector, --all with another, a key that is not 40 hex, an empty value and a bad pattern', () => {
    expect(problem({})).toBe('give --all, --remote NAME, --uri SUBSTRING, --project PATTERN or TASKKEY… (see refrelay failed list)');
    expect(problem({ all: true, keys: [KEY_A] })).toBe(
      '--all drops every failed task; give it alone, or narrow with --remote, --uri, --project or TASKKEY… instead',
    );
    expect(problem({ keys: ['A'.repeat(40)] })).toBe(`"${'A'.repeat(40)}" is not a task key (40 hex digits, as refrelay failed list shows them)`);
    expect(problem({ keys: ['../x'] })).toBe('"../x" is not a task key (40 hex digits, as refrelay failed list shows them)');
    expect(problem({ uri: '' })).toBe('--uri needs a value');
    expect(problem({ project: '^(' })).toMatch(/^project pattern "\^\(": /);
  });

  it('names the keys asked for that no failed task had', () => {
    expect(keysNotFound(selector({ keys: [KEY_B, KEY_A] }), [KEY_A])).toEqual([KEY_B]);
    expect(keysNotFound(selector({ remote: 'dr' }), [])).toEqual([]);
  });
});
