import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { uriKey } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { appSource, initBare, refsOf, writeHook } from '../../support/git.js';
import { isAlive, killGroupsWith } from '../../support/processes.js';
import { RefrelayNode, storeDir, writeConfig } from '../../support/refrelay-node.js';
import { namesIn, readUriStateFile, waitUntil, waitingTaskNames } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
const destinations: string[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  // A push orphaned by a killed node must not outlive the test (nor race the temp-dir cleanup).
  for (const dest of destinations.splice(0)) killGroupsWith(dest);
});

interface Setup {
  store: string;
  source: string;
  dest: string;
  config: string;
  key: string;
}

/**
 * Source `app` (main, feature) and a destination whose pre-receive hook writes its pid to
 * `hook-started`, sleeps 5 s while the file `slow` exists, and records overlapping pushes in
 * `overlaps.log`.
 */
function setup(label: string, shutdownGrace: string): Setup {
  const root = tempDir(label);
  const { store, base, source } = appSource(root);
  const dest = initBare(join(root, 'dest', 'app.git'));
  destinations.push(dest);
  writeHook(
    dest,
    'pre-receive',
    [
      '#!/bin/sh',
      // A marker left by a killed hook names a dead (or zombie) pid: only a live one is an overlap.
      'marker="$GIT_DIR/push-in-progress"',
      'if [ -f "$marker" ]; then case "$(ps -o stat= -p "$(cat "$marker")")" in ""|Z*) ;; *) echo overlap >> "$GIT_DIR/overlaps.log";; esac; fi',
      'echo $$ > "$marker"',
      'echo $$ > "$GIT_DIR/hook-started"',
      'if [ -f "$GIT_DIR/slow" ]; then sleep 5; fi',
      'cat > /dev/null',
      '[ "$(cat "$marker")" = $$ ] && rm -f "$marker"',
      'exit 0',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dest, 'slow'), '');
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 100ms',
    `  shutdownGrace = ${shutdownGrace}`,
    '[remote "slow"]',
    `  url = ${join(root, 'dest')}/\${name}.git`,
    '  replicationDelay = 0',
  ]);
  for (const ref of ['refs/heads/main', 'refs/heads/feature']) {
    const result = runCli(['enqueue', '--config', config, '--project', 'app', '--ref', ref]);
    expect(result.stdout).toBe('refrelay: queued 1 task for app\n');
  }
  return { store, source, dest, config, key: uriKey(`${join(root, 'dest')}/app.git`) };
}

/** The node heartbeat counter in `nodes/<nodeId>.json` (0 before the first beat): it moves once per loop pass. */
function nodeCounter(s: Setup, nodeId: string): number {
  const path = join(s.store, 'nodes', `${nodeId}.json`);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { counter: number }).counter : 0;
}

function start(s: Setup, nodeId: string, drain = false): RefrelayNode {
  const node = RefrelayNode.start({ config: s.config, nodeId, drain });
  nodes.push(node);
  return node;
}

/** Starts node-1 and resolves once its push is inside the destination's (slow) pre-receive hook. */
async function pushInProgress(s: Setup): Promise<{ node: RefrelayNode; hookPid: number; queued: string[] }> {
  const queued = waitingTaskNames(s.store);
  expect(queued).toHaveLength(2);
  const node = start(s, 'node-1');
  await node.waitForLog((line) => line.msg === 'claimed', 10_000);
  const hookStarted = join(s.dest, 'hook-started');
  const hookPid = await waitUntil('the pre-receive hook', () =>
    existsSync(hookStarted) ? Number(readFileSync(hookStarted, 'utf8').trim()) || undefined : undefined,
  );
  return { node, hookPid, queued };
}

/** The claim of node-1's crashed incarnation: lock folder, owner record and claimed tasks. */
/** The lock folder holds one lease folder with the owner record and the claimed tasks. */
function claimIn(s: Setup): { folders: string[]; files: string[]; owner: string } {
  const lockDir = storeDir(s.store, 'running', s.key);
  const leases = namesIn(lockDir);
  const leaseDir = leases.length === 1 ? join(lockDir, leases[0]!) : lockDir;
  const owner = existsSync(join(leaseDir, 'owner.json')) ? readFileSync(join(leaseDir, 'owner.json'), 'utf8') : '';
  return { folders: namesIn(storeDir(s.store, 'running')), files: namesIn(leaseDir).sort(), owner };
}

