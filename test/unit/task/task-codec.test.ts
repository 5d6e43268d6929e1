import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TaskFormatError } from '../../../src/errors.js';
import { FULL_SYNC_REF, decodeTask, encodeTask, type Task } from '../../../src/task/task.js';
import { fixturesDir } from '../../support/paths.js';

const invalidDir = join(fixturesDir, 'tasks', 'invalid');
const validDir = join(fixturesDir, 'tasks', 'valid');
const expectedErrors = JSON.parse(readFileSync(join(invalidDir, 'expected-errors.json'), 'utf8')) as Record<string, string>;

const task: Task = { project: 'platform/core', refs: ['refs/heads/main'], uri: 'ssh://replica.example.com/platform/core.git', remote: 'mirror' };

function decodeError(text: string): TaskFormatError {
  try {
    decodeTask(text);
  } catch (error) {
    if (error instanceof TaskFormatError) return error;
    throw error;
  }
  throw new Error(`decoded without error: ${text}`);
}

describe('encodeTask', () => {
  it('writes one line with a fixed key order and a version', () => {
    expect(encodeTask(task)).toBe(
      '{"version":1,"project":"platform/core","refs":["refs/heads/main"],"uri":"ssh://replica.example.com/platform/core.git","remote":"mirror"}\n',
    );
  });

  it('writes the canonical refs whatever order and duplicates the caller passed', () => {
    expect(encodeTask({ ...task, refs: ['refs/tags/v1', 'refs/heads/main', 'refs/tags/v1'] })).toBe(
      encodeTask({ ...task, refs: ['refs/heads/main', 'refs/tags/v1'] }),
    );
  });

  it('is the same whatever order the caller built the object in', () => {
    const reordered: Task = { remote: task.remote, uri: task.uri, refs: task.refs, project: task.project };
    expect(encodeTask(reordered)).toBe(encodeTask(task));
  });

  it('refuses to write a task no reader would accept', () => {
    expect(() => encodeTask({ ...task, refs: [] })).toThrow(TaskFormatError);
    expect(() => encodeTask({ ...task, project: '' })).toThrow('field "project" must be a non-empty string');
  });
});

describe('decodeTask', () => {
  it('reads back what encodeTask wrote', () => {
    const odd: Task = { project: 'a b/c', refs: ['refs/heads/x=y', 'refs/heads/"q"'], uri: `ssh://h/a b/"c"/it's=1.git`, remote: 'r "1"' };
    expect(decodeTask(encodeTask(odd))).toEqual({ ...odd, refs: ['refs/heads/"q"', 'refs/heads/x=y'] });
  });

  it('reads every valid fixture, including the forms Gerrit writes', () => {
    const decoded = Object.fromEntries(readdirSync(validDir).map((name) => [name, decodeTask(readFileSync(join(validDir, name), 'utf8'))]));
    const main = { project: 'platform/core', refs: ['refs/heads/main'], uri: 'ssh://replica.example.com/platform/core.git', remote: 'mirror' };
    expect(decoded).toEqual({
      'v1.json': { ...main, refs: ['refs/heads/main', 'refs/tags/v1'] },
      'gerrit-unversioned.json': main,
      'gerrit-legacy-ref.json': main,
      'unknown-fields.json': main,
      'full-sync.json': { ...main, refs: [FULL_SYNC_REF] },
    });
  });

  it('prefers refs over the legacy ref when a file has both', () => {
    const both = '{"project":"p","ref":"refs/heads/old","refs":["refs/heads/new"],"uri":"u","remote":"r"}';
    expect(decodeTask(both).refs).toEqual(['refs/heads/new']);
  });

  it('returns the canonical form, frozen, because listings cache and share it', () => {
    const decoded = decodeTask('{"project":"p","refs":["refs/b","refs/a","refs/b"],"uri":"u","remote":"r"}');
    expect(decoded.refs).toEqual(['refs/a', 'refs/b']);
    expect(Object.isFrozen(decoded)).toBe(true);
    expect(Object.isFrozen(decoded.refs)).toBe(true);
  });

  it.each(Object.entries(expectedErrors))('refuses %s with a precise reason', (file, message) => {
    const error = decodeError(readFileSync(join(invalidDir, file), 'utf8'));
    expect(error.code).toBe('TASK_FORMAT');
    expect(error.message.startsWith(message)).toBe(true);
  });

  it('covers every invalid fixture with an expected message', () => {
    const files = readdirSync(invalidDir)
      .filter((name) => name !== 'expected-errors.json')
      .sort();
    expect(files).toEqual(Object.keys(expectedErrors).sort());
  });

  it('never quotes the file: a refusal ends up in logs and quarantine records', () => {
    const error = decodeError('root:$6$secret-hash:19000:0:99999:7:::');
    expect(error.message).toBe('invalid JSON (truncated or damaged)');
    expect(decodeError('{"project" "p"}').message).toBe('invalid JSON (truncated or damaged) at byte 11');
    expect(error.cause).toBeUndefined();
  });

  it('names the newer version in the refusal, so an operator knows to upgrade', () => {
    expect(decodeError('{"version":7,"project":"p"}').message).toContain('written by a newer refrelay (version 7)');
  });
});
