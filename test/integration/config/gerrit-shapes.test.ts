import { existsSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../../support/cli.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { initStoreSync, RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { readWaitingTasks } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

interface Site {
  root: string;
  /** `$site_path`: etc/replication.config, git/ (the repositories), data/shared (the store). */
  site: string;
  config: string;
  store: string;
  base: string;
  dest: string;
  env: NodeJS.ProcessEnv;
}

/**
 * A Gerrit site whose `etc/replication.config` is written the way the plugin's config.md shows
 * it, plus the keys refrelay needs (basePath, and fast timings for the test), with: a relative
 * eventsDirectory, a basenameOnly remote, a url with `${name}` twice, a fetch remote (a copy of
 * a plain git remote) and a remote without url.
 */
function gerritSite(): Site {
  const root = tempDir('refrelay-gerrit-site');
  const site = join(root, 'gerrit');
  const base = join(site, 'git');
  const dest = join(root, 'dest');
  const store = join(site, 'data', 'shared');
  mkdirSync(join(site, 'etc'), { recursive: true });
  initStoreSync(store);
  const work = makeWorkTree(join(root, 'work'), 2);
  for (const project of ['plugins/foo.bar', 'team/app']) git(work, ['push', '-q', initBare(join(base, `${project}.git`)), 'main']);
  const config = writeConfig(
    join(site, 'etc', 'replication.config'),
    [
      '[replication]',
      '  eventsDirectory = data/shared',
      '  distributionInterval = 1',
      `  basePath = ${base}`,
      '  randomDelay = 0',
      '  httpListen = off',
      '',
      '[remote "github"]',
      `  url = file://${dest}/github/\${name}.git`,
      '  push = +refs/heads/*:refs/heads/*',
      '  projects = plugins/foo.bar',
      '  remoteNameStyle = basenameOnly',
      '  replicationDelay = 0',
      '',
      '[remote "nested"]',
      `  url = file://${dest}/nested/\${name}/\${name}.git`,
      '  projects = team/app',
      '  replicationDelay = 0',
      '',
      '[remote "origin"]',
      `  url = file://${dest}/origin/\${name}.git`,
      '  fetch = +refs/heads/*:refs/remotes/origin/*',
      '',
      '[remote "later"]',
      '  projects = team/*',
    ],
    { initStore: false },
  );
  // The local spool stays in the test's folder should a command not find the store.
  const env = { XDG_STATE_HOME: join(root, 'state') };
  return { root, site, config, store, base, dest, env };
}

/** Each CLI call runs from a folder where `data/shared` does not exist: the path must come from the site. */
function cli(s: Site, args: string[]): CliResult {
  return runCli([...args, '--config', s.config], { cwd: s.root, env: s.env });
}

function waitingTasks(store: string): string[] {
  return readWaitingTasks(store)
    .map((fields) => fields as { remote: string; uri: string; refs: string[]; project: string })
    .map((task) => `${task.remote} ${task.project} ${task.uri} ${JSON.stringify(task.refs)}`)
    .sort();
}

describe("a Gerrit site's replication.config", () => {
  it('config check shows the store under the site, the skipped remotes and the basenameOnly names', () => {
    const s = gerritSite();
    const result = cli(s, ['config', 'check']);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`storePath: ${s.store} (eventsDirectory "data/shared" taken from the Gerrit site ${s.site}, as Gerrit does)\n`);
    expect(result.stdout).toContain('remotes: 2\n');
    expect(result.stdout).toContain(
      '  note: basenameOnly pushes project "plugins/foo.bar" as "foo", not "foo.bar": as in Gerrit, the name ends at its last dot\n',
    );
    expect(result.stderr.trim().split('\n')).toEqual([
      `warning: ${s.config}: remote.origin.fetch: set, so the remote is skipped: Gerrit takes a remote with a fetch refspec ` +
        'for a fetch remote ("not a push target") and skips it; remove fetch to replicate to it',
      `warning: ${s.config}: remote.later.url: not set, so the remote is skipped, as Gerrit skips it; ` +
        'add url = <destination>/${name}.git to replicate to it',
    ]);
  });

  it("enqueue queues tasks in the site's store for the remotes Gerrit pushes to, with Gerrit's URLs, and the pushes land there", async () => {
    const s = gerritSite();
    expect(cli(s, ['enqueue', '--project', 'plugins/foo.bar', '--ref', 'refs/heads/main'])).toMatchObject({
      status: 0,
      stdout: 'refrelay: queued 1 task for plugins/foo.bar\n',
    });
    expect(cli(s, ['enqueue', '--project', 'team/app', '--ref', 'refs/heads/main'])).toMatchObject({
      status: 0,
      stdout: 'refrelay: queued 1 task for team/app\n',
    });
    const basenameRepo = join(s.dest, 'github', 'foo.git');
    const nestedRepo = join(s.dest, 'nested', 'team', 'app', '${name}.git');
    expect(waitingTasks(s.store)).toEqual([
      `github plugins/foo.bar file://${basenameRepo} ["refs/heads/main"]`,
      `nested team/app file://${nestedRepo} ["refs/heads/main"]`,
    ]);
    expect(existsSync(join(s.site, 'etc', 'data'))).toBe(false);

    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1', drain: true, env: s.env });
    stops.push(() => node.stop());
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.problems()).toEqual([]);

    expect(refsOf(basenameRepo)).toEqual(refsOf(join(s.base, 'plugins/foo.bar.git')));
    expect(refsOf(nestedRepo)).toEqual(refsOf(join(s.base, 'team/app.git')));
    expect(refsOf(basenameRepo).get('refs/heads/main')).toMatch(/^[0-9a-f]{40}$/);
    expect(readdirSync(join(s.dest, 'github'))).toEqual(['foo.git']);
    expect(readdirSync(s.dest).sort()).toEqual(['github', 'nested']);
    expect(readdirSync(join(s.store, 'ref-updates', 'waiting'))).toEqual([]);
  });
});
