import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FULL_SYNC_REF } from '../../../src/task/task.js';
import { commitFile, git, initBare } from '../../support/git.js';
import { freePort } from '../../support/free-port.js';
import { startGitDaemon, type GitDaemon } from '../../support/git-daemon.js';
import { hermeticPusher, lsRemote, makeSource, pick, remoteConfig } from './push-fixtures.js';

let scratch: string;
let daemon: GitDaemon;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'refrelay-daemon-'));
  daemon = await startGitDaemon(join(scratch, 'served'));
});

afterAll(async () => {
  await daemon?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const pusher = hermeticPusher();
let n = 0;

function setup() {
  const root = join(scratch, `case-${++n}`);
  const source = makeSource(root, ['b1']);
  const name = `case-${n}.git`;
  initBare(join(scratch, 'served', name));
  return { source, url: daemon.url(name), name };
}

describe('GitPusher to git:// (git daemon on loopback)', () => {
  it('pushes claimed refs so the destination advertises the same ids, then follows a forced update', async () => {
    const { source, url } = setup();
    const refs = ['refs/heads/main', 'refs/heads/b1'];
    const first = await pusher.push({ remote: remoteConfig(), uri: url, localRepo: source.bare, refs });
    expect(first.result).toBe('ok');
    expect(lsRemote(url)).toEqual(pick(source.refs(), refs));

    git(source.work, ['commit', '-q', '--amend', '-m', 'rewritten main']);
    source.publish();
    const forced = await pusher.push({ remote: remoteConfig(), uri: url, localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(forced.refs.map((r) => r.status)).toEqual(['forced']);
    expect(lsRemote(url)).toEqual(pick(source.refs(), refs));
  });

  it('full sync with mirror over git:// deletes the extra destination ref', async () => {
    const { source, url } = setup();
    await pusher.push({ remote: remoteConfig(), uri: url, localRepo: source.bare, refs: ['refs/heads/main', 'refs/heads/b1'] });
    git(source.work, ['branch', '-q', '-D', 'b1']);
    commitFile(source.work, 'more.txt', 'more\n');
    source.publish();
    const outcome = await pusher.push({ remote: remoteConfig({ mirror: true }), uri: url, localRepo: source.bare, refs: [FULL_SYNC_REF] });
    expect(outcome.result).toBe('ok');
    expect(outcome.refs.map((r) => [r.dst, r.status])).toEqual([
      ['refs/heads/b1', 'deleted'],
      ['refs/heads/main', 'updated'],
    ]);
    expect(lsRemote(url)).toEqual(source.refs());
  });

  it('refuses to create a missing repository over git://, permanently', async () => {
    const { source } = setup();
    const outcome = await pusher.push({
      remote: remoteConfig({ createMissingRepositories: true }),
      uri: daemon.url('absent.git'),
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    expect(outcome).toMatchObject({
      result: 'failed',
      createdRepository: false,
      failure: { kind: 'permanent', retryable: false, message: 'destination repository missing and git:// cannot create repositories' },
    });
  });

  it('reports a port nobody listens on as unreachable (retried), with the stderr tail', async () => {
    const { source } = setup();
    const port = await freePort();
    const outcome = await pusher.push({ remote: remoteConfig(), uri: `git://127.0.0.1:${port}/x.git`, localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'unreachable', retryable: true } });
    expect(outcome.failure?.message).toContain('Connection refused');
    expect(outcome.failure?.stderrTail).toContain('unable to connect to 127.0.0.1');
  });
});
