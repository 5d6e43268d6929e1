import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskKey, uriKey, type Task } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { GERRIT_MTIME, gerritEventsDir, writeGerritTask, type GerritTask } from '../../support/gerrit-queue.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { readWaitingTasks, waitingTaskEntries, waitingTaskNames, waitingTaskPaths } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

const waitingOf = (store: string): string => join(store, 'ref-updates', 'waiting');
/** `<uriKey>/<taskKey>.json`, a full sync's in `<uriKey>.bulk/`: where a task waits in our store. */
const ourEntry = (task: Task): string => `${uriKey(task.uri)}${task.refs.includes('..all..') ? '.bulk' : ''}/${taskKey(task)}.json`;

/** The task files in our waiting folders, as {version, project, refs, uri, remote}, by project. */
function queued(store: string): Array<Task & { version: number }> {
  return (readWaitingTasks(store) as unknown as Array<Task & { version: number }>).sort((a, b) =>
    a.project < b.project ? -1 : a.project > b.project ? 1 : a.remote < b.remote ? -1 : 1,
  );
}

describe('import-gerrit-queue reads the uri as Gerrit wrote it (JGit toASCIIString)', () => {
  it('imports tasks of projects with spaces, non-ASCII and + in their names, and of https URLs with a user and password', () => {
    const root = tempDir('refrelay-gerrit-uris');
    const store = join(root, 'store');
    const config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${store}`,
      '[remote "github"]',
      '  url = https://replicator:s3cret@github.example.com/org/${name}.git',
      '[remote "backup"]',
      '  url = ssh://git@backup.example.com:29418/${name}.git',
      '[remote "scp"]',
      '  url = git@scp.example.com:${name}.git',
    ]);
    const gerrit = gerritEventsDir(join(root, 'gerrit', 'data', 'replication'));
    // As the plugin stored them: JGit's lower-case escapes, `+` raw, the password dropped.
    const files: GerritTask[] = [
      { project: 'team/my project', refs: ['refs/heads/main'], uri: 'https://replicator@github.example.com/org/team/my%20project.git', remote: 'github' },
      { project: 'café', refs: ['refs/heads/main'], uri: 'https://replicator@github.example.com/org/caf%c3%a9.git', remote: 'github' },
      { project: 'c++', refs: ['refs/heads/main', 'refs/tags/v1'], uri: 'https://replicator@github.example.com/org/c++.git', remote: 'github' },
      { project: 'team/my project', refs: ['..all..'], uri: 'ssh://git@backup.example.com:29418/team/my%20project.git', remote: 'backup' },
      { project: 'café', refs: ['refs/heads/main'], uri: 'ssh://git@backup.example.com:29418/caf%c3%a9.git', remote: 'backup' },
    ];
    for (const task of files) writeGerritTask(gerrit.waiting, task);
    // The plugin walks subfolders too: a sharded waiting/ (plugin versions of early 2020) still counts.
    mkdirSync(join(gerrit.waiting, '5d'));
    writeGerritTask(join(gerrit.waiting, '5d'), {
      project: 'team/my project',
      refs: ['refs/heads/main'],
      uri: 'git@scp.example.com:team/my project.git',
      remote: 'scp',
    });

    const result = runCli(['import-gerrit-queue', gerrit.refUpdates, '--config', config]);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('imported 6 tasks (0 already queued), skipped 0\n');
    expect(result.status).toBe(0);
    // Each is queued under refrelay's own expansion of the URL, as `enqueue` would queue it.
    expect(queued(store)).toEqual([
      {
        version: 1,
        project: 'c++',
        refs: ['refs/heads/main', 'refs/tags/v1'],
        uri: 'https://replicator:s3cret@github.example.com/org/c%2B%2B.git',
        remote: 'github',
      },
      { version: 1, project: 'café', refs: ['refs/heads/main'], uri: 'ssh://git@backup.example.com:29418/café.git', remote: 'backup' },
      { version: 1, project: 'café', refs: ['refs/heads/main'], uri: 'https://replicator:s3cret@github.example.com/org/caf%C3%A9.git', remote: 'github' },
      { version: 1, project: 'team/my project', refs: ['..all..'], uri: 'ssh://git@backup.example.com:29418/team/my project.git', remote: 'backup' },
      {
        version: 1,
        project: 'team/my project',
        refs: ['refs/heads/main'],
        uri: 'https://replicator:s3cret@github.example.com/org/team/my%20project.git',
        remote: 'github',
      },
      { version: 1, project: 'team/my project', refs: ['refs/heads/main'], uri: 'git@scp.example.com:team/my project.git', remote: 'scp' },
    ]);
    for (const path of waitingTaskPaths(store)) expect(statSync(path).mtimeMs).toBe(GERRIT_MTIME.getTime());
  });
});

interface Site {
  root: string;
  config: string;
  store: string;
  base: string;
  dest: string;
  gerrit: ReturnType<typeof gerritEventsDir>;
}

/** A master with repositories `team/my project`, `café`, `c++` and `app`, each with main and feature; one file:// remote. */
function deliverySite(): Site {
  const root = tempDir('refrelay-gerrit-delivery');
  const base = join(root, 'base');
  const work = makeWorkTree(join(root, 'work'), 2);
  git(work, ['branch', 'feature', 'HEAD~1']);
  for (const project of ['team/my project', 'café', 'c++', 'app']) git(work, ['push', '-q', initBare(join(base, `${project}.git`)), 'main', 'feature']);
  const store = join(root, 'store');
  const dest = join(root, 'dest');
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 100ms',
    // Was "mirror" in Gerrit's config; the same URL now belongs to "dr".
    '[remote "dr"]',
    `  url = file://${dest}/\${name}.git`,
    '  replicationDelay = 0',
  ]);
  return { root, config, store, base, dest, gerrit: gerritEventsDir(join(root, 'gerrit', 'data', 'replication')) };
}

const fileUri = (s: Site, escapedPath: string): string => `file://${s.dest}/${escapedPath}.git`;

describe('import-gerrit-queue delivers what the plugin queued', () => {
  it('leaves running/ by default and says so; --include-running takes it; a drain pushes everything to the file:// destinations', async () => {
    const s = deliverySite();
    const waitingFiles = [
      writeGerritTask(s.gerrit.waiting, { project: 'team/my project', refs: ['refs/heads/main'], uri: fileUri(s, 'team/my%20project'), remote: 'dr' }),
      writeGerritTask(s.gerrit.waiting, { project: 'café', refs: ['refs/heads/main', 'refs/heads/feature'], uri: fileUri(s, 'caf%c3%a9'), remote: 'dr' }),
      writeGerritTask(s.gerrit.waiting, { project: 'c++', refs: ['..all..'], uri: fileUri(s, 'c++'), remote: 'dr' }),
      // The remote was renamed since; its URL is still configured.
      writeGerritTask(s.gerrit.waiting, { project: 'app', refs: ['refs/heads/main'], uri: fileUri(s, 'app'), remote: 'mirror' }),
    ];
    // Gerrit was pushing this one when it stopped.
    const runningFile = writeGerritTask(s.gerrit.running, {
      project: 'team/my project',
      refs: ['refs/heads/feature'],
      uri: fileUri(s, 'team/my%20project'),
      remote: 'dr',
    });

    const first = runCli(['import-gerrit-queue', s.gerrit.refUpdates, '--config', s.config]);
    expect(first.stderr).toBe(
      `note: 1 task file in ${s.gerrit.running} not imported: Gerrit was pushing it when it stopped and puts it back in waiting/ when it starts; once the plugin is stopped on every primary, run this again with --include-running\n`,
    );
    expect(first.stdout).toBe('imported 4 tasks (0 already queued, 1 under a renamed remote), skipped 0, left 1 in running/\n');
    expect(first.status).toBe(0);
    const expected: Task[] = [
      { project: 'app', refs: ['refs/heads/main'], uri: `file://${s.dest}/app.git`, remote: 'dr' },
      { project: 'c++', refs: ['..all..'], uri: `file://${s.dest}/c++.git`, remote: 'dr' },
      { project: 'café', refs: ['refs/heads/feature', 'refs/heads/main'], uri: `file://${s.dest}/café.git`, remote: 'dr' },
      { project: 'team/my project', refs: ['refs/heads/main'], uri: `file://${s.dest}/team/my project.git`, remote: 'dr' },
    ];
    expect(queued(s.store)).toEqual(expected.map((task) => ({ version: 1, ...task })));

    const dryRun = runCli(['import-gerrit-queue', s.gerrit.refUpdates, '--config', s.config, '--include-running', '--dry-run']);
    expect(dryRun.stdout).toBe('dry run: would import 5 tasks (4 already queued, 1 from running/, 1 under a renamed remote), skip 0; nothing written\n');

    const second = runCli(['import-gerrit-queue', s.gerrit.refUpdates, '--config', s.config, '--include-running', '--remove']);
    expect(second.stderr).toBe('');
    expect(second.stdout).toBe('imported 5 tasks (4 already queued, 1 from running/, 1 under a renamed remote), skipped 0, removed 5 Gerrit files\n');
    expect(second.status).toBe(0);
    const fromRunning: Task = { project: 'team/my project', refs: ['refs/heads/feature'], uri: `file://${s.dest}/team/my project.git`, remote: 'dr' };
    expect(waitingTaskEntries(s.store)).toEqual([...expected, fromRunning].map(ourEntry).sort());
    expect(statSync(join(waitingOf(s.store), ourEntry(fromRunning))).mtimeMs).toBe(GERRIT_MTIME.getTime());
    for (const path of [...waitingFiles, runningFile]) expect(existsSync(path)).toBe(false);

    const node = RefrelayNode.start({ config: s.config, nodeId: 'n1', drain: true });
    expect((await node.exited).code).toBe(0);
    expect(node.problems()).toEqual([]);
    expect(waitingTaskNames(s.store)).toEqual([]);
    const branches = (project: string): Map<string, string> => refsOf(join(s.base, `${project}.git`), 'refs/heads/');
    expect(refsOf(join(s.dest, 'team/my project.git'))).toEqual(branches('team/my project'));
    expect(refsOf(join(s.dest, 'café.git'))).toEqual(branches('café'));
    expect(refsOf(join(s.dest, 'c++.git'))).toEqual(branches('c++'));
    // A destination refrelay creates gets a full sync, as Gerrit does after creating a project.
    expect(refsOf(join(s.dest, 'app.git'))).toEqual(branches('app'));
  });
});
