import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { git, initBare, makeWorkTree, refsOf, writeHook } from '../support/git.js';
import { cliBin } from '../support/paths.js';
import { RefrelayNode, writeConfig } from '../support/refrelay-node.js';
import { readWaitingTasks } from '../support/store-files.js';
import { useTempDirs } from '../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/**
 * A Gerrit site laid out as the plugin's documentation shows it: settings in
 * etc/replication.config, one remote per file in etc/replication/, plus a remote left behind in
 * replication.config that Gerrit ignores.
 */
function gerritSite() {
  const root = tempDir('refrelay-fanout-e2e');
  const etc = join(root, 'etc');
  const base = join(root, 'git');
  const dest = join(root, 'dest');
  const store = join(root, 'store');
  mkdirSync(join(etc, 'replication'), { recursive: true });
  const config = writeConfig(join(etc, 'replication.config'), [
    '[gerrit]',
    '    autoReload = false',
    '    replicateOnStartup = false',
    '[replication]',
    '    lockErrorMaxRetries = 5',
    '    maxRetries = 5',
    `    storePath = ${store}`,
    `    basePath = ${base}`,
    '    distributionInterval = 200ms',
    '    randomDelay = 0',
    '    httpListen = off',
    '[remote "old"]',
    `    url = file://${dest}/old/\${name}.git`,
  ]);
  writeFileSync(
    join(etc, 'replication', 'mirror.config'),
    ['[remote]', `    url = file://${dest}/mirror/\${name}.git`, '    push = +refs/heads/*:refs/heads/*', '    replicationDelay = 0', ''].join('\n'),
  );
  writeFileSync(
    join(etc, 'replication', 'tags.config'),
    ['[remote]', `    url = ${dest}/tags/\${name}.git`, '    push = refs/tags/*:refs/tags/*', '    replicationDelay = 0', ''].join('\n'),
  );
  const source = initBare(join(base, 'team', 'app.git'));
  writeHook(source, 'post-receive', `#!/bin/sh\nexec "${process.execPath}" "${cliBin}" enqueue --stdin --config "${config}"\n`);
  return { root, etc, config, store, source, dest };
}

function waitingTasks(store: string): string[] {
  return readWaitingTasks(store)
    .map((fields) => {
      const task = fields as { project: string; remote: string; uri: string; refs: string[] };
      return `${task.remote} ${task.uri} ${task.project} ${task.refs.join(',')}`;
    })
    .sort();
}

describe('a Gerrit fan-out config (replication.config + replication/*.config)', () => {
  it('config check lists the remotes of the folder with their files and warns about the ignored one', () => {
    const site = gerritSite();
    const result = runCli(['config', 'check', '--config', site.config]);
    expect(result.status).toBe(0);
    const dir = join(site.etc, 'replication');
    expect(result.stdout).toContain(`remotes: 2 (from ${dir}/*.config)\n`);
    expect(result.stdout).toContain(`remote "mirror"\n  from: ${dir}/mirror.config\n  url: file://${site.dest}/mirror/\${name}.git\n`);
    expect(result.stdout).toContain(`remote "tags"\n  from: ${dir}/tags.config\n`);
    expect(result.stdout).not.toContain('remote "old"');
    expect(result.stderr).toContain(
      `warning: ${site.config}: remote.old: section ignored: ${dir}/ exists, so the remotes come only from its *.config files (Gerrit ignores this section too, logging an error); move it to ${dir}/old.config as [remote], or delete it\n`,
    );
  });

  it('a real push queues one task per fan-out remote, none for the ignored one, and the daemon delivers them', async () => {
    const site = gerritSite();
    const work = makeWorkTree(join(site.root, 'work'), 2);
    git(work, ['tag', 'v1']);
    git(work, ['push', '-q', site.source, 'main', 'v1']);

    expect(waitingTasks(site.store)).toEqual([
      `mirror file://${site.dest}/mirror/team/app.git team/app refs/heads/main`,
      `tags ${site.dest}/tags/team/app.git team/app refs/tags/v1`,
    ]);
    const old = runCli(['enqueue', '--config', site.config, '--project', 'team/app', '--ref', 'refs/heads/main', '--remote', 'old']);
    expect(old.status).toBe(2);
    expect(old.stderr).toBe(`refrelay: enqueue: no remote named "old" in ${join(site.etc, 'replication')}/*.config\n`);

    const node = RefrelayNode.start({ config: site.config, nodeId: 'node-1', drain: true });
    stops.push(() => node.stop());
    expect(await node.exited).toEqual({ code: 0, signal: null });
    expect(node.problems()).toEqual([]);
    const local = refsOf(site.source);
    expect(refsOf(join(site.dest, 'mirror', 'team', 'app.git'))).toEqual(new Map([['refs/heads/main', local.get('refs/heads/main')!]]));
    expect(refsOf(join(site.dest, 'tags', 'team', 'app.git'))).toEqual(new Map([['refs/tags/v1', local.get('refs/tags/v1')!]]));
    expect(existsSync(join(site.dest, 'old'))).toBe(false);
    expect(readdirSync(join(site.store, 'ref-updates', 'waiting'))).toEqual([]);
  });
});
