import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePushPorcelain, porcelainCompleted } from '../../../src/push/porcelain.js';
import { commitFile, git, initBare, makeWorkTree, writeHook } from '../../support/git.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { keep, runGit } from './git-capture.js';

const tempDir = useTempDirs();

/** A work tree with one commit on main, and an empty bare destination. */
function setup(): { root: string; work: string; dst: string; url: string } {
  const root = tempDir('refrelay-porcelain');
  const work = makeWorkTree(join(root, 'work'), 1);
  const dst = initBare(join(root, 'dst.git'));
  return { root, work, dst, url: `file://${dst}` };
}

async function push(s: ReturnType<typeof setup>, name: string, description: string, refspecs: string[]) {
  const run = await runGit(s.work, ['push', '--porcelain', '--', s.url, ...refspecs], description);
  keep(name, run, s.root);
  // git prints refs that failed last; compare in destination order.
  const refs = parsePushPorcelain(run.stdout).sort((a, b) => (a.dst < b.dst ? -1 : 1));
  return { run, refs: refs.map((r) => [r.flag, r.dst, r.summary, r.reason]) };
}

describe('git push --porcelain, as this machine prints it, parses into per-ref results', () => {
  it('reports a new branch and a new tag with "*"', async () => {
    const s = setup();
    const { run, refs } = await push(s, 'porcelain-new-branch-and-tag', 'two new refs', ['refs/heads/main:refs/heads/main', 'refs/heads/main:refs/tags/v1']);
    expect(run.exitCode).toBe(0);
    expect(porcelainCompleted(run.stdout)).toBe(true);
    expect(refs).toEqual([
      ['*', 'refs/heads/main', '[new branch]', undefined],
      ['*', 'refs/tags/v1', '[new tag]', undefined],
    ]);
  });

  it('reports a fast-forward with " " and an unchanged ref with "="', async () => {
    const s = setup();
    git(s.work, ['branch', 'b1']);
    await runGit(s.work, ['push', '-q', s.url, 'main', 'b1'], 'seed');
    commitFile(s.work, 'next.txt', 'next\n');
    const { run, refs } = await push(s, 'porcelain-fast-forward-and-up-to-date', 'main fast-forwards, b1 unchanged', [
      'refs/heads/main:refs/heads/main',
      'refs/heads/b1:refs/heads/b1',
    ]);
    expect(run.exitCode).toBe(0);
    expect(refs.map((r) => r[0])).toEqual(['=', ' ']);
    expect(refs[1]?.[2]).toMatch(/^[0-9a-f]+\.\.[0-9a-f]+$/);
  });

  it('reports a forced non-fast-forward update with "+" and "(forced update)"', async () => {
    const s = setup();
    commitFile(s.work, 'ahead.txt', 'ahead\n');
    await runGit(s.work, ['push', '-q', s.url, 'main'], 'seed');
    git(s.work, ['reset', '-q', '--hard', 'HEAD~1']);
    commitFile(s.work, 'other.txt', 'other\n');
    const { run, refs } = await push(s, 'porcelain-forced', 'main rewritten and force-pushed', ['+refs/heads/main:refs/heads/main']);
    expect(run.exitCode).toBe(0);
    expect(refs).toEqual([['+', 'refs/heads/main', expect.stringMatching(/\.\.\./), 'forced update']]);
  });

  it('reports a delete with "-" and an empty source', async () => {
    const s = setup();
    await runGit(s.work, ['push', '-q', s.url, 'main', 'main:refs/heads/b1'], 'seed');
    const { run } = await push(s, 'porcelain-delete', 'b1 deleted', [':refs/heads/b1']);
    expect(run.exitCode).toBe(0);
    expect(parsePushPorcelain(run.stdout)).toEqual([{ flag: '-', src: '', dst: 'refs/heads/b1', summary: '[deleted]' }]);
  });

  it('reports a non-fast-forward rejection with "!" while another ref lands, exit 1 and Done', async () => {
    const s = setup();
    commitFile(s.work, 'ahead.txt', 'ahead\n');
    await runGit(s.work, ['push', '-q', s.url, 'main'], 'seed');
    git(s.work, ['branch', 'old', 'HEAD~1']);
    const { run, refs } = await push(s, 'porcelain-rejected-non-ff-with-landed', 'main rewound without force, b2 new', [
      'refs/heads/old:refs/heads/main',
      'refs/heads/main:refs/heads/b2',
    ]);
    expect(run.exitCode).toBe(1);
    expect(porcelainCompleted(run.stdout)).toBe(true);
    expect(refs).toEqual([
      ['*', 'refs/heads/b2', '[new branch]', undefined],
      ['!', 'refs/heads/main', '[rejected]', 'non-fast-forward'],
    ]);
  });

  it('reports "(fetch first)" when the destination holds commits the source lacks', async () => {
    const s = setup();
    const other = makeWorkTree(join(s.root, 'other'), 2);
    await runGit(other, ['push', '-q', s.url, 'main'], 'seed from an unrelated history');
    const { run, refs } = await push(s, 'porcelain-rejected-fetch-first', 'destination main has commits the source never saw', [
      'refs/heads/main:refs/heads/main',
    ]);
    expect(run.exitCode).toBe(1);
    expect(refs).toEqual([['!', 'refs/heads/main', '[rejected]', 'fetch first']]);
  });

  it('reports every ref as "[remote rejected]" when pre-receive exits 1', async () => {
    const s = setup();
    writeHook(s.dst, 'pre-receive', '#!/bin/sh\necho "policy: pushes are frozen" >&2\nexit 1\n');
    const { run, refs } = await push(s, 'porcelain-pre-receive-declined', 'pre-receive exits 1', [
      'refs/heads/main:refs/heads/main',
      'refs/heads/main:refs/heads/b2',
    ]);
    expect(run.exitCode).toBe(1);
    expect(porcelainCompleted(run.stdout)).toBe(true);
    expect(refs.map((r) => [r[0], r[2], r[3]])).toEqual([
      ['!', '[remote rejected]', 'pre-receive hook declined'],
      ['!', '[remote rejected]', 'pre-receive hook declined'],
    ]);
  });

  it('reports one ref declined by the update hook while the other lands', async () => {
    const s = setup();
    writeHook(s.dst, 'update', '#!/bin/sh\ncase "$1" in refs/heads/frozen) echo "refs/heads/frozen is frozen" >&2; exit 1;; esac\nexit 0\n');
    const { run, refs } = await push(s, 'porcelain-update-hook-declined-one', 'update hook declines refs/heads/frozen', [
      'refs/heads/main:refs/heads/frozen',
      'refs/heads/main:refs/heads/main',
    ]);
    expect(run.exitCode).toBe(1);
    expect(refs).toEqual([
      ['!', 'refs/heads/frozen', '[remote rejected]', 'hook declined'],
      ['*', 'refs/heads/main', '[new branch]', undefined],
    ]);
  });

  it('reports "[up to date]" with "=" when nothing changed', async () => {
    const s = setup();
    await runGit(s.work, ['push', '-q', s.url, 'main'], 'seed');
    const { run, refs } = await push(s, 'porcelain-up-to-date', 'same push twice', ['refs/heads/main:refs/heads/main']);
    expect(run.exitCode).toBe(0);
    expect(refs).toEqual([['=', 'refs/heads/main', '[up to date]', undefined]]);
  });

  it('reports a remote that cannot lock a ref as "[remote rejected] (failed to update ref)"', async () => {
    const s = setup();
    await runGit(s.work, ['push', '-q', s.url, 'main'], 'seed');
    commitFile(s.work, 'next.txt', 'next\n');
    // A stale lock file is what a crashed or concurrent writer leaves behind.
    writeFileSync(join(s.dst, 'refs', 'heads', 'main.lock'), '');
    const { run, refs } = await push(s, 'porcelain-remote-lock-failed', 'refs/heads/main.lock exists on the destination', [
      'refs/heads/main:refs/heads/main',
      'refs/heads/main:refs/heads/b2',
    ]);
    expect(run.exitCode).toBe(1);
    expect(refs).toEqual([
      ['*', 'refs/heads/b2', '[new branch]', undefined],
      ['!', 'refs/heads/main', '[remote rejected]', 'failed to update ref'],
    ]);
    expect(run.stderr).toMatch(/cannot lock ref 'refs\/heads\/main'/);
  });

  it('reports every ref as "[remote rejected] (unable to migrate objects to permanent storage)" when the destination is deleted mid-push', async () => {
    const s = setup();
    // pre-receive runs after the pack is received and before the objects move out of quarantine:
    // the last moment the repository can vanish and still be answered for, ref by ref.
    writeHook(s.dst, 'pre-receive', '#!/bin/sh\nrm -rf "$(pwd -P)"\nexit 0\n');
    const { run, refs } = await push(s, 'porcelain-destination-deleted', 'the destination repository is deleted by pre-receive', [
      'refs/heads/main:refs/heads/main',
      'refs/heads/main:refs/heads/b2',
    ]);
    expect(run.exitCode).toBe(1);
    expect(porcelainCompleted(run.stdout)).toBe(true);
    expect(refs.map((r) => [r[0], r[2], r[3]])).toEqual([
      ['!', '[remote rejected]', 'unable to migrate objects to permanent storage'],
      ['!', '[remote rejected]', 'unable to migrate objects to permanent storage'],
    ]);
  });

  it('shows the object id as the source when an exact object id is pushed', async () => {
    const s = setup();
    const oid = git(s.work, ['rev-parse', 'HEAD']).trim();
    const { run } = await push(s, 'porcelain-object-id-source', 'pushing <oid>:<dst>, as GitPusher does', [`+${oid}:refs/heads/main`, `${oid}:refs/tags/v1`]);
    expect(run.exitCode).toBe(0);
    expect(parsePushPorcelain(run.stdout).map((r) => [r.src, r.dst])).toEqual([
      [oid, 'refs/heads/main'],
      [oid, 'refs/tags/v1'],
    ]);
  });
});
