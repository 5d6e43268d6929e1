import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { taskKey, uriKey, type Task } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { appSource, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { namesIn, waitingTaskEntries, waitingTaskNames } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

/** Whole seconds, so every filesystem keeps them exactly. */
const OLD = new Date('2026-03-01T10:00:00Z');
const OLDER = new Date('2026-02-01T08:30:00Z');

interface Site {
  root: string;
  config: string;
  store: string;
  dest: string;
  refUpdates: string;
  gerritWaiting: string;
}

function site(): Site {
  const root = tempDir('refrelay-gerrit-import');
  const { store, base } = appSource(root);
  const dest = join(root, 'dest');
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 100ms',
    '[remote "mirror"]',
    `  url = ${dest}/\${name}.git`,
    '  replicationDelay = 0',
    '[remote "github"]',
    '  url = git@github.com:example/${name}.git',
    '  remoteNameStyle = basenameOnly',
  ]);
  const refUpdates = join(root, 'gerrit', 'data', 'replication', 'ref-updates');
  const gerritWaiting = join(refUpdates, 'waiting');
  for (const folder of ['building', 'running', 'waiting']) mkdirSync(join(refUpdates, folder), { recursive: true });
  return { root, config, store, dest, refUpdates, gerritWaiting };
}

/** A task file as Gerrit's replication plugin writes it: named after the sha1 of its content, no extension. */
function gerritFile(s: Site, content: object | string, mtime = OLD): string {
  const text = typeof content === 'string' ? content : JSON.stringify(content);
  const path = join(s.gerritWaiting, createHash('sha1').update(text).digest('hex'));
  writeFileSync(path, text);
  utimesSync(path, mtime, mtime);
  return path;
}

const waitingOf = (s: Site): string => join(s.store, 'ref-updates', 'waiting');
/** `<uriKey>/<taskKey>.json`, a full sync's in `<uriKey>.bulk/`: where a task waits in our store. */
const ourEntry = (task: Task): string => `${uriKey(task.uri)}${task.refs.includes('..all..') ? '.bulk' : ''}/${taskKey(task)}.json`;
const ourFile = (s: Site, task: Task): string => join(waitingOf(s), ourEntry(task));

const appMain: Task = { project: 'app', refs: ['refs/heads/main'], uri: '', remote: 'mirror' };

