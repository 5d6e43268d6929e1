import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { git, initBare, makeWorkTree, refsOf } from '../support/git.js';
import { RefrelayNode, writeConfig } from '../support/refrelay-node.js';
import { spooledTaskFiles } from '../support/store-files.js';
import { useTempDirs } from '../support/temp-dir.js';
import { spoolDirFor } from '../../src/intake/spool.js';

/**
 * Issue 19 as a developer meets it: the store's network filesystem is not mounted when their
 * `git push` runs the hook. The update is spooled on the master's disk, and a daemon of the store
 * forwards and delivers it once the store is there.
 */
const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

describe('enqueue with the store not mounted', () => {
  it('spools the update and exits 0 with a warning, writing nothing under the store path; after init a draining daemon forwards and delivers it', async () => {
    const root = tempDir('refrelay-e2e-spool');
    const store = join(root, 'mnt', 'store');
    mkdirSync(store, { recursive: true }); // the empty mount point
    const spoolRoot = join(root, 'spool');
    const source = initBare(join(root, 'base', 'app.git'));
    git(makeWorkTree(join(root, 'work'), 2), ['push', '-q', source, 'main']);
    const dest = initBare(join(root, 'dest', 'app.git'));
    const config = writeConfig(
      join(root, 'replication.config'),
      [
        '[replication]',
        `  storePath = ${store}`,
        `  basePath = ${join(root, 'base')}`,
        `  spoolPath = ${spoolRoot}`,
        '  distributionInterval = 100ms',
        '  randomDelay = 0',
        '  httpListen = off',
        '[remote "mirror"]',
        `  url = ${join(root, 'dest')}/\${name}.git`,
        '  replicationDelay = 0',
      ],
      { initStore: false },
    );
    const spool = spoolDirFor(spoolRoot, store);

    const enqueue = runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']);
    expect(enqueue.status, enqueue.stderr).toBe(0);
    expect(enqueue.stdout).toBe('');
    expect(enqueue.stderr).toBe(
      `refrelay: the store at ${store} cannot be written (refrelay-store.json is missing); the update is spooled in ${spool} and will be forwarded by a daemon of this store on this machine\n`,
    );
    expect(readdirSync(store)).toEqual([]);
    const spooled = readdirSync(spool).filter((name) => name.endsWith('.json'));
    expect(spooled).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(spool, spooled[0]!), 'utf8'))).toEqual({
      version: 1,
      project: 'app',
      refs: ['refs/heads/main'],
      uri: join(root, 'dest', 'app.git'),
      remote: 'mirror',
    });
    expect(readFileSync(join(spool, 'store.txt'), 'utf8')).toBe(`${store}\n`);

    expect(runCli(['init', '--config', config]).status).toBe(0);
    const node = RefrelayNode.start({ config, nodeId: 'node-1', drain: true });
    nodes.push(node);
    expect((await node.exited).code, node.stderr).toBe(0);
    expect(node.logs().some((line) => line.msg === 'forwarded spooled tasks into the store' && line.tasks === 1)).toBe(true);
    expect(refsOf(dest)).toEqual(refsOf(source));
    expect(spooledTaskFiles(spool)).toEqual([]);
    expect(existsSync(join(spool, 'corrupt'))).toBe(false);
    expect(node.problems()).toEqual([]);
  });
});
