import { describe, expect, it } from 'vitest';
import { placeGerritTask } from '../../../src/intake/gerrit-task-owner.js';
import { configOf } from '../schedule/scheduler-harness.js';

/** A task as Gerrit's plugin stores it: `uri` is JGit's toASCIIString of the expanded URL. */
const gerritTask = (
  project: string,
  uri: string,
  remote: string,
  refs = ['refs/heads/main'],
): { project: string; refs: string[]; uri: string; remote: string } => ({ project, refs, uri, remote });

describe('placeGerritTask: the remote that pushes a stored Gerrit task, found by URI', () => {
  const config = configOf([
    'remote.github.url=https://replicator:s3cret@github.example.com/org/${name}.git',
    'remote.backup.url=ssh://git@backup.example.com:29418/${name}.git',
    'remote.backup.url=/srv/mirror/${name}.git',
  ]);

  it("queues a task whose uri JGit escaped under the remote that owns it, with refrelay's own expansion", () => {
    expect(placeGerritTask(config, gerritTask('café', 'https://replicator@github.example.com/org/caf%c3%a9.git', 'github'))).toEqual({
      task: { project: 'café', refs: ['refs/heads/main'], uri: 'https://replicator:s3cret@github.example.com/org/caf%C3%A9.git', remote: 'github' },
      remoteRenamed: false,
    });
    expect(placeGerritTask(config, gerritTask('c++', 'https://replicator@github.example.com/org/c++.git', 'github'))).toMatchObject({
      task: { uri: 'https://replicator:s3cret@github.example.com/org/c%2B%2B.git', remote: 'github' },
    });
    expect(placeGerritTask(config, gerritTask('team/my project', 'ssh://git@backup.example.com:29418/team/my%20project.git', 'backup'))).toMatchObject({
      task: { uri: 'ssh://git@backup.example.com:29418/team/my project.git', remote: 'backup' },
    });
    // The second URL of a remote is found too.
    expect(placeGerritTask(config, gerritTask('team/my project', '/srv/mirror/team/my project.git', 'backup'))).toMatchObject({
      task: { uri: '/srv/mirror/team/my project.git', remote: 'backup' },
    });
  });

  it('queues a task of a renamed remote under the remote that now has its URL, as Gerrit matches by URI', () => {
    expect(placeGerritTask(config, gerritTask('app', 'ssh://git@backup.example.com:29418/app.git', 'old-backup'))).toEqual({
      task: { project: 'app', refs: ['refs/heads/main'], uri: 'ssh://git@backup.example.com:29418/app.git', remote: 'backup' },
      remoteRenamed: true,
    });
  });

  it('prefers the remote the file names when several remotes have the URL, else the first in config order', () => {
    const twice = configOf(['remote.a.url=/srv/m/${name}.git', 'remote.b.url=/srv/m/${name}.git']);
    expect(placeGerritTask(twice, gerritTask('app', '/srv/m/app.git', 'b'))).toMatchObject({ task: { remote: 'b' }, remoteRenamed: false });
    expect(placeGerritTask(twice, gerritTask('app', '/srv/m/app.git', 'gone'))).toMatchObject({ task: { remote: 'a' }, remoteRenamed: true });
  });

  it('skips a remote whose projects filter leaves the project out, or whose refspecs take none of the refs, as Gerrit does', () => {
    const filtered = configOf([
      'remote.tags.url=/srv/m/${name}.git',
      'remote.tags.push=refs/tags/*:refs/tags/*',
      'remote.apps.url=/srv/m/${name}.git',
      'remote.apps.projects=app*',
    ]);
    // Both have the URL; only `apps` pushes a branch of app.
    expect(placeGerritTask(filtered, gerritTask('app', '/srv/m/app.git', 'tags'))).toMatchObject({ task: { remote: 'apps' }, remoteRenamed: true });
    // Only the refs the remote pushes are queued.
    expect(placeGerritTask(filtered, gerritTask('lib', '/srv/m/lib.git', 'tags', ['refs/heads/main', 'refs/tags/v1']))).toEqual({
      task: { project: 'lib', refs: ['refs/tags/v1'], uri: '/srv/m/lib.git', remote: 'tags' },
      remoteRenamed: false,
    });
    // `apps` leaves lib out, `tags` pushes no branch.
    expect(placeGerritTask(filtered, gerritTask('lib', '/srv/m/lib.git', 'tags'))).toEqual({
      problem: 'remote "tags" has uri "/srv/m/lib.git", but no push refspec takes any of the task\'s refs',
    });
    const twoApps = configOf([
      'remote.apps.url=/srv/m/${name}.git',
      'remote.apps.projects=app*',
      'remote.more.url=/srv/m/${name}.git',
      'remote.more.excludeProjects=lib',
    ]);
    expect(placeGerritTask(twoApps, gerritTask('lib', '/srv/m/lib.git', 'apps'))).toEqual({
      problem: 'remotes "apps", "more" have uri "/srv/m/lib.git", but projects/excludeProjects leave out project "lib"',
    });
  });

  it('says which uri matches no configured remote, with the password redacted', () => {
    expect(placeGerritTask(config, gerritTask('app', 'https://old:pw@replica.example.com/app.git', 'github'))).toEqual({
      problem: 'uri "https://old:***@replica.example.com/app.git" is not a URL of any configured remote for project "app" (the file names remote "github")',
    });
    // Another project's URL is not this project's.
    expect(placeGerritTask(config, gerritTask('app', '/srv/mirror/lib.git', 'backup'))).toMatchObject({
      problem: expect.stringContaining('is not a URL of any configured remote'),
    });
    expect(placeGerritTask(config, gerritTask('app', 'ssh://host/50%off.git', 'backup'))).toEqual({
      problem: 'uri "ssh://host/50%off.git" is not a URI Gerrit\'s plugin can read (JGit refuses it)',
    });
  });
});
