import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { sleep, waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { spoolDirFor } from '../../../src/intake/spool.js';

/**
 * DESIGN.md invariant 9 with the real CLI and daemon: a store is created once by `refrelay
 * init`; a store path without the marker — a network filesystem not mounted at boot, or
 * unmounted under a running node — is refused and never recreated on the local disk.
 */
const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

const MISSING = (store: string): string =>
  `refrelay: no refrelay store at ${store} (refrelay-store.json is missing). If the store is on a network filesystem, it may not be mounted; ` +
  'to create a new store there, run: refrelay init --config FILE\n';

const SPOOLED = (store: string, spool: string): string =>
  `refrelay: the store at ${store} cannot be written (refrelay-store.json is missing); the update is spooled in ${spool} and will be forwarded by a daemon of this store on this machine\n`;

function setUp(label: string): { root: string; store: string; config: string; source: string; dest: string; spool: string } {
  const root = tempDir(label);
  const store = join(root, 'mnt', 'store');
  if (!label.includes('no-mount-point')) mkdirSync(join(root, 'mnt'));
  const source = initBare(join(root, 'base', 'app.git'));
  git(makeWorkTree(join(root, 'work'), 1), ['push', '-q', source, 'main']);
  const dest = initBare(join(root, 'dest', 'app.git'));
  const config = writeConfig(
    join(root, 'replication.config'),
    [
      '[replication]',
      `  storePath = ${store}`,
      `  basePath = ${join(root, 'base')}`,
      '  distributionInterval = 100ms',
      '  randomDelay = 0',
      '  httpListen = off',
      `  spoolPath = ${join(root, 'spool')}`,
      '[remote "mirror"]',
      `  url = ${join(root, 'dest')}/\${name}.git`,
      '  replicationDelay = 0',
    ],
    { initStore: false },
  );
  return { root, store, config, source, dest, spool: spoolDirFor(join(root, 'spool'), store) };
}

describe('the store marker', () => {
  it('status and the daemon refuse a store path without the marker, enqueue spools locally, and none creates anything there; after refrelay init they work', async () => {
    const s = setUp('refrelay-unmounted');
    mkdirSync(s.store); // the empty mount point

    const enqueue = runCli(['enqueue', '--config', s.config, '--project', 'app', '--ref', 'refs/heads/main']);
    expect(enqueue.status).toBe(0);
    expect(enqueue.stderr).toBe(SPOOLED(s.store, s.spool));
    const status = runCli(['status', '--config', s.config]);
    expect(status.status).toBe(1);
    expect(status.stderr).toBe(MISSING(s.store));
    const daemon = RefrelayNode.start({ config: s.config, nodeId: 'node-1', drain: true });
    nodes.push(daemon);
    expect((await daemon.exited).code).toBe(1);
    expect(daemon.stderr).toContain(MISSING(s.store));
    expect(readdirSync(s.store)).toEqual([]);

    const init = runCli(['init', '--config', s.config]);
    expect(init.status, init.stderr).toBe(0);
    expect(init.stdout).toBe(`created the refrelay store at ${s.store}\n`);
    expect(runCli(['init', '--config', s.config]).stdout).toBe(`already a refrelay store: ${s.store}\n`);
    expect(runCli(['enqueue', '--config', s.config, '--project', 'app', '--ref', 'refs/heads/main']).status).toBe(0);
    const drained = RefrelayNode.start({ config: s.config, nodeId: 'node-1', drain: true });
    nodes.push(drained);
    expect((await drained.exited).code).toBe(0);
    expect(refsOf(s.dest)).toEqual(refsOf(s.source));
  });

  it('init never makes the parent folders of a store path: a missing mount point is an error', () => {
    const s = setUp('refrelay-no-mount-point');
    const result = runCli(['init', '--config', s.config]);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(`refrelay: cannot create the store folder ${s.store}: its parent folder does not exist (is the network filesystem mounted?)\n`);
    expect(existsSync(join(s.root, 'mnt'))).toBe(false);
  });

  it('status and the daemon refuse a store where a layout folder is not a folder, naming it, and change nothing', async () => {
    const s = setUp('refrelay-layout-file');
    expect(runCli(['init', '--config', s.config]).status).toBe(0);
    rmSync(join(s.store, 'ref-updates', 'corrupt'), { recursive: true });
    writeFileSync(join(s.store, 'ref-updates', 'corrupt'), '');
    const refusal = `the store at ${s.store} cannot be used: ${s.store}/ref-updates/corrupt is a regular file, not a folder: replace it with a folder`;

    const status = runCli(['status', '--config', s.config]);
    expect(status.status).toBe(1);
    expect(status.stderr).toBe(`refrelay: ${refusal}\n`);
    const daemon = RefrelayNode.start({ config: s.config, nodeId: 'node-1', drain: true });
    nodes.push(daemon);
    expect((await daemon.exited).code).toBe(1);
    expect(daemon.stderr).toContain(refusal);
    expect(statSync(join(s.store, 'ref-updates', 'corrupt')).isFile()).toBe(true);
    expect(readdirSync(join(s.store, 'nodes'))).toEqual([]);
  });

  it('a store renamed away under a running daemon is not recreated; once it is back, the daemon forwards what was spooled meanwhile and delivers it', async () => {
    const s = setUp('refrelay-store-away');
    expect(runCli(['init', '--config', s.config]).status).toBe(0);
    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1' });
    nodes.push(node);
    // Its heartbeat file: the node has opened the store (the start log line comes before that).
    await waitUntil('node-1 beat', () => existsSync(join(s.store, 'nodes', 'node-1.json')));
    const away = join(s.root, 'mnt', 'away');
    renameSync(s.store, away);
    mkdirSync(s.store); // what an unmount leaves: the empty mount point

    const spooled = runCli(['enqueue', '--config', s.config, '--project', 'app', '--ref', 'refs/heads/main']);
    expect(spooled.status).toBe(0);
    expect(spooled.stderr).toBe(SPOOLED(s.store, s.spool));
    // Several passes and heartbeats on the empty mount point: nothing of the store appears there.
    await node.waitForLog((line) => line.msg === 'distributor pass failed');
    await sleep(500);
    expect(readdirSync(s.store)).toEqual([]);
    expect(node.child.exitCode).toBeNull();

    // The mount comes back, and the same daemon forwards the spooled update and delivers it.
    expect(node.logs().some((line) => line.msg === 'could not forward spooled tasks into the store')).toBe(true);
    rmSync(s.store, { recursive: true });
    renameSync(away, s.store);
    await waitUntil('main delivered', () => refsOf(s.dest).get('refs/heads/main') === refsOf(s.source).get('refs/heads/main'));
  });

  it("the first daemon adopts an earlier refrelay's store and logs it", async () => {
    const s = setUp('refrelay-adopt');
    expect(runCli(['init', '--config', s.config]).status).toBe(0);
    expect(runCli(['enqueue', '--config', s.config, '--project', 'app', '--ref', 'refs/heads/main']).status).toBe(0);
    rmSync(join(s.store, 'refrelay-store.json')); // the layout an earlier refrelay made, without a marker
    expect(runCli(['status', '--config', s.config]).stderr).toContain('made by an earlier refrelay, without refrelay-store.json');

    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1', drain: true });
    nodes.push(node);
    expect((await node.exited).code).toBe(0);
    expect(node.logs().some((line) => line.msg === "adopted an earlier refrelay's store: wrote its marker")).toBe(true);
    expect(existsSync(join(s.store, 'refrelay-store.json'))).toBe(true);
    expect(refsOf(s.dest)).toEqual(refsOf(s.source));
  });
});
