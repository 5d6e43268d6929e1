import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { commitFile, git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { readWaitingTasks, waitingTaskNames } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

const AUTOMERGE = 'refs/cache-automerge/ab/cdef0123456789abcdef0123456789abcdef01';

/** The refs a Gerrit site keeps in a project, besides branches and tags. */
const GERRIT_REFS = [
  'refs/meta/config',
  'refs/changes/01/1/1',
  'refs/changes/01/1/meta',
  'refs/draft-comments/01/1/1000001',
  'refs/users/01/1000001',
  'refs/sequences/changes',
  AUTOMERGE,
];

/** What Gerrit's PushOne.canPushRef lets through to each remote of the config below. */
const GERRIT_PUSHES: Record<string, (ref: string) => boolean> = {
  backup: (ref) => ref !== AUTOMERGE,
  public: (ref) => ref !== AUTOMERGE && ref !== 'refs/meta/config',
  replica: (ref) => ref !== AUTOMERGE && !['refs/changes/01/1/meta', 'refs/draft-comments/01/1/1000001'].includes(ref),
};
const REMOTES = Object.keys(GERRIT_PUSHES);

interface Site {
  root: string;
  base: string;
  source: string;
  config: string;
  dest: (remote: string) => string;
}

/**
 * A Gerrit site's repository `app.git`: branches and a tag, plus the refs Gerrit writes itself,
 * each on an object of its own (the sequence ref on a blob, as Gerrit keeps it).
 */
function gerritSite(label: string): Site {
  const root = tempDir(label);
  const base = join(root, 'base');
  const source = initBare(join(base, 'app.git'));
  const work = makeWorkTree(join(root, 'work'), 2);
  git(work, ['branch', 'feature', 'HEAD~1']);
  git(work, ['tag', 'v1']);
  git(work, ['push', '-q', source, 'main', 'feature', 'v1']);
  for (const ref of GERRIT_REFS.filter((name) => name !== 'refs/sequences/changes')) {
    git(work, ['checkout', '-q', '--orphan', `x${GERRIT_REFS.indexOf(ref)}`]);
    git(work, ['push', '-q', source, `${commitFile(work, 'data.txt', `${ref}\n`)}:${ref}`]);
  }
  const blob = git(source, ['hash-object', '-w', '--stdin'], { input: '42\n' }).trim();
  git(source, ['update-ref', 'refs/sequences/changes', blob]);
  // As in the plugin's documentation: a backup with defaults, a public mirror without access
  // rights, a replica without review metadata.
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${join(root, 'store')}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 0',
    '[gerrit]',
    '  defaultForceUpdate = true',
    '[remote "backup"]',
    `  url = file://${root}/backup/\${name}.git`,
    '  replicationDelay = 0',
    '[remote "public"]',
    `  url = file://${root}/public/\${name}.git`,
    '  replicationDelay = 0',
    '  replicatePermissions = false',
    '  mirror = true',
    '[remote "replica"]',
    `  url = file://${root}/replica/\${name}.git`,
    '  replicationDelay = 0',
    '  replicateNoteDbMetaRefs = false',
    '  mirror = true',
  ]);
  return { root, base, source, config, dest: (remote) => join(root, remote, 'app.git') };
}

function waitingTasks(root: string): Array<{ remote: string; uri: string; refs: string[] }> {
  const tasks = readWaitingTasks(join(root, 'store')) as Array<{ remote: string; uri: string; refs: string[] }>;
  return tasks.sort((a, b) => a.remote.localeCompare(b.remote));
}

async function drain(config: string): Promise<void> {
  const node = RefrelayNode.start({ config, nodeId: 'n1', drain: true });
  const { code } = await node.exited;
  expect(node.problems()).toEqual([]);
  expect(code).toBe(0);
}

/** The source's refs that Gerrit would push to `remote`, with their object ids. */
function gerritWouldPush(site: Site, remote: string): Map<string, string> {
  return new Map([...refsOf(site.source)].filter(([ref]) => GERRIT_PUSHES[remote]!(ref)));
}

