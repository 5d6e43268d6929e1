import { describe, expect, it } from 'vitest';
import { describeDeletes, pushesLocalDelete } from '../../../src/config/delete-rule.js';
import { parseRefspec } from '../../../src/config/refspec.js';
import type { Refspec } from '../../../src/config/types.js';

function specs(...texts: string[]): Refspec[] {
  return texts.map((text) => {
    const spec = parseRefspec(text);
    if (typeof spec === 'string') throw new Error(spec);
    return spec;
  });
}

describe('pushesLocalDelete', () => {
  it('deletes on the destination when the refspec is forced or the remote is mirror', () => {
    expect([
      pushesLocalDelete({ mirror: false }, { force: true }),
      pushesLocalDelete({ mirror: true }, { force: false }),
      pushesLocalDelete({ mirror: true }, { force: true }),
      pushesLocalDelete({ mirror: false }, { force: false }),
    ]).toEqual([true, true, true, false]);
  });
});

describe('describeDeletes', () => {
  it.each([
    [false, ['+refs/heads/*:refs/heads/*'], 'pushed (forced refspec +refs/heads/*:refs/heads/*)'],
    [false, ['+refs/heads/*', '+refs/tags/*'], 'pushed (forced refspecs +refs/heads/*, +refs/tags/*)'],
    [false, ['refs/heads/*:refs/heads/*'], 'not pushed (no forced refspec, mirror off)'],
    [
      false,
      ['+refs/heads/*:refs/heads/*', 'refs/tags/*:refs/tags/*'],
      'pushed for refs a forced refspec maps (+refs/heads/*:refs/heads/*); not for refs/tags/*:refs/tags/* (not forced, mirror off)',
    ],
    [true, ['refs/*:refs/*'], 'pushed (mirror); a full sync also deletes destination refs that no local ref maps to'],
    [true, ['+refs/*:refs/*'], 'pushed (mirror); a full sync also deletes destination refs that no local ref maps to'],
  ])('mirror %s with %j: %s', (mirror, push, expected) => {
    expect(describeDeletes({ mirror, push: specs(...push) })).toBe(expected);
  });
});
