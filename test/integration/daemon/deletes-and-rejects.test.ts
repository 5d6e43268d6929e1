import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { uriKey } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { appSource, commitFile, git, initBare, refsOf, writeHook } from '../../support/git.js';
import { RefrelayNode, storeDir, writeConfig } from '../../support/refrelay-node.js';
import { namesIn, readUriStateFile, waitingTaskNames } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

interface Setup {
  root: string;
  store: string;
  source: string;
  work: string;
  config: string;
  dest(remote: string): string;
}

/**
 * Source `app` with main (2 commits) and feature; one destination per remote, seeded with the
 * source's branches as they are now (as an earlier replication left them).
 */
function setup(label: string, remotes: Record<string, string[]>, replication: string[] = []): Setup {
  const root = tempDir(label);
  const { store, base, source, work } = appSource(root);
  const dest = (remote: string): string => join(root, `dest-${remote}`, 'app.git');
  const lines = [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 100ms',
    ...replication.map((line) => `  ${line}`),
  ];
  for (const [name, settings] of Object.entries(remotes)) {
    initBare(dest(name));
    git(source, ['push', '-q', dest(name), 'refs/heads/*:refs/heads/*']);
    lines.push(`[remote "${name}"]`, `  url = ${join(root, `dest-${name}`)}/\${name}.git`, '  replicationDelay = 0', ...settings.map((line) => `  ${line}`));
  }
  const config = writeConfig(join(root, 'replication.config'), lines);
  return { root, store, source, work, config, dest };
}

function enqueue(s: Setup, refs: string[]): string {
  const result = runCli(['enqueue', '--config', s.config, '--project', 'app', ...refs.flatMap((ref) => ['--ref', ref])]);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.stdout;
}

async function drain(s: Setup): Promise<{ node: RefrelayNode; code: number | null }> {
  const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1', drain: true });
  nodes.push(node);
  const { code } = await node.exited;
  return { node, code };
}

function expectStoreEmpty(s: Setup): void {
  expect(waitingTaskNames(s.store)).toEqual([]);
  expect(namesIn(storeDir(s.store, 'running'))).toEqual([]);
  expect(namesIn(storeDir(s.store, 'failed'))).toEqual([]);
}

