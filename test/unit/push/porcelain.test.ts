import { describe, expect, it } from 'vitest';
import { isTransientRejection, parsePushPorcelain, porcelainCompleted } from '../../../src/push/porcelain.js';
import { captured } from './captured.js';

describe('parsePushPorcelain on captured git output', () => {
  it('reads new branches and tags, ignoring the "To" and "Done" lines', () => {
    const run = captured('porcelain-new-branch-and-tag');
    expect(parsePushPorcelain(run.stdout)).toEqual([
      { flag: '*', src: 'refs/heads/main', dst: 'refs/heads/main', summary: '[new branch]' },
      { flag: '*', src: 'refs/heads/main', dst: 'refs/tags/v1', summary: '[new tag]' },
    ]);
    expect(porcelainCompleted(run.stdout)).toBe(true);
  });

  it('reads a fast-forward (" ") and an up-to-date ref ("=")', () => {
    const refs = parsePushPorcelain(captured('porcelain-fast-forward-and-up-to-date').stdout);
    expect(refs.map((r) => [r.flag, r.dst])).toEqual([
      ['=', 'refs/heads/b1'],
      [' ', 'refs/heads/main'],
    ]);
    expect(refs[0]?.summary).toBe('[up to date]');
    expect(refs[1]?.summary).toMatch(/^[0-9a-f]{7,}\.\.[0-9a-f]{7,}$/);
    expect(refs[1]?.reason).toBeUndefined();
  });

  it('reads a forced update with its "(forced update)" reason', () => {
    const [ref] = parsePushPorcelain(captured('porcelain-forced').stdout);
    expect(ref).toMatchObject({ flag: '+', dst: 'refs/heads/main', reason: 'forced update' });
    expect(ref?.summary).toMatch(/^[0-9a-f]+\.\.\.[0-9a-f]+$/);
  });

  it('reads a delete with an empty source', () => {
    expect(parsePushPorcelain(captured('porcelain-delete').stdout)).toEqual([{ flag: '-', src: '', dst: 'refs/heads/b1', summary: '[deleted]' }]);
  });

  it('reads a non-fast-forward rejection next to a ref that landed, and still sees Done', () => {
    const run = captured('porcelain-rejected-non-ff-with-landed');
    expect(run.exitCode).toBe(1);
    expect(porcelainCompleted(run.stdout)).toBe(true);
    expect(parsePushPorcelain(run.stdout)).toEqual([
      { flag: '*', src: 'refs/heads/main', dst: 'refs/heads/b2', summary: '[new branch]' },
      { flag: '!', src: 'refs/heads/old', dst: 'refs/heads/main', summary: '[rejected]', reason: 'non-fast-forward' },
    ]);
  });

  it('reads hook rejections as "[remote rejected]" with the hook named', () => {
    const pre = parsePushPorcelain(captured('porcelain-pre-receive-declined').stdout);
    expect(pre.map((r) => [r.flag, r.summary, r.reason])).toEqual([
      ['!', '[remote rejected]', 'pre-receive hook declined'],
      ['!', '[remote rejected]', 'pre-receive hook declined'],
    ]);
    const update = parsePushPorcelain(captured('porcelain-update-hook-declined-one').stdout);
    expect(update.find((r) => r.dst === 'refs/heads/frozen')).toMatchObject({ flag: '!', reason: 'hook declined' });
    expect(update.find((r) => r.dst === 'refs/heads/main')).toMatchObject({ flag: '*' });
  });

  it('reads "[up to date]"', () => {
    expect(parsePushPorcelain(captured('porcelain-up-to-date').stdout)).toEqual([
      { flag: '=', src: 'refs/heads/main', dst: 'refs/heads/main', summary: '[up to date]' },
    ]);
  });

  it('takes an object id as the source, as GitPusher pushes them', () => {
    const refs = parsePushPorcelain(captured('porcelain-object-id-source').stdout);
    expect(refs.every((r) => /^[0-9a-f]{40}$/.test(r.src))).toBe(true);
  });

  it('tells a remote lock failure (retry) from a policy rejection (park)', () => {
    const lock = parsePushPorcelain(captured('porcelain-remote-lock-failed').stdout).find((r) => r.flag === '!');
    expect(lock).toMatchObject({ summary: '[remote rejected]', reason: 'failed to update ref' });
    expect(isTransientRejection(lock!)).toBe(true);
    const policy = parsePushPorcelain(captured('porcelain-rejected-non-ff-with-landed').stdout).find((r) => r.flag === '!');
    expect(isTransientRejection(policy!)).toBe(false);
    // The destination repository deleted while the push was on its way: every ref, transient.
    const deleted = parsePushPorcelain(captured('porcelain-destination-deleted').stdout);
    expect(deleted.map((r) => [r.flag, r.reason, isTransientRejection(r)])).toEqual([
      ['!', 'unable to migrate objects to permanent storage', true],
      ['!', 'unable to migrate objects to permanent storage', true],
    ]);
  });

  it('finds no refs and no Done in output of a push that failed as a whole', () => {
    for (const name of ['failure-src-refspec-missing', 'failure-ssh-connection-refused']) {
      const run = captured(name);
      expect(parsePushPorcelain(run.stdout)).toEqual([]);
      expect(porcelainCompleted(run.stdout)).toBe(false);
    }
  });

  it('tolerates CRLF, blank lines and reasons with parentheses', () => {
    const text = 'To ssh://h/x\r\n\r\n!\trefs/heads/a:refs/heads/a\t[remote rejected] (hook declined (ticket 12))\r\nDone\r\n';
    expect(parsePushPorcelain(text)).toEqual([
      { flag: '!', src: 'refs/heads/a', dst: 'refs/heads/a', summary: '[remote rejected]', reason: 'hook declined (ticket 12)' },
    ]);
    expect(porcelainCompleted(text)).toBe(true);
  });
});
