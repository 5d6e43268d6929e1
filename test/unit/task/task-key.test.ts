import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FULL_SYNC_REF, canonicalTask, encodeTask, taskKey, uriKey, type Task } from '../../../src/task/task.js';

const task: Task = { project: 'p', refs: ['refs/heads/main'], uri: 'ssh://h/p.git', remote: 'mirror' };
const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex');

describe('canonicalTask', () => {
  it('sorts refs by code unit, not by locale, and removes duplicates', () => {
    const canonical = canonicalTask({ ...task, refs: ['refs/heads/b', 'refs/heads/B', 'refs/heads/a', 'refs/heads/b', 'refs/heads/ä'] });
    expect(canonical.refs).toEqual(['refs/heads/B', 'refs/heads/a', 'refs/heads/b', 'refs/heads/ä']);
  });

  it('collapses a full sync to exactly the full-sync marker', () => {
    expect(canonicalTask({ ...task, refs: ['refs/heads/x', FULL_SYNC_REF, 'refs/tags/y'] }).refs).toEqual([FULL_SYNC_REF]);
  });

  it('does not change the task it was given', () => {
    const refs = ['refs/b', 'refs/a'];
    canonicalTask({ ...task, refs });
    expect(refs).toEqual(['refs/b', 'refs/a']);
  });
});

describe('taskKey and uriKey', () => {
  it('is the sha1 of the canonical encoding', () => {
    expect(taskKey(task)).toBe(sha1(encodeTask(task)));
    expect(taskKey(task)).toMatch(/^[0-9a-f]{40}$/);
  });

  it('is stable across releases (a changed key would orphan every queued file)', () => {
    expect(taskKey(task)).toBe(sha1('{"version":1,"project":"p","refs":["refs/heads/main"],"uri":"ssh://h/p.git","remote":"mirror"}\n'));
    expect(uriKey('ssh://h/p.git')).toBe(sha1('ssh://h/p.git'));
  });

  it('ignores ref order and duplicates', () => {
    const a = { ...task, refs: ['refs/heads/a', 'refs/heads/b'] };
    const b = { ...task, refs: ['refs/heads/b', 'refs/heads/a', 'refs/heads/b'] };
    expect(taskKey(a)).toBe(taskKey(b));
  });

  it('differs for every field: project, refs, uri, remote', () => {
    const keys = new Set([
      taskKey(task),
      taskKey({ ...task, project: 'q' }),
      taskKey({ ...task, refs: ['refs/heads/other'] }),
      taskKey({ ...task, refs: ['refs/heads/main', 'refs/heads/other'] }),
      taskKey({ ...task, uri: 'https://h/p.git' }),
      taskKey({ ...task, remote: 'other' }),
    ]);
    expect(keys.size).toBe(6);
  });

  it('cannot be fooled by field values that contain separators', () => {
    expect(taskKey({ ...task, project: 'a', remote: 'b\nc' })).not.toBe(taskKey({ ...task, project: 'a\nb', remote: 'c' }));
  });
});