describe('deleted, forced and rejected refs', () => {
  it('a branch deleted locally is deleted on the destination by a mirror remote and by a forced refspec', async () => {
    const s = setup('refrelay-delete', { mirror: ['mirror = true'], forced: ['push = +refs/heads/*:refs/heads/*'] });
    expect(refsOf(s.dest('mirror')).has('refs/heads/feature')).toBe(true);
    git(s.source, ['update-ref', '-d', 'refs/heads/feature']);
    expect(enqueue(s, ['refs/heads/feature'])).toBe('refrelay: queued 2 tasks for app\n');

    const { node, code } = await drain(s);
    expect(code).toBe(0);
    expect(node.problems()).toEqual([]);
    expect(refsOf(s.dest('mirror'))).toEqual(refsOf(s.source));
    expect(refsOf(s.dest('forced'))).toEqual(refsOf(s.source));
    expect(refsOf(s.dest('forced')).has('refs/heads/feature')).toBe(false);
    const pushed = node.logs().filter((line) => line.msg === 'pushed');
    expect(pushed.map((line) => [line.remote, line.outcomes, line.result]).sort()).toEqual([
      ['forced', { deleted: 1 }, 'ok'],
      ['mirror', { deleted: 1 }, 'ok'],
    ]);
    expectStoreEmpty(s);
  });

  it('without mirror and with a non-forced refspec a deleted branch stays on the destination, the push reports it dropped, and the other refs land', async () => {
    const s = setup('refrelay-dropped', { plain: ['push = refs/heads/*:refs/heads/*'] });
    const featureBefore = refsOf(s.dest('plain')).get('refs/heads/feature');
    git(s.source, ['update-ref', '-d', 'refs/heads/feature']);
    commitFile(s.work, 'file3.txt', 'three\n');
    git(s.work, ['push', '-q', s.source, 'main']);
    expect(enqueue(s, ['refs/heads/feature', 'refs/heads/main'])).toBe('refrelay: queued 1 task for app\n');

    const { node, code } = await drain(s);
    // Dropping a delete the config does not allow is not a failure: nothing is parked, exit 0.
    expect(code).toBe(0);
    expect(node.problems()).toEqual([]);
    const dest = refsOf(s.dest('plain'));
    expect(dest.get('refs/heads/feature')).toBe(featureBefore);
    expect(dest.get('refs/heads/main')).toBe(refsOf(s.source).get('refs/heads/main'));
    const pushed = node.logs().filter((line) => line.msg === 'pushed');
    expect(pushed).toHaveLength(1);
    expect(pushed[0]).toMatchObject({ remote: 'plain', refs: 2, outcomes: { dropped: 1, updated: 1 }, result: 'partial' });
    expectStoreEmpty(s);
  });

  it('a branch whose history was rewritten locally lands on the destination through a + refspec', async () => {
    const s = setup('refrelay-forced', { forced: ['push = +refs/heads/*:refs/heads/*'] });
    const oldMain = refsOf(s.dest('forced')).get('refs/heads/main');
    git(s.work, ['reset', '-q', '--hard', 'HEAD~1']);
    const rewritten = commitFile(s.work, 'rewritten.txt', 'rewritten\n');
    git(s.work, ['push', '-q', '--force', s.source, 'main']);
    // Not a fast-forward: the destination's main is not an ancestor of the new one.
    expect(git(s.source, ['merge-base', oldMain!, rewritten]).trim()).not.toBe(oldMain);
    expect(enqueue(s, ['refs/heads/main'])).toBe('refrelay: queued 1 task for app\n');

    const { node, code } = await drain(s);
    expect(code).toBe(0);
    expect(node.problems()).toEqual([]);
    expect(refsOf(s.dest('forced')).get('refs/heads/main')).toBe(rewritten);
    expect(refsOf(s.dest('forced'))).toEqual(refsOf(s.source));
    expect(
      node
        .logs()
        .filter((line) => line.msg === 'pushed')
        .map((line) => line.outcomes),
    ).toEqual([{ forced: 1 }]);
    expectStoreEmpty(s);
  });

  it("a ref the destination rejects as non-fast-forward is parked in failed/<uriKey>/ with git's reason, the other refs of the push land, --drain exits 1 and status counts it", async () => {
    const s = setup('refrelay-rejected', { plain: ['push = refs/heads/*:refs/heads/*', 'push = refs/tags/*:refs/tags/*'] });
    const destMainBefore = refsOf(s.dest('plain')).get('refs/heads/main');
    // The destination's main and the local main diverge: local history was rewritten.
    git(s.work, ['reset', '-q', '--hard', 'HEAD~1']);
    commitFile(s.work, 'rewritten.txt', 'rewritten\n');
    git(s.work, ['push', '-q', '--force', s.source, 'main']);
    // The other refs of the same push: a fast-forward, a new branch and a tag.
    git(s.work, ['checkout', '-q', 'feature']);
    commitFile(s.work, 'feature2.txt', 'feature two\n');
    git(s.work, ['branch', 'next']);
    git(s.work, ['tag', 'v1']);
    git(s.work, ['push', '-q', s.source, 'feature', 'next', 'v1']);
    const refs = ['refs/heads/feature', 'refs/heads/main', 'refs/heads/next', 'refs/tags/v1'];
    expect(enqueue(s, refs)).toBe('refrelay: queued 1 task for app\n');

    const { node, code } = await drain(s);
    expect(code).toBe(1);
    expect(node.logs().find((line) => line.msg === 'refrelay node stopped')).toMatchObject({ failedTasks: 1 });
    const source = refsOf(s.source);
    const dest = refsOf(s.dest('plain'));
    expect(dest.get('refs/heads/main')).toBe(destMainBefore);
    for (const ref of ['refs/heads/feature', 'refs/heads/next', 'refs/tags/v1']) expect(dest.get(ref), ref).toBe(source.get(ref));
    expect(
      node
        .logs()
        .filter((line) => line.msg === 'pushed')
        .map((line) => line.outcomes),
    ).toEqual([{ updated: 1, new: 2, rejected: 1 }]);

    const uri = `${join(s.root, 'dest-plain')}/app.git`;
    const key = uriKey(uri);
    expect(namesIn(storeDir(s.store, 'failed'))).toEqual([key]);
    const parked = namesIn(storeDir(s.store, 'failed', key));
    expect(parked).toHaveLength(2);
    const [taskName, reasonName] = parked as [string, string];
    expect(reasonName).toBe(`${taskName}.reason.json`);
    const task = JSON.parse(readFileSync(storeDir(s.store, 'failed', key, taskName), 'utf8'));
    expect(task).toMatchObject({ project: 'app', refs: ['refs/heads/main'], uri, remote: 'plain' });
    const reason = JSON.parse(readFileSync(storeDir(s.store, 'failed', key, reasonName), 'utf8'));
    expect(reason).toMatchObject({ reason: 'rejected by the destination: [rejected] (non-fast-forward)', refs: ['refs/heads/main'], nodeId: 'node-1' });
    expect(waitingTaskNames(s.store)).toEqual([]);
    expect(namesIn(storeDir(s.store, 'running'))).toEqual([]);

    const status = runCli(['status', '--json', '--config', s.config]);
    expect(status.status).toBe(0);
    const json = JSON.parse(status.stdout);
    expect(json.totals).toMatchObject({ waiting: 0, running: 0, failed: 1 });
    expect(json.remotes).toEqual([expect.objectContaining({ name: 'plain', failed: 1, uris: [expect.objectContaining({ uriKey: key, failed: 1 })] })]);
  });

  it('a pre-receive hook that declines one ref of a ten-ref push: the push is split, the nine others land, only that ref is parked, within ceil(log2 10) + 1 extra pushes', async () => {
    const s = setup('refrelay-split', { plain: ['push = refs/heads/*:refs/heads/*'] });
    const dest = s.dest('plain');
    // Counts every push that reaches the hook, declined or not.
    writeHook(
      dest,
      'pre-receive',
      [
        '#!/bin/sh',
        'input=$(cat)',
        'echo push >> "$GIT_DIR/pushes.log"',
        'if printf "%s\\n" "$input" | grep -q " refs/heads/bad$"; then echo "policy: refs/heads/bad is not allowed" >&2; exit 1; fi',
        'exit 0',
        '',
      ].join('\n'),
    );
    const names = ['bad', ...Array.from({ length: 9 }, (_, i) => `topic-${i + 1}`)];
    for (const name of names) git(s.source, ['update-ref', `refs/heads/${name}`, 'refs/heads/main']);
    expect(
      enqueue(
        s,
        names.map((name) => `refs/heads/${name}`),
      ),
    ).toBe('refrelay: queued 1 task for app\n');

    const { node, code } = await drain(s);
    expect(code).toBe(1);
    const source = refsOf(s.source);
    const landed = refsOf(dest);
    expect(landed.has('refs/heads/bad')).toBe(false);
    for (const name of names.slice(1)) expect(landed.get(`refs/heads/${name}`), name).toBe(source.get(`refs/heads/${name}`));
    const pushes = readFileSync(join(dest, 'pushes.log'), 'utf8').split('\n').filter(Boolean).length;
    expect(pushes).toBeGreaterThan(1);
    expect(pushes).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(10)) + 1);
    expect(
      node
        .logs()
        .filter((line) => line.msg === 'pushed')
        .map((line) => line.outcomes),
    ).toEqual([{ new: 9, rejected: 1 }]);

    const key = uriKey(`${join(s.root, 'dest-plain')}/app.git`);
    const parked = namesIn(storeDir(s.store, 'failed', key));
    expect(parked).toHaveLength(2);
    const [taskName, reasonName] = parked as [string, string];
    expect(JSON.parse(readFileSync(storeDir(s.store, 'failed', key, taskName), 'utf8'))).toMatchObject({ refs: ['refs/heads/bad'] });
    expect(JSON.parse(readFileSync(storeDir(s.store, 'failed', key, reasonName), 'utf8'))).toMatchObject({
      reason: 'rejected by the destination: [remote rejected] (pre-receive hook declined)',
      refs: ['refs/heads/bad'],
    });
    expect(waitingTaskNames(s.store)).toEqual([]);
  });

  it('a ref the destination cannot write on any attempt, while main lands, is parked after replication.refRejectionLimit attempts, and a later update of main goes out without backoff', async () => {
    // A backoff would hold the URI for 10 minutes: far past these tests' timeouts.
    const s = setup('refrelay-refused', { plain: ['push = refs/heads/*:refs/heads/*', 'replicationRetry = 10m', 'rescheduleDelay = 3s'] }, [
      'refRejectionLimit = 3',
    ]);
    const dest = s.dest('plain');
    // A stale lock file: git reports `[remote rejected] (failed to update ref)`, which looks passing.
    writeFileSync(join(dest, 'refs', 'heads', 'stuck.lock'), '');
    git(s.source, ['update-ref', 'refs/heads/stuck', 'refs/heads/main']);
    commitFile(s.work, 'file3.txt', 'three\n');
    git(s.work, ['push', '-q', s.source, 'main']);
    expect(enqueue(s, ['refs/heads/main', 'refs/heads/stuck'])).toBe('refrelay: queued 1 task for app\n');

    const first = await drain(s);
    expect(first.code).toBe(1);
    expect(refsOf(dest).get('refs/heads/main')).toBe(refsOf(s.source).get('refs/heads/main'));
    expect(refsOf(dest).has('refs/heads/stuck')).toBe(false);
    const pushed = first.node.logs().filter((line) => line.msg === 'pushed');
    expect(pushed.map((line) => line.outcomes)).toEqual([
      { updated: 1, rejected: 1 },
      { 'up-to-date': 1, rejected: 1 },
      { 'up-to-date': 1, rejected: 1 },
    ]);
    expect(first.node.logs().filter((line) => line.msg === 'retry scheduled')).toEqual([]);

    const key = uriKey(`${join(s.root, 'dest-plain')}/app.git`);
    const parked = namesIn(storeDir(s.store, 'failed', key));
    expect(parked).toHaveLength(2);
    const [taskName, reasonName] = parked as [string, string];
    expect(JSON.parse(readFileSync(storeDir(s.store, 'failed', key, taskName), 'utf8'))).toMatchObject({ refs: ['refs/heads/stuck'] });
    expect(JSON.parse(readFileSync(storeDir(s.store, 'failed', key, reasonName), 'utf8'))).toMatchObject({
      reason: 'rejected by the destination: [remote rejected] (failed to update ref) (refused 3 times in a row)',
    });
    expect(readUriStateFile(s.store, key)).toBeUndefined();

    commitFile(s.work, 'file4.txt', 'four\n');
    git(s.work, ['push', '-q', s.source, 'main']);
    expect(enqueue(s, ['refs/heads/main'])).toBe('refrelay: queued 1 task for app\n');
    const second = await drain(s);
    expect(second.code).toBe(0);
    expect(second.node.problems()).toEqual([]);
    expect(refsOf(dest).get('refs/heads/main')).toBe(refsOf(s.source).get('refs/heads/main'));
    expect(
      second.node
        .logs()
        .filter((line) => line.msg === 'pushed')
        .map((line) => line.outcomes),
    ).toEqual([{ updated: 1 }]);
  });
});