describe('refrelay import-gerrit-queue', () => {
  it('imports every valid Gerrit task with its original mtime and skips the rest with their reasons', () => {
    const s = site();
    const mirrorUri = `${s.dest}/app.git`;
    const legacy = gerritFile(s, { project: 'app', ref: 'refs/heads/main', uri: mirrorUri, remote: 'mirror' }, OLD);
    const current = gerritFile(s, { project: 'app', refs: ['refs/heads/feature', 'refs/tags/v1'], uri: mirrorUri, remote: 'mirror' }, OLDER);
    const fullSync = gerritFile(s, { project: 'team/lib', refs: ['..all..'], uri: 'git@github.com:example/lib.git', remote: 'github' }, OLD);
    const unknownRemote = gerritFile(s, { project: 'app', refs: ['refs/heads/main'], uri: 'ssh://gone.example.com/app.git', remote: 'gone' });
    const foreignUri = gerritFile(s, { project: 'app', refs: ['refs/heads/main'], uri: 'ssh://old-replica.example.com/app.git', remote: 'mirror' });
    const badProject = gerritFile(s, { project: '../etc', refs: ['refs/heads/main'], uri: `${s.dest}/../etc.git`, remote: 'mirror' });
    const badRef = gerritFile(s, { project: 'app', refs: ['refs/heads/a..b'], uri: mirrorUri, remote: 'mirror' });
    const noRefs = gerritFile(s, { project: 'app', uri: mirrorUri, remote: 'mirror' });

    const result = runCli(['import-gerrit-queue', s.refUpdates, '--config', s.config]);

    expect(result.stderr.trim().split('\n').sort()).toEqual(
      [
        `skipped ${unknownRemote}: uri "ssh://gone.example.com/app.git" is not a URL of any configured remote for project "app" (the file names remote "gone")`,
        `skipped ${foreignUri}: uri "ssh://old-replica.example.com/app.git" is not a URL of any configured remote for project "app" (the file names remote "mirror")`,
        `skipped ${badProject}: invalid project name "../etc": has a ".." segment`,
        `skipped ${badRef}: invalid ref name "refs/heads/a..b": contains ".."`,
        `skipped ${noRefs}: missing field "refs"`,
      ].sort(),
    );
    expect(result.stdout).toBe('imported 3 tasks (0 already queued), skipped 5\n');
    expect(result.status).toBe(1);

    const imported: Array<[Task, Date]> = [
      [{ ...appMain, uri: mirrorUri }, OLD],
      [{ project: 'app', refs: ['refs/heads/feature', 'refs/tags/v1'], uri: mirrorUri, remote: 'mirror' }, OLDER],
      [{ project: 'team/lib', refs: ['..all..'], uri: 'git@github.com:example/lib.git', remote: 'github' }, OLD],
    ];
    expect(waitingTaskEntries(s.store)).toEqual(imported.map(([task]) => ourEntry(task)).sort());
    for (const [task, mtime] of imported) {
      expect(statSync(ourFile(s, task)).mtimeMs).toBe(mtime.getTime());
      expect(JSON.parse(readFileSync(ourFile(s, task), 'utf8'))).toEqual({ version: 1, ...task });
    }
    // Without --remove Gerrit's queue stays as it was.
    for (const path of [legacy, current, fullSync, unknownRemote, foreignUri, badProject, badRef, noRefs]) expect(existsSync(path)).toBe(true);
  });

  it('exits 0 when every file is imported, and counts tasks it already holds as already queued', () => {
    const s = site();
    const uri = `${s.dest}/app.git`;
    gerritFile(s, { project: 'app', ref: 'refs/heads/main', uri, remote: 'mirror' });
    const first = runCli(['import-gerrit-queue', s.gerritWaiting, '--config', s.config]);
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe('imported 1 task (0 already queued), skipped 0\n');
    expect(first.status).toBe(0);

    const again = runCli(['import-gerrit-queue', s.gerritWaiting, '--config', s.config]);
    expect(again.stdout).toBe('imported 1 task (1 already queued), skipped 0\n');
    expect(again.status).toBe(0);
    expect(waitingTaskEntries(s.store)).toEqual([ourEntry({ ...appMain, uri })]);
  });

  it("keeps the oldest mtime when Gerrit's legacy and current forms carry the same update", () => {
    const s = site();
    const uri = `${s.dest}/app.git`;
    gerritFile(s, { project: 'app', refs: ['refs/heads/main'], uri, remote: 'mirror' }, OLD);
    gerritFile(s, { project: 'app', ref: 'refs/heads/main', uri, remote: 'mirror' }, OLDER);
    const result = runCli(['import-gerrit-queue', s.refUpdates, '--config', s.config]);
    expect(result.stdout).toBe('imported 2 tasks (1 already queued), skipped 0\n');
    expect(statSync(ourFile(s, { ...appMain, uri })).mtimeMs).toBe(OLDER.getTime());
  });

  it('--dry-run reports the same outcome and writes nothing into the store', () => {
    const s = site();
    const uri = `${s.dest}/app.git`;
    const valid = gerritFile(s, { project: 'app', ref: 'refs/heads/main', uri, remote: 'mirror' });
    const invalid = gerritFile(s, { project: 'app', refs: ['refs/heads/main'], uri: 'ssh://gone.example.com/app.git', remote: 'gone' });
    const result = runCli(['import-gerrit-queue', s.refUpdates, '--config', s.config, '--dry-run', '--remove']);
    expect(result.stderr).toBe(
      `skipped ${invalid}: uri "ssh://gone.example.com/app.git" is not a URL of any configured remote for project "app" (the file names remote "gone")\n`,
    );
    expect(result.stdout).toBe('dry run: would import 1 task (0 already queued), skip 1; nothing written\n');
    expect(result.status).toBe(1);
    expect(namesIn(join(s.store, 'ref-updates', 'waiting'))).toEqual([]);
    expect(namesIn(s.gerritWaiting)).toEqual([valid, invalid].map((path) => path.slice(s.gerritWaiting.length + 1)).sort());
  });

  it('--remove deletes exactly the imported Gerrit files, and a drain delivers what they queued', async () => {
    const s = site();
    const uri = `${s.dest}/app.git`;
    const imported = [
      gerritFile(s, { project: 'app', ref: 'refs/heads/main', uri, remote: 'mirror' }),
      gerritFile(s, { project: 'app', refs: ['refs/heads/feature'], uri, remote: 'mirror' }),
    ];
    const skipped = gerritFile(s, { project: 'app', refs: ['refs/heads/main'], uri: 'ssh://elsewhere/app.git', remote: 'mirror' });
    writeFileSync(join(s.gerritWaiting, '.nfs000000000001'), 'not a task');
    writeFileSync(join(s.refUpdates, 'running', 'f'.repeat(40)), '{}');

    const result = runCli(['import-gerrit-queue', s.refUpdates, '--config', s.config, '--remove']);
    expect(result.stdout).toBe('imported 2 tasks (0 already queued), skipped 1, left 1 in running/, removed 2 Gerrit files\n');
    expect(result.stderr).toBe(
      [
        `skipped ${skipped}: uri "ssh://elsewhere/app.git" is not a URL of any configured remote for project "app" (the file names remote "mirror")`,
        `note: 1 task file in ${join(s.refUpdates, 'running')} not imported: Gerrit was pushing it when it stopped and puts it back in waiting/ when it starts; once the plugin is stopped on every primary, run this again with --include-running`,
        '',
      ].join('\n'),
    );
    expect(result.status).toBe(1);
    for (const path of imported) expect(existsSync(path)).toBe(false);
    expect(namesIn(s.gerritWaiting)).toEqual(['.nfs000000000001', skipped.slice(s.gerritWaiting.length + 1)]);
    expect(waitingTaskNames(s.store)).toHaveLength(2);

    const node = RefrelayNode.start({ config: s.config, nodeId: 'n1', drain: true });
    expect((await node.exited).code).toBe(0);
    expect(refsOf(uri)).toEqual(refsOf(join(s.root, 'base', 'app.git'), 'refs/heads/'));
    expect(waitingTaskNames(s.store)).toEqual([]);
  });

  it('exits 2 when DIR is missing, not a folder or holds no waiting/, and 3 when the config is invalid', () => {
    const s = site();
    const missing = runCli(['import-gerrit-queue', join(s.root, 'nothere'), '--config', s.config]);
    expect(missing.stderr).toBe(`refrelay: import-gerrit-queue: ${join(s.root, 'nothere')} does not exist\n`);
    expect(missing.status).toBe(2);
    const file = runCli(['import-gerrit-queue', s.config, '--config', s.config]);
    expect(file.stderr).toBe(`refrelay: import-gerrit-queue: ${s.config} is not a folder\n`);
    expect(file.status).toBe(2);
    const noWaiting = runCli(['import-gerrit-queue', join(s.root, 'gerrit'), '--config', s.config]);
    expect(noWaiting.stderr).toBe(
      `refrelay: import-gerrit-queue: ${join(s.root, 'gerrit')} has no waiting/ folder; give the plugin's events directory, its ref-updates folder or its waiting/ folder\n`,
    );
    expect(noWaiting.status).toBe(2);
    expect(runCli(['import-gerrit-queue', '--config', s.config]).status).toBe(2);

    const badConfig = writeConfig(join(s.root, 'bad.config'), ['[remote "x"]', '  url = /tmp/x']);
    const config = runCli(['import-gerrit-queue', s.refUpdates, '--config', badConfig]);
    expect(config.stderr).toContain(`${badConfig}: replication.storePath:`);
    expect(config.status).toBe(3);
    expect(namesIn(join(s.store, 'ref-updates', 'waiting'))).toEqual([]);

    // Pointed at our own store by mistake, --remove would delete queued tasks: refused.
    mkdirSync(waitingOf(s), { recursive: true });
    const ownStore = runCli(['import-gerrit-queue', join(s.store, 'ref-updates'), '--config', s.config, '--remove']);
    expect(ownStore.stderr).toBe(
      `refrelay: import-gerrit-queue: ${waitingOf(s)} is the waiting/ folder of replication.storePath, not a queue to import; point storePath at a folder of refrelay's own first\n`,
    );
    expect(ownStore.status).toBe(2);
  });
});