async function expectDeliveredByDrain(s: Setup, nodeId: string): Promise<RefrelayNode> {
  const node = start(s, nodeId, true);
  expect(await node.exited).toEqual({ code: 0, signal: null });
  expect(node.problems()).toEqual([]);
  expect(refsOf(s.dest)).toEqual(refsOf(s.source));
  expect(waitingTaskNames(s.store)).toEqual([]);
  expect(namesIn(storeDir(s.store, 'running'))).toEqual([]);
  expect(namesIn(storeDir(s.store, 'failed'))).toEqual([]);
  return node;
}

describe('stopping and crashing during a push', () => {
  it('SIGTERM during a slow push: exit 0 soon after shutdownGrace, the push is aborted, its tasks are back in waiting/ with the lock released, and a new drain delivers them', async () => {
    const s = setup('refrelay-sigterm', '500ms');
    const { node, hookPid, queued } = await pushInProgress(s);
    const signalledAt = Date.now();
    node.signal('SIGTERM');
    expect(await node.exited).toEqual({ code: 0, signal: null });
    const tookMs = Date.now() - signalledAt;
    expect(tookMs).toBeGreaterThanOrEqual(500);
    expect(tookMs).toBeLessThan(3000);
    const messages = node.logs().map((line) => line.msg);
    for (const msg of [
      'stopping: finishing running pushes',
      'waiting for running pushes',
      'shutdown grace over: aborting running pushes',
      'refrelay node stopped',
    ]) {
      expect(messages).toContain(msg);
    }
    expect(node.logs().find((line) => line.msg === 'push failed')?.failure).toMatch(/^push aborted/);
    expect(node.problems()).toEqual([]);
    // The hook (and git under it) were stopped with the push; nothing landed.
    expect(isAlive(hookPid)).toBe(false);
    expect(refsOf(s.dest)).toEqual(new Map());
    expect(waitingTaskNames(s.store)).toEqual(queued);
    expect(namesIn(storeDir(s.store, 'running'))).toEqual([]);
    // An abort is not a failed attempt: no backoff for the next node.
    expect(readUriStateFile(s.store, s.key)).toBeUndefined();

    rmSync(join(s.dest, 'slow'));
    await expectDeliveredByDrain(s, 'node-2');
    expect(existsSync(join(s.dest, 'overlaps.log'))).toBe(false);
  });

  it('a second signal during shutdown exits at once with 1, stops the push and leaves the claim in running/; the same node id recovers and delivers it', async () => {
    const s = setup('refrelay-second-signal', '30s');
    const { node, hookPid, queued } = await pushInProgress(s);
    node.signal('SIGTERM');
    await node.waitForLog((line) => line.msg === 'waiting for running pushes', 5000);
    const signalledAt = Date.now();
    node.signal('SIGTERM');
    expect(await node.exited).toEqual({ code: 1, signal: null });
    expect(Date.now() - signalledAt).toBeLessThan(1500);
    expect(node.logs().map((line) => line.msg)).toContain('stopping at once');
    const claim = claimIn(s);
    expect(claim.folders).toEqual([s.key]);
    expect(claim.files).toEqual(['owner.json', ...queued].sort());
    expect(JSON.parse(claim.owner)).toMatchObject({ nodeId: 'node-1', pid: node.pid });
    expect(waitingTaskNames(s.store)).toEqual([]);
    // Its push does not live on without it: a recovered claim must not be pushed twice at once.
    await waitUntil('the orphaned hook to stop', () => !isAlive(hookPid), 1500);

    rmSync(join(s.dest, 'slow'));
    const again = await expectDeliveredByDrain(s, 'node-1');
    expect(again.logs().find((line) => line.msg === 'recovered own earlier claim')).toMatchObject({ lock: s.key, tasks: 2, formerPid: node.pid });
    expect(existsSync(join(s.dest, 'overlaps.log'))).toBe(false);
  });

  it('kill -9 during a push leaves the claim in running/; a restart with the same --node-id recovers it and delivers', async () => {
    const s = setup('refrelay-kill9', '500ms');
    const { node, queued } = await pushInProgress(s);
    node.signal('SIGKILL');
    expect(await node.exited).toEqual({ code: null, signal: 'SIGKILL' });
    const claim = claimIn(s);
    expect(claim.folders).toEqual([s.key]);
    expect(claim.files).toEqual(['owner.json', ...queued].sort());
    expect(JSON.parse(claim.owner)).toMatchObject({ nodeId: 'node-1', pid: node.pid });

    // A killed node's git push lives on as an orphan (nothing can stop it from inside a SIGKILLed
    // process); a supervisor's cgroup kill ends it in production. The test does the same.
    killGroupsWith(s.dest);
    rmSync(join(s.dest, 'slow'));
    const again = await expectDeliveredByDrain(s, 'node-1');
    expect(again.logs().find((line) => line.msg === 'recovered own earlier claim')).toMatchObject({ lock: s.key, tasks: 2, formerPid: node.pid });
  });

  it("a node with a different id does not take a dead node's claim at start-up", async () => {
    const s = setup('refrelay-other-node', '500ms');
    const { node } = await pushInProgress(s);
    node.signal('SIGKILL');
    await node.exited;
    killGroupsWith(s.dest);
    const before = claimIn(s);
    expect(before.folders).toEqual([s.key]);

    const other = start(s, 'node-2');
    // Five loop passes after its start-up recovery (the node heartbeat counter moves once a
    // pass, every 200 ms): a dead peer's claim is not this node's to recover at start-up (and
    // lockStale, 60 s by default, is far from over, so no takeover either).
    await waitUntil('five passes of node-2', () => nodeCounter(s, 'node-2') >= 5, 15_000);
    expect(claimIn(s)).toEqual(before);
    expect(waitingTaskNames(s.store)).toEqual([]);
    const messages = other.logs().map((line) => line.msg);
    expect(messages).not.toContain('recovered own earlier claim');
    expect(messages).not.toContain('claimed');
    other.signal('SIGTERM');
    expect(await other.exited).toEqual({ code: 0, signal: null });
    expect(other.problems()).toEqual([]);
    expect(claimIn(s)).toEqual(before);
    expect(refsOf(s.dest)).toEqual(new Map());

    // The claim is intact: its own node still recovers it.
    rmSync(join(s.dest, 'slow'));
    await expectDeliveredByDrain(s, 'node-1');
  });
});

