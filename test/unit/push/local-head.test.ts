import { describe, expect, it } from 'vitest';
import { parseHead } from '../../../src/push/local-head.js';

describe('parseHead reads a HEAD file as git writes it', () => {
  it.each([
    ['ref: refs/meta/config\n', { target: 'refs/meta/config' }],
    ['ref: refs/heads/main\n', { target: 'refs/heads/main' }],
    ['ref: refs/heads/main', { target: 'refs/heads/main' }],
    [`${'a'.repeat(40)}\n`, 'detached'],
    [`${'b'.repeat(64)}\n`, 'detached'],
  ] as const)('%j is %j', (text, state) => {
    expect(parseHead(text)).toEqual(state);
  });

  it.each([
    ['ref: refs/heads/.invalid\n', 'reftable keeps this placeholder; the real HEAD is in the table'],
    ['', 'empty: a write in progress'],
    ['ref: main\n', 'not under refs/'],
    ['gitdir: ../.git/worktrees/x\n', 'a pointer, not a HEAD'],
  ])('%j cannot be read from the file (%s): git is asked', (text) => {
    expect(parseHead(text)).toBe('unknown');
  });
});
