import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/load-config.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { RefWatcher, WatchLimitError } from '../../../src/intake/ref-watcher.js';
import { SavedRefSnapshots } from '../../../src/intake/saved-ref-snapshots.js';
import { silentLog } from '../../../src/runtime/log.js';
import { TaskStore } from '../../../src/store/task-store.js';
import { git, initBare, makeWorkTree } from '../../support/git.js';
import { readWaitingTasks, waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const watchers: RefWatcher[] = [];
afterEach(async () => {
  for (const watcher of watchers.splice(0)) await watcher.stop();
});

function configFor(root: string, extra: string[] = []): ReplicationConfig {
  const entries = [
    ['replication', undefined, 'storepath', join(root, 'store')],
    ['replication', undefined, 'basepath', join(root, 'base')],
    ['replication', undefined, 'watchrepositories', 'true'],
    ['remote', 'mirror', 'url', `${join(root, 'dest')}/\${name}.git`],
    ['remote', 'mirror', 'push', '+refs/heads/*:refs/heads/*'],
    ...extra.map((line) => line.split('|')),
  ].map(([section, subsection, name, value]) => ({ section: section!, subsection: subsection || undefined, name: name!, value: value! }));
  const result = validateConfig(entries, 'test.config', 'host');
  if (result.config === undefined) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

/** `<project> <refs>` of each task waiting in the store at `root`, sorted. */
function waitingTasks(root: string): string[] {
  return readWaitingTasks(root)
    .map((task) => `${task.project as string} ${(task.refs as string[]).join(',')}`)
    .sort();
}

describe('ref watcher', () => {
  it('queues exactly the refs that plain git commands changed in repositories without hooks', async () => {
    const root = tempDir('refrelay-watch');
    const work = makeWorkTree(join(root, 'work'), 2);
    git(work, ['branch', 'keep']);
    git(work, ['branch', 'doomed']);
    const repos = ['a', 'team/b'].map((project) => initBare(join(root, 'base', `${project}.git`)));
    for (const repo of repos) git(work, ['push', '-q', repo, 'main', 'keep', 'doomed']);
    const config = configFor(root);
    const store = new TaskStore({ root: config.storePath, nodeId: 'n1' });
    const watcher = new RefWatcher({ config: () => config, store, log: silentLog });
    watchers.push(watcher);
    await watcher.start();
    expect(watcher.repositories).toBe(2);
    expect(waitingTasks(config.storePath)).toEqual([]); // the initial snapshot queues nothing

    git(work, ['commit', '-q', '--allow-empty', '-m', 'new']);
    git(work, ['push', '-q', repos[1]!, 'main', 'main:refs/heads/fresh']);
    git(repos[1]!, ['update-ref', '-d', 'refs/heads/doomed']);
    git(repos[0]!, ['tag', 'v1', 'main']); // not matched by the refspec: nothing to queue
    // Debounced scans may split the changes over several tasks; together they are exactly these refs.
    const refsQueued = (tasks: string[]): string[] => [...new Set(tasks.flatMap((line) => line.split(' ')[1]!.split(',')))].sort();
    for (const deadline = Date.now() + 10_000; refsQueued(waitingTasks(config.storePath)).length < 3;) {
      if (Date.now() > deadline) throw new Error(`the watcher queued only ${JSON.stringify(waitingTasks(config.storePath))} within 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const queued = waitingTasks(config.storePath).join('\n');
    expect(queued.split('\n').every((line) => line.startsWith('team/b '))).toBe(true);
    expect(refsQueued(queued.split('\n'))).toEqual(['refs/heads/doomed', 'refs/heads/fresh', 'refs/heads/main']);

    git(repos[0]!, ['pack-refs', '--all']); // packing changes no value: nothing new queued
    // Time for a debounced scan to queue something, which it must not.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(waitingTasks(config.storePath).join('\n')).toBe(queued);
  });

  it('queues a change again when the store failed to take it, though the repository does not change again', async () => {
    const root = tempDir('refrelay-watch-retry');
    const work = makeWorkTree(join(root, 'work'), 1);
    const repo = initBare(join(root, 'base', 'a.git'));
    git(work, ['push', '-q', repo, 'main']);
    const config = configFor(root);
    const real = new TaskStore({ root: config.storePath, nodeId: 'n1' });
    let failures = 0;
    const store = {
      createMany: (...args: Parameters<TaskStore['createMany']>) => {
        if (failures++ === 0) return Promise.reject(new Error('store write failed (EIO)'));
        return real.createMany(...args);
      },
    };
    const errors: unknown[] = [];
    const infos: string[] = [];
    const log = { ...silentLog, error: (fields: unknown) => void errors.push(fields), info: (_: unknown, message?: string) => void infos.push(message ?? '') };
    const watcher = new RefWatcher({ config: () => config, store, log });
    watchers.push(watcher);
    await watcher.start();

    git(work, ['commit', '-q', '--allow-empty', '-m', 'new']);
    git(work, ['push', '-q', repo, 'main']);
    for (const deadline = Date.now() + 15_000; waitingTasks(config.storePath).length === 0;) {
      if (Date.now() > deadline) throw new Error('the failed change was not queued again within 15 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(waitingTasks(config.storePath)).toEqual(['a refs/heads/main']);
    expect(errors).toEqual([{ project: 'a', err: 'Error: store write failed (EIO)', retryInMs: 2000 }]);
    for (const deadline = Date.now() + 5_000; !infos.includes('watcher queued the ref changes it could not queue before');) {
      if (Date.now() > deadline) throw new Error(`no recovery line within 5 s: ${JSON.stringify(infos)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  });

  it('queues at start what changed while no watcher ran, from the snapshot it saved, and a full sync where that file is cut short', async () => {
    const root = tempDir('refrelay-watch-saved');
    const work = makeWorkTree(join(root, 'work'), 1);
    const repos = ['a', 'b', 'c'].map((project) => initBare(join(root, 'base', `${project}.git`)));
    for (const repo of repos) git(work, ['push', '-q', repo, 'main']);
    const config = configFor(root);
    const store = new TaskStore({ root: config.storePath, nodeId: 'n1' });
    const saved = new SavedRefSnapshots(join(root, 'state'));
    const first = new RefWatcher({ config: () => config, store, log: silentLog, saved });
    await first.start();
    await first.stop();
    expect(waitingTasks(config.storePath)).toEqual([]);

    // While no watcher runs: a push to a, nothing to b, c's saved file cut short by a crash, and
    // a new repository d with a branch (no file of its own, in a folder that holds others).
    git(work, ['commit', '-q', '--allow-empty', '-m', 'while down']);
    git(work, ['push', '-q', repos[0]!, 'main', 'main:refs/heads/topic']);
    git(work, ['push', '-q', initBare(join(root, 'base', 'd.git')), 'main']);
    expect(readdirSync(join(root, 'state')).filter((name) => name.endsWith('.refs'))).toHaveLength(3);
    const [warnings, warned]: [string[], unknown[]] = [[], []];
    const log = { ...silentLog, warn: (fields: unknown, message?: string) => void (warnings.push(message ?? ''), warned.push(fields)) };
    const cPath = join(root, 'state', createHash('sha1').update(repos[2]!).digest('hex') + '.refs');
    writeFileSync(cPath, readFileSync(cPath, 'utf8').split('\n').slice(0, 2).join('\n'));

    const second = new RefWatcher({ config: () => config, store, log, saved });
    watchers.push(second);
    await second.start();
    expect(waitingTasks(config.storePath)).toEqual(['a refs/heads/main,refs/heads/topic', 'c ..all..', 'd ..all..']);
    expect(warnings).toEqual(['saved ref snapshots that cannot be trusted: a full sync of each repository']);
    expect(warned[0]).toEqual({ repositories: 1, projects: ['c'], reasons: ['cut short or not a ref snapshot'] });
    // The files now hold what the store took: a third start queues nothing more.
    await second.stop();
    let queuedByThird = 0;
    const counting = { createMany: (...args: Parameters<TaskStore['createMany']>) => ((queuedByThird += args[0].length), store.createMany(...args)) };
    const third = new RefWatcher({ config: () => config, store: counting, log: silentLog, saved });
    watchers.push(third);
    await third.start();
    expect(queuedByThird).toBe(0);
  });

  it('watches without saving snapshots when their folder is a link, which it never follows, and says so once', async () => {
    const root = tempDir('refrelay-watch-linked');
    const work = makeWorkTree(join(root, 'work'), 1);
    const repo = initBare(join(root, 'base', 'a.git'));
    git(work, ['push', '-q', repo, 'main']);
    const elsewhere = tempDir('refrelay-elsewhere');
    symlinkSync(elsewhere, join(root, 'state'));
    const config = configFor(root);
    const warnings: string[] = [];
    const log = { ...silentLog, warn: (_: unknown, message?: string) => void warnings.push(message ?? '') };
    const watcher = new RefWatcher({
      config: () => config,
      store: new TaskStore({ root: config.storePath, nodeId: 'n1' }),
      log,
      saved: new SavedRefSnapshots(join(root, 'state')),
    });
    watchers.push(watcher);
    await watcher.start();
    expect(warnings).toEqual(['ref snapshots are not saved: changes made while no daemon watches are not seen']);

    git(work, ['commit', '-q', '--allow-empty', '-m', 'new']);
    git(work, ['push', '-q', repo, 'main']);
    await waitUntil('the change queued', () => waitingTasks(config.storePath).length > 0, 15_000, 50);
    expect(waitingTasks(config.storePath)).toEqual(['a refs/heads/main']);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('refuses to start beyond watchRepositoriesLimit with a clear message', async () => {
    const root = tempDir('refrelay-watch-limit');
    for (const project of ['a', 'b', 'c']) initBare(join(root, 'base', `${project}.git`));
    const config = configFor(root, ['replication||watchrepositorieslimit|2']);
    const watcher = new RefWatcher({ config: () => config, store: new TaskStore({ root: config.storePath, nodeId: 'n1' }), log: silentLog });
    await expect(watcher.start()).rejects.toThrow(WatchLimitError);
    await expect(watcher.start()).rejects.toThrow(
      'watchRepositories: 3 repositories under basePath exceed replication.watchRepositoriesLimit (2); raise the limit if this machine has the inotify watches and memory for it, or install hooks instead (refrelay hook install --all)',
    );
  });
});

describe('refrelay daemon with watchRepositories', () => {
  it('replicates updates made by plain git commands in repositories without hooks, and those made while it was stopped', async () => {
    const { RefrelayNode, writeConfig } = await import('../../support/refrelay-node.js');
    const { refsOf } = await import('../../support/git.js');
    const root = tempDir('refrelay-watch-daemon');
    const source = initBare(join(root, 'base', 'app.git'));
    const work = makeWorkTree(join(root, 'work'), 1);
    git(work, ['push', '-q', source, 'main']);
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${join(root, 'base')}`,
      '  watchRepositories = true',
      `  spoolPath = ${join(root, 'spool')}`,
      '  distributionInterval = 200ms',
      '  randomDelay = 100ms',
      '[remote "mirror"]',
      `  url = ${join(root, 'dest')}/\${name}.git`,
      '  replicationDelay = 0',
    ]);
    const node = RefrelayNode.start({ config, nodeId: 'n1' });
    try {
      await node.waitForLog((line) => line.msg === 'watching repositories for ref changes');
      git(work, ['commit', '-q', '--allow-empty', '-m', 'second']);
      git(work, ['push', '-q', source, 'main', 'main:refs/heads/topic']);
      await node.waitForLog((line) => line.msg === 'pushed', 15_000);
      expect(refsOf(join(root, 'dest', 'app.git'))).toEqual(refsOf(source));
    } finally {
      node.signal('SIGTERM');
      expect((await node.exited).code).toBe(0);
    }
    expect(node.problems()).toEqual([]);

    // Pushed while no daemon watches: the next start queues it (replicateOnStartup is off).
    git(work, ['commit', '-q', '--allow-empty', '-m', 'while stopped']);
    git(work, ['push', '-q', source, 'main']);
    const restarted = RefrelayNode.start({ config, nodeId: 'n1' });
    try {
      await restarted.waitForLog((line) => line.msg === 'pushed', 15_000);
      expect(refsOf(join(root, 'dest', 'app.git'))).toEqual(refsOf(source));
    } finally {
      restarted.signal('SIGTERM');
      expect((await restarted.exited).code).toBe(0);
    }
    expect(restarted.problems()).toEqual([]);
  });

  it('refuses to start beyond the limit with the message on stderr and exit 1', async () => {
    const { runCli } = await import('../../support/cli.js');
    const { writeConfig } = await import('../../support/refrelay-node.js');
    const root = tempDir('refrelay-watch-refuse');
    for (const project of ['a', 'b']) initBare(join(root, 'base', `${project}.git`));
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${join(root, 'store')}`,
      `  basePath = ${join(root, 'base')}`,
      '  watchRepositories = true',
      '  watchRepositoriesLimit = 1',
      '[remote "mirror"]',
      `  url = ${join(root, 'dest')}/\${name}.git`,
    ]);
    const result = runCli(['daemon', '--config', config, '--node-id', 'n1']);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('refrelay: watchRepositories: 2 repositories under basePath exceed replication.watchRepositoriesLimit (1)');
  });
});