describe('a signal while the node starts', () => {
  it('SIGTERM while the node is still reading its config is a stop request: the node exits 0 without starting, and its tasks stay waiting', async () => {
    const s = setup('refrelay-sigterm-at-start', '500ms');
    const queued = waitingTaskNames(s.store);
    const root = dirname(s.config);
    const bin = join(root, 'bin');
    mkdirSync(bin);
    const gate = join(root, 'config-gate');
    // The node reads its config with `git config`: held at a gate, the signal lands while the node starts.
    writeFileSync(
      join(bin, 'git'),
      [
        '#!/bin/sh',
        `if [ "$1" = config ] && [ ! -e '${gate}' ]; then`,
        `  : > '${gate}.reached'`,
        `  while [ ! -e '${gate}' ]; do sleep 0.05; done`,
        'fi',
        `PATH='${process.env.PATH ?? ''}' exec git "$@"`,
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1', env: { PATH: `${bin}:${process.env.PATH ?? ''}` } });
    nodes.push(node);
    await waitUntil('the node reading its config', () => existsSync(`${gate}.reached`) || undefined);
    node.signal('SIGTERM');
    writeFileSync(gate, '');
    expect(await node.exited).toEqual({ code: 0, signal: null });
    const messages = node.logs().map((line) => line.msg);
    expect(messages).toEqual(['stopping: finishing running pushes', 'refrelay node stopped before it started']);
    expect(node.problems()).toEqual([]);
    expect(waitingTaskNames(s.store)).toEqual(queued);
    // Peers never saw it: no heartbeat record was written.
    expect(existsSync(join(s.store, 'nodes', 'node-1.json'))).toBe(false);
    expect(refsOf(s.dest).size).toBe(0);
  });
});