describe('replicatePermissions, replicateNoteDbMetaRefs and the automerge cache, as Gerrit honours them', () => {
  it('enqueue writes each remote only the refs Gerrit would push, and delivery leaves exactly those at the destination', async () => {
    const site = gerritSite('refrelay-meta-enqueue');
    for (const remote of REMOTES) initBare(site.dest(remote));
    const all = [...refsOf(site.source).keys()];
    expect(all).toHaveLength(10);

    const enqueued = runCli(['enqueue', '--config', site.config, '--project', 'app', ...all.flatMap((ref) => ['--ref', ref])]);
    expect(enqueued).toMatchObject({ status: 0, stdout: 'refrelay: queued 3 tasks for app\n' });
    expect(waitingTasks(site.root)).toEqual(
      REMOTES.map((remote) => ({
        version: 1,
        project: 'app',
        refs: all.filter(GERRIT_PUSHES[remote]!).sort(),
        uri: `file://${site.root}/${remote}/app.git`,
        remote,
      })),
    );

    await drain(site.config);
    for (const remote of REMOTES) expect(refsOf(site.dest(remote))).toEqual(gerritWouldPush(site, remote));
  });

  it('enqueue writes no task when the remote keeps back every ref of the update', () => {
    const site = gerritSite('refrelay-meta-config-only');
    const enqueued = runCli(['enqueue', '--config', site.config, '--project', 'app', '--ref', 'refs/meta/config', '--ref', AUTOMERGE, '--remote', 'public']);
    expect(enqueued).toMatchObject({ status: 0, stdout: 'refrelay: queued 0 tasks for app\n' });
    expect(waitingTasks(site.root)).toEqual([]);
  });

  it('a full sync pushes what Gerrit would push, and a mirror deletes orphans but never a ref it does not replicate', async () => {
    const site = gerritSite('refrelay-meta-fullsync');
    // The destinations hold refs of their own: the public mirror its own access rights, the
    // replica review metadata of a change the source no longer has, both an orphaned branch.
    const other = makeWorkTree(join(site.root, 'other'), 1);
    const own = git(other, ['rev-parse', 'HEAD']).trim();
    for (const remote of ['public', 'replica']) {
      git(other, [
        'push',
        '-q',
        initBare(site.dest(remote)),
        'HEAD:refs/heads/stale',
        'HEAD:refs/meta/config',
        'HEAD:refs/changes/02/2/meta',
        `HEAD:${AUTOMERGE}`,
      ]);
    }

    const queued = runCli(['replicate', '--all', '--now', '--config', site.config]);
    expect(queued).toMatchObject({ status: 0, stdout: 'queued full sync of 1 project to 3 destination URLs\n' });
    expect(waitingTasks(site.root).map((task) => [task.remote, task.refs])).toEqual(REMOTES.map((remote) => [remote, ['..all..']]));

    await drain(site.config);
    // backup was missing: created, then given every ref Gerrit pushes.
    expect(refsOf(site.dest('backup'))).toEqual(gerritWouldPush(site, 'backup'));
    // public: no refs/meta/config pushed, its own kept although mirror is on; the orphan branch and
    // the change meta ref (replicated by this remote, no local source) deleted; the automerge ref kept.
    expect(refsOf(site.dest('public'))).toEqual(new Map([...gerritWouldPush(site, 'public'), ['refs/meta/config', own], [AUTOMERGE, own]]));
    // replica: refs/meta/config replicated over its own; the NoteDb meta ref without a local
    // source and the automerge ref are not this remote's to delete.
    expect(refsOf(site.dest('replica'))).toEqual(new Map([...gerritWouldPush(site, 'replica'), ['refs/changes/02/2/meta', own], [AUTOMERGE, own]]));

    const verified = runCli(['verify', '--config', site.config]);
    expect(verified.stdout).toContain('3 destinations: 3 in sync, 0 drifted, 0 unreachable');
    expect(verified.status).toBe(0);
  });

  it('a project whose HEAD is refs/meta/config (All-Users) reaches no remote with replicatePermissions = false, not even as an empty repository', async () => {
    const site = gerritSite('refrelay-meta-all-users');
    const allUsers = initBare(join(site.base, 'All-Users.git'));
    const work = makeWorkTree(join(site.root, 'users-work'), 1);
    git(work, ['push', '-q', allUsers, 'HEAD:refs/meta/config', 'HEAD:refs/users/01/1000001', 'HEAD:refs/meta/external-ids']);
    git(allUsers, ['symbolic-ref', 'HEAD', 'refs/meta/config']);
    const usersDest = (remote: string): string => join(site.root, remote, 'All-Users.git');

    const enqueued = runCli([
      'enqueue',
      '--config',
      site.config,
      '--project',
      'All-Users',
      '--ref',
      'refs/users/01/1000001',
      '--ref',
      'refs/meta/external-ids',
    ]);
    expect(enqueued.status).toBe(0);
    await drain(site.config);
    expect(existsSync(usersDest('public'))).toBe(false);
    expect([...refsOf(usersDest('replica')).keys()]).toEqual(['refs/meta/config', 'refs/meta/external-ids', 'refs/users/01/1000001']);

    expect(runCli(['replicate', 'All-Users', '--now', '--config', site.config]).status).toBe(0);
    await drain(site.config);
    expect(existsSync(usersDest('public'))).toBe(false);
    expect(refsOf(usersDest('backup'))).toEqual(refsOf(allUsers));
    expect(waitingTaskNames(join(site.root, 'store'))).toEqual([]);

    const verified = runCli(['verify', 'All-Users', '--config', site.config]);
    expect(verified.stdout).toContain('3 destinations: 3 in sync, 0 drifted, 0 unreachable');
  });
});
