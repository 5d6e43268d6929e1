import { describe, expect, it } from 'vitest';
import { parsePushPorcelain } from '../../../src/push/porcelain.js';
import type { PlannedRef } from '../../../src/push/push-plan.js';
import { refOutcomes, resultOf } from '../../../src/push/ref-outcomes.js';
import { captured } from './captured.js';

const planned = (ref: string, dst = ref): PlannedRef => ({ ref, dst, refspec: `x:${dst}`, action: 'update' });

describe('refOutcomes joins git report lines to the planned refs by destination', () => {
  it('names the local ref even when git shows an object id as the source', () => {
    const reported = parsePushPorcelain(captured('porcelain-object-id-source').stdout);
    const { refs } = refOutcomes([planned('refs/heads/local-main', 'refs/heads/main'), planned('refs/tags/v1')], reported);
    expect(refs.map((r) => [r.ref, r.dst, r.status])).toEqual([
      ['refs/heads/local-main', 'refs/heads/main', 'new'],
      ['refs/tags/v1', 'refs/tags/v1', 'new'],
    ]);
  });

  it('sets lock failures apart as transient, and keeps policy rejections as rejected', () => {
    const lock = refOutcomes([planned('refs/heads/main'), planned('refs/heads/b2')], parsePushPorcelain(captured('porcelain-remote-lock-failed').stdout));
    expect(lock.transientRejections.map((r) => r.dst)).toEqual(['refs/heads/main']);
    const policy = refOutcomes(
      [planned('refs/heads/main'), planned('refs/heads/b2')],
      parsePushPorcelain(captured('porcelain-rejected-non-ff-with-landed').stdout),
    );
    expect(policy.transientRejections).toEqual([]);
    const deleted = refOutcomes([planned('refs/heads/main'), planned('refs/heads/b2')], parsePushPorcelain(captured('porcelain-destination-deleted').stdout));
    expect(deleted.transientRejections.map((r) => r.dst)).toEqual(['refs/heads/main', 'refs/heads/b2']);
    expect(policy.refs.find((r) => r.dst === 'refs/heads/main')).toMatchObject({ status: 'rejected', detail: '[rejected] (non-fast-forward)' });
  });

  it('counts a planned ref git said nothing about as rejected, never as landed', () => {
    const { refs } = refOutcomes([planned('refs/heads/ghost')], []);
    expect(refs).toEqual([{ ref: 'refs/heads/ghost', dst: 'refs/heads/ghost', status: 'rejected', detail: 'git reported no status for this ref' }]);
  });

  it('calls a result partial as soon as one ref is rejected or dropped', () => {
    expect(
      resultOf([
        { ref: 'a', dst: 'a', status: 'new' },
        { ref: 'b', dst: 'b', status: 'up-to-date' },
      ]),
    ).toBe('ok');
    expect(resultOf([{ ref: 'a', dst: 'a', status: 'dropped' }])).toBe('partial');
    expect(resultOf([{ ref: 'a', dst: 'a', status: 'rejected' }])).toBe('partial');
    expect(resultOf([])).toBe('ok');
  });
});
