import { describe, expect, it } from 'vitest';
import { changedRefs } from '../../../src/intake/ref-snapshot.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

describe("the ref watcher's comparison of two snapshots", () => {
  it('names every ref added, moved or deleted, sorted, and none that kept its value', () => {
    const before = new Map([
      ['refs/heads/kept', A],
      ['refs/heads/moved', A],
      ['refs/heads/gone', A],
    ]);
    const after = new Map([
      ['refs/heads/kept', A],
      ['refs/heads/moved', B],
      ['refs/tags/new', B],
    ]);
    expect(changedRefs(before, after)).toEqual(['refs/heads/gone', 'refs/heads/moved', 'refs/tags/new']);
    expect(changedRefs(after, after)).toEqual([]);
    expect(changedRefs(new Map(), after)).toEqual(['refs/heads/kept', 'refs/heads/moved', 'refs/tags/new']);
  });
});
