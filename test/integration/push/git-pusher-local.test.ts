import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FULL_SYNC_REF } from '../../../src/task/task.js';
import { DROPPED_NOT_DELETED } from '../../../src/push/push-plan.js';
import { commitFile, git, initBare, refsOf, writeHook } from '../../support/git.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { groupAlive, hermeticPusher, makeSource, pick, remoteConfig, waitForProcess } from './push-fixtures.js';

const tempDir = useTempDirs();
const pusher = hermeticPusher();

function setup(branches: string[] = ['b1']) {
  const root = tempDir('refrelay-push');
  const source = makeSource(root, branches);
  const dst = initBare(join(root, 'dst.git'));
  return { root, source, dst };
}

describe('GitPusher to local destinations (file:// and plain paths)', () => {
  it('pushes claimed refs to a file:// URL and to a plain path so the destinations hold the same objects', async () => {
    const { root, source, dst } = setup();
    const refs = ['refs/heads/main', 'refs/heads/b1'];
    const viaFile = await pusher.push({ remote: remoteConfig(), uri: `file://${dst}`, localRepo: source.bare, refs });
    expect(viaFile).toMatchObject({ result: 'ok', createdRepository: false });
    expect(viaFile.refs.map((r) => [r.ref, r.status])).toEqual([
      ['refs/heads/b1', 'new'],
      ['refs/heads/main', 'new'],
    ]);
    expect(refsOf(dst)).toEqual(pick(source.refs(), refs));
    // --progress: remote.timeout is an idle limit, and git reports progress into a pipe only when asked.
    expect(viaFile.argv.slice(0, 7)).toEqual(['git', 'push', '--porcelain', '--no-verify', '--progress', '--', `file://${dst}`]);

    const plain = initBare(join(root, 'plain.git'));
    const viaPath = await pusher.push({ remote: remoteConfig(), uri: plain, localRepo: source.bare, refs });
    expect(viaPath.result).toBe('ok');
    expect(refsOf(plain)).toEqual(pick(source.refs(), refs));
  });

  it('reports fast-forwards as updated and rewritten history as forced, and the destination follows', async () => {
    const { source, dst } = setup();
    const remote = remoteConfig();
    await pusher.push({ remote, uri: dst, localRepo: source.bare, refs: ['refs/heads/main', 'refs/heads/b1'] });
    commitFile(source.work, 'ff.txt', 'ff\n');
    git(source.work, ['checkout', '-q', 'b1']);
    git(source.work, ['commit', '-q', '--amend', '-m', 'rewritten']);
    git(source.work, ['checkout', '-q', 'main']);
    source.publish();
    const outcome = await pusher.push({ remote, uri: dst, localRepo: source.bare, refs: ['refs/heads/main', 'refs/heads/b1'] });
    expect(outcome.result).toBe('ok');
    expect(outcome.refs.map((r) => [r.ref, r.status])).toEqual([
      ['refs/heads/b1', 'forced'],
      ['refs/heads/main', 'updated'],
    ]);
    expect(refsOf(dst)).toEqual(source.refs());
  });

  it('deletes a ref removed locally when the remote mirrors, and drops it (kept on the destination) when it does not', async () => {
    const { source, dst } = setup();
    const remote = remoteConfig({ push: ['refs/heads/*:refs/heads/*'] });
    await pusher.push({ remote, uri: dst, localRepo: source.bare, refs: ['refs/heads/main', 'refs/heads/b1'] });
    git(source.work, ['branch', '-q', '-D', 'b1']);
    source.publish();

    const dropped = await pusher.push({ remote, uri: dst, localRepo: source.bare, refs: ['refs/heads/b1', 'refs/heads/main'] });
    expect(dropped.result).toBe('partial');
    expect(dropped.refs).toEqual([
      { ref: 'refs/heads/b1', dst: 'refs/heads/b1', status: 'dropped', detail: DROPPED_NOT_DELETED },
      { ref: 'refs/heads/main', dst: 'refs/heads/main', status: 'up-to-date', detail: '[up to date]' },
    ]);
    expect(refsOf(dst).has('refs/heads/b1')).toBe(true);

    const deleted = await pusher.push({ remote: { ...remote, mirror: true }, uri: dst, localRepo: source.bare, refs: ['refs/heads/b1'] });
    expect(deleted.result).toBe('ok');
    expect(deleted.refs.map((r) => r.status)).toEqual(['deleted']);
    expect(refsOf(dst)).toEqual(source.refs());
  });

  it('lands the other refs when one is rejected as non-fast-forward (partial)', async () => {
    const { source, dst } = setup();
    const remote = remoteConfig({ push: ['refs/heads/*:refs/heads/*'] });
    const theirs = join(tempDir('refrelay-theirs'), 'w');
    git('/', ['clone', '-q', source.bare, theirs]);
    commitFile(theirs, 'theirs.txt', 'diverged on the destination\n');
    git(theirs, ['push', '-q', dst, 'HEAD:refs/heads/main']);
    commitFile(source.work, 'ours.txt', 'ours\n');
    source.publish();

    const outcome = await pusher.push({ remote, uri: dst, localRepo: source.bare, refs: ['refs/heads/main', 'refs/heads/b1'] });
    expect(outcome.result).toBe('partial');
    expect(outcome.failure).toBeUndefined();
    expect(outcome.refs).toEqual([
      { ref: 'refs/heads/b1', dst: 'refs/heads/b1', status: 'new', detail: '[new branch]' },
      // "fetch first" is git's non-fast-forward wording when the destination has commits we lack.
      { ref: 'refs/heads/main', dst: 'refs/heads/main', status: 'rejected', detail: '[rejected] (fetch first)' },
    ]);
    expect(refsOf(dst).get('refs/heads/b1')).toBe(source.refs().get('refs/heads/b1'));
    expect(refsOf(dst).get('refs/heads/main')).not.toBe(source.refs().get('refs/heads/main'));
  });

  it('reports hook declines per ref: pre-receive declines the whole push, which is split to deliver the refs it accepts; the update hook declines one ref', async () => {
    const { source, dst } = setup(['b1', 'frozen']);
    writeHook(dst, 'pre-receive', '#!/bin/sh\necho "maintenance window" >&2\nexit 1\n');
    const all = await pusher.push({ remote: remoteConfig(), uri: dst, localRepo: source.bare, refs: ['refs/heads/main', 'refs/heads/b1'] });
    expect(all.result).toBe('partial');
    expect(all.refs.map((r) => [r.status, r.detail])).toEqual([
      ['rejected', '[remote rejected] (pre-receive hook declined)'],
      ['rejected', '[remote rejected] (pre-receive hook declined)'],
    ]);
    expect(refsOf(dst).size).toBe(0);

    // Declines only pushes that carry refs/heads/b1: split, main lands on its own.
    writeHook(dst, 'pre-receive', '#!/bin/sh\ngrep -q " refs/heads/b1$" && exit 1\nexit 0\n');
    const split = await pusher.push({ remote: remoteConfig(), uri: dst, localRepo: source.bare, refs: ['refs/heads/main', 'refs/heads/b1'] });
    expect(split.refs.map((r) => [r.ref, r.status, r.detail])).toEqual([
      ['refs/heads/b1', 'rejected', '[remote rejected] (pre-receive hook declined)'],
      ['refs/heads/main', 'new', '[new branch]'],
    ]);
    expect([...refsOf(dst).keys()]).toEqual(['refs/heads/main']);
    git(dst, ['update-ref', '-d', 'refs/heads/main']);

    writeHook(dst, 'pre-receive', '#!/bin/sh\nexit 0\n');
    writeHook(dst, 'update', '#!/bin/sh\n[ "$1" = refs/heads/frozen ] && { echo "frozen" >&2; exit 1; }\nexit 0\n');
    const one = await pusher.push({ remote: remoteConfig(), uri: dst, localRepo: source.bare, refs: ['refs/heads/main', 'refs/heads/frozen'] });
    expect(one.result).toBe('partial');
    expect(one.refs.map((r) => [r.ref, r.status])).toEqual([
      ['refs/heads/frozen', 'rejected'],
      ['refs/heads/main', 'new'],
    ]);
    expect([...refsOf(dst).keys()]).toEqual(['refs/heads/main']);
  });

  it('marks a ref the destination cannot lock as refused for now while the others land, and fails the push as transient when nothing else was taken', async () => {
    const { source, dst } = setup();
    await pusher.push({ remote: remoteConfig(), uri: dst, localRepo: source.bare, refs: ['refs/heads/main'] });
    commitFile(source.work, 'next.txt', 'next\n');
    source.publish();
    writeFileSync(join(dst, 'refs', 'heads', 'main.lock'), '');
    const outcome = await pusher.push({ remote: remoteConfig(), uri: dst, localRepo: source.bare, refs: ['refs/heads/main', 'refs/heads/b1'] });
    expect(outcome.result).toBe('partial');
    expect(outcome.failure).toBeUndefined();
    expect(outcome.refs.map((r) => [r.ref, r.status, r.transient ?? false])).toEqual([
      ['refs/heads/b1', 'new', false],
      ['refs/heads/main', 'rejected', true],
    ]);

    const alone = await pusher.push({ remote: remoteConfig(), uri: dst, localRepo: source.bare, refs: ['refs/heads/main'] });
    expect(alone).toMatchObject({ result: 'failed', failure: { kind: 'transient', retryable: true } });
    expect(alone.failure?.message).toContain('refs/heads/main');
    expect(alone.failure?.stderrTail).toContain('cannot lock ref');
  });

  it('retries (transient failure) a push whose destination is deleted under it, and the retry creates it again', async () => {
    const { source, dst } = setup();
    writeHook(dst, 'pre-receive', '#!/bin/sh\nrm -rf "$(pwd -P)"\nexit 0\n');
    const refs = ['refs/heads/main', 'refs/heads/b1'];
    const outcome = await pusher.push({ remote: remoteConfig(), uri: dst, localRepo: source.bare, refs });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'transient', retryable: true } });
    expect(outcome.failure?.message).toContain('unable to migrate objects to permanent storage');
    expect(existsSync(dst)).toBe(false);

    const retry = await pusher.push({ remote: remoteConfig({ createMissingRepositories: true }), uri: dst, localRepo: source.bare, refs });
    expect(retry).toMatchObject({ result: 'ok', createdRepository: true });
    expect(refsOf(dst)).toEqual(pick(source.refs(), refs));
  });

  it('creates a missing file:// or plain-path destination when allowed, and says missing-repository otherwise', async () => {
    const { root, source } = setup();
    const refs = ['refs/heads/main', 'refs/heads/b1'];
    const absent = join(root, 'new', 'deep', 'dst.git');
    const refused = await pusher.push({ remote: remoteConfig(), uri: `file://${absent}`, localRepo: source.bare, refs });
    expect(refused).toMatchObject({ result: 'failed', createdRepository: false, failure: { kind: 'missing-repository', retryable: true } });
    expect(existsSync(absent)).toBe(false);

    const remote = remoteConfig({ createMissingRepositories: true });
    const created = await pusher.push({ remote, uri: `file://${absent}`, localRepo: source.bare, refs });
    expect(created).toMatchObject({ result: 'ok', createdRepository: true });
    expect(refsOf(absent)).toEqual(pick(source.refs(), refs));

    const plain = join(root, 'plain', 'dst.git');
    const viaPath = await pusher.push({ remote, uri: plain, localRepo: source.bare, refs });
    expect(viaPath).toMatchObject({ result: 'ok', createdRepository: true });
    expect(refsOf(plain)).toEqual(pick(source.refs(), refs));
  });

  it('fills a destination it created with every ref the refspecs match, not only the claimed ones', async () => {
    const { root, source } = setup(['b1', 'b2']);
    git(source.work, ['tag', 'v1']);
    source.publish();
    const absent = join(root, 'created.git');
    const remote = remoteConfig({ createMissingRepositories: true });
    // One claimed update, and one claimed delete of a ref the new repository never had.
    const outcome = await pusher.push({ remote, uri: absent, localRepo: source.bare, refs: ['refs/heads/b1', 'refs/heads/gone'] });
    expect(outcome).toMatchObject({ result: 'ok', createdRepository: true });
    expect(refsOf(absent)).toEqual(source.refs());
    expect(outcome.refs.map((r) => [r.ref, r.status])).toEqual([
      ['refs/heads/gone', 'up-to-date'],
      ['refs/heads/b1', 'new'],
      ['refs/heads/b2', 'new'],
      ['refs/heads/main', 'new'],
      ['refs/tags/v1', 'new'],
    ]);
  });

  it('never turns an existing non-repository directory into a repository', async () => {
    const { root, source } = setup();
    const notRepo = join(root, 'docs');
    mkdirSync(notRepo);
    writeFileSync(join(notRepo, 'important.txt'), 'keep me');
    const outcome = await pusher.push({
      remote: remoteConfig({ createMissingRepositories: true }),
      uri: notRepo,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'permanent', retryable: false } });
    expect(existsSync(join(notRepo, 'HEAD'))).toBe(false);
  });

  it('fails with local-missing, not retryable, when the local repository does not exist or is not one', async () => {
    const { root, dst } = setup();
    for (const localRepo of [join(root, 'nope.git'), tempDir('refrelay-empty')]) {
      const outcome = await pusher.push({ remote: remoteConfig(), uri: dst, localRepo, refs: ['refs/heads/main'] });
      expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'local-missing', retryable: false } });
    }
  });

  it('reports a git binary that cannot be started as permanent', async () => {
    const { source, dst } = setup();
    const outcome = await hermeticPusher({}, { git: '/nonexistent/git' }).push({
      remote: remoteConfig(),
      uri: dst,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'permanent', retryable: false } });
    expect(outcome.failure?.message).toContain('could not run /nonexistent/git');
  });

  it('full sync with mirror pushes every covered ref and deletes the destination refs that have no source', async () => {
    const { source, dst } = setup(['b1', 'b2']);
    git(source.work, ['tag', 'v1']);
    source.publish();
    git(source.bare, ['push', '-q', dst, 'refs/heads/main:refs/heads/stale', 'refs/heads/main:refs/heads/main']);
    const remote = remoteConfig({ mirror: true });
    const outcome = await pusher.push({ remote, uri: `file://${dst}`, localRepo: source.bare, refs: [FULL_SYNC_REF] });
    expect(outcome.result).toBe('ok');
    expect(outcome.refs.map((r) => [r.dst, r.status]).sort()).toEqual([
      ['refs/heads/b1', 'new'],
      ['refs/heads/b2', 'new'],
      ['refs/heads/main', 'up-to-date'],
      ['refs/heads/stale', 'deleted'],
      ['refs/tags/v1', 'new'],
    ]);
    expect(refsOf(dst)).toEqual(source.refs());
  });

  it('splits more than 2,000 refspecs into several pushes and merges their results', async () => {
    const { source, dst } = setup();
    const head = source.refs().get('refs/heads/main') as string;
    const names = Array.from({ length: 2050 }, (_, n) => `refs/changes/${String(n % 100).padStart(2, '0')}/${n}/1`);
    git(source.bare, ['update-ref', '--stdin'], { input: names.map((name) => `create ${name} ${head}\n`).join('') });
    const remote = remoteConfig({ push: ['+refs/*:refs/*'] });
    const outcome = await pusher.push({ remote, uri: dst, localRepo: source.bare, refs: [FULL_SYNC_REF] });
    expect(outcome.result).toBe('ok');
    expect(outcome.refs).toHaveLength(2052);
    expect(outcome.refs.every((r) => r.status === 'new')).toBe(true);
    // argv is the last push's: the 52 refs left after the first 2,000.
    expect(outcome.argv.filter((arg) => arg.includes(':refs/'))).toHaveLength(52);
    expect(refsOf(dst)).toEqual(source.refs());

    const tiny = hermeticPusher({}, { maxRefspecsPerPush: 2 });
    const other = initBare(join(tempDir('refrelay-chunks'), 'd.git'));
    const again = await tiny.push({
      remote,
      uri: other,
      localRepo: source.bare,
      refs: ['refs/heads/main', 'refs/heads/b1', names[0] as string, 'refs/heads/gone'],
    });
    expect(again.refs.map((r) => [r.ref, r.status])).toEqual([
      ['refs/changes/00/0/1', 'new'],
      ['refs/heads/b1', 'new'],
      ['refs/heads/gone', 'deleted'],
      ['refs/heads/main', 'new'],
    ]);
  });

  it('hands git progress lines to onProgress while pushing', async () => {
    const { source, dst } = setup();
    const lines: string[] = [];
    const outcome = await pusher.push({
      remote: remoteConfig(),
      uri: dst,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
      onProgress: (line) => lines.push(line),
    });
    expect(outcome.result).toBe('ok');
    expect(outcome.argv).toContain('--progress');
    expect(lines.some((line) => /^Writing objects: +100%/.test(line))).toBe(true);
  });

  it('does not start git at all when the signal is already aborted', async () => {
    const { source, dst } = setup();
    const outcome = await pusher.push({ remote: remoteConfig(), uri: dst, localRepo: source.bare, refs: ['refs/heads/main'], signal: AbortSignal.abort() });
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'aborted', retryable: false } });
    expect(refsOf(dst).size).toBe(0);
  });

  it('stops a push when the caller aborts: git and everything it started are gone', async () => {
    const { source, dst } = setup();
    writeHook(dst, 'pre-receive', '#!/bin/sh\nsleep 600\n');
    const controller = new AbortController();
    const started = Date.now();
    const pending = pusher.push({
      remote: remoteConfig({ timeoutMs: 0 }),
      uri: dst,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
      signal: controller.signal,
    });
    const git = await waitForProcess((p) => p.args.startsWith('git push --porcelain') && p.args.includes(dst));
    await waitForProcess((p) => p.pgid === git.pgid && /^sleep 600/.test(p.args));
    controller.abort();
    const outcome = await pending;
    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'aborted', retryable: false } });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(git.pgid).toBe(git.pid);
    expect(groupAlive(git.pgid)).toBe(false);
  });
});
