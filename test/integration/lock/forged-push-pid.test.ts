import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { uriKey } from '../../../src/task/task.js';
import { makeRecordingDestination } from '../../support/destination.js';
import { startGitDaemon, type GitDaemon } from '../../support/git-daemon.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { isAlive } from '../../support/processes.js';
import { RefrelayNode, storeDir, writeConfig, type LogLine } from '../../support/refrelay-node.js';
import { waitUntil, waitingTaskNames } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
const daemons: GitDaemon[] = [];
const bystanders: ChildProcess[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
  for (const daemon of daemons.splice(0)) await daemon.stop();
  for (const child of bystanders.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

const NOT_PROVED = 'the recorded push process could not be proved to be the orphaned push; not signalling it';
const TOOK_OVER = 'took over a stale URI lock';

/** Start time (field 22 of /proc/<pid>/stat, counted after the command name's last ")") and the boot id, read here independently of the code under test. */
function startTimeOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(
    stat
      .slice(stat.lastIndexOf(')') + 1)
      .trim()
      .split(/\s+/)[19],
  );
}
const bootId = (): string => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** A process in a group of its own, as a forged record would name one: an unrelated bystander. */
function startBystander(): ChildProcess {
  return startInGroup('sleep', ['300'], 'ignore');
}

/**
 * A live git leading a group of its own, run by this user, whose parent (this test process) is a
 * node: all a push that a live node on this host runs right now shows of itself. It waits on its
 * open stdin until killed.
 */
function startLivePush(): ChildProcess {
  return startInGroup('git', ['hash-object', '--stdin'], ['pipe', 'ignore', 'ignore']);
}

function startInGroup(command: string, args: string[], stdio: 'ignore' | ['pipe', 'ignore', 'ignore']): ChildProcess {
  const child = spawn(command, args, { detached: true, stdio });
  child.unref();
  bystanders.push(child);
  return child;
}

interface Setup {
  store: string;
  config: string;
  work: string;
  uri(project: string): string;
  dest(project: string): string;
  source(project: string): string;
}

/** Sources and recording destinations (behind git daemon) for `projects`, and a node config with a short lockStale. */
async function setUp(projects: string[]): Promise<Setup> {
  const root = tempDir('refrelay-forged');
  const base = join(root, 'base');
  const destBase = join(root, 'dest');
  const work = makeWorkTree(join(root, 'work'), 2);
  git(work, ['branch', 'second', 'HEAD~1']);
  for (const project of projects) {
    const source = initBare(join(base, `${project}.git`));
    git(work, ['push', '-q', source, 'main', 'second']);
    makeRecordingDestination(join(destBase, `${project}.git`));
  }
  const daemon = await startGitDaemon(destBase);
  daemons.push(daemon);
  const store = join(root, 'store');
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 0',
    '  lockStale = 2s',
    '  httpListen = off',
    '[remote "mirror"]',
    `  url = ${daemon.url('${name}.git')}`,
    '  push = +refs/heads/*:refs/heads/*',
    '  replicationDelay = 0',
    '  replicationRetry = 1s',
  ]);
  return {
    store,
    config,
    work,
    uri: (project) => daemon.url(`${project}.git`),
    dest: (project) => join(destBase, `${project}.git`),
    source: (project) => join(base, `${project}.git`),
  };
}

/**
 * A held lock of a node that is gone: the owner record (`fields` forged over a plausible one,
 * naming this host as the daemon records it) and a task for refs/heads/main claimed under it.
 * Its counter never moves, so the node judges it stale after lockStale.
 */
async function forgeHeldLock(s: Setup, project: string, fields: Record<string, unknown>): Promise<string> {
  const uri = s.uri(project);
  const lockName = uriKey(uri);
  const leaseId = `ghost.${project}`;
  mkdirSync(storeDir(s.store, 'running', lockName, leaseId), { recursive: true });
  const now = Date.now();
  const record = { version: 1, nodeId: 'ghost', pid: 999_999, host: hostname(), leaseId, counter: 7, uri, acquiredAt: now, heartbeatAt: now, ...fields };
  writeFileSync(join(storeDir(s.store, 'running', lockName, leaseId), 'owner.json'), `${JSON.stringify(record)}\n`);
  const tasks = new TaskStore({ root: s.store, nodeId: 'hook' });
  await tasks.create({ project, refs: ['refs/heads/main'], uri, remote: 'mirror' });
  const claimed = await tasks.claim(`${lockName}/${leaseId}`, lockName);
  expect(claimed).toHaveLength(1);
  return lockName;
}

function delivered(s: Setup, project: string, ref: string): boolean {
  return refsOf(s.dest(project)).get(ref) === refsOf(s.source(project)).get(ref);
}

function linesFor(node: RefrelayNode, msg: string, lockName: string): LogLine[] {
  return node.logs().filter((line) => line.msg === msg && line.lock === lockName);
}

async function queueDrained(s: Setup): Promise<void> {
  await waitUntil('the queue to drain', () => waitingTaskNames(s.store).length === 0 && readdirSync(storeDir(s.store, 'running')).length === 0, 15_000);
}

describe('a forged or outdated owner record naming a live process on this host', () => {
  it('takes the stale lock over and delivers its task, but never signals the process: not git, or a record without start time and boot id', async () => {
    const s = await setUp(['forged', 'legacy']);
    const bystander = startBystander();
    const pid = bystander.pid!;
    // Everything a record can say matches the live process, except that it is not a git push.
    const forged = await forgeHeldLock(s, 'forged', { pushPid: pid, pushStartTime: startTimeOf(pid), bootId: bootId() });
    // A record as the earlier version wrote it: a pid and nothing to prove it by.
    const legacy = await forgeHeldLock(s, 'legacy', { pushPid: pid });

    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1' });
    nodes.push(node);
    await node.waitForLog((line) => line.msg === TOOK_OVER && line.lock === forged, 15_000);
    await node.waitForLog((line) => line.msg === TOOK_OVER && line.lock === legacy, 15_000);
    await queueDrained(s);
    await waitUntil('both tasks delivered', () => delivered(s, 'forged', 'refs/heads/main') && delivered(s, 'legacy', 'refs/heads/main'), 15_000);

    expect(isAlive(pid)).toBe(true);
    expect(linesFor(node, TOOK_OVER, forged)[0]).toMatchObject({ formerNode: 'ghost', tasks: 1 });
    expect(linesFor(node, TOOK_OVER, legacy)[0]).toMatchObject({ formerNode: 'ghost', tasks: 1 });
    // Said once per lock, with the lock and the pid and nothing else the record holds.
    for (const [lockName, reason] of [
      [forged, 'not-git'],
      [legacy, 'unrecorded'],
    ] as const) {
      const warnings = linesFor(node, NOT_PROVED, lockName);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 40, pushPid: pid, reason });
      expect(JSON.stringify(warnings[0])).not.toContain('ghost');
    }
    // Nor was the lock held up waiting for the bystander to end.
    expect(node.logs().some((line) => line.msg === "waiting for the former holder's git push to end")).toBe(false);
    expect(node.problems()).toEqual([]);
  });

  it('never signals nor waits for a live push whose parent is still a node, though every other fact of the record matches it', async () => {
    const s = await setUp(['live']);
    const push = startLivePush();
    const pid = push.pid!;
    await waitUntil('git to run', () => readFileSync(`/proc/${pid}/cmdline`, 'utf8').startsWith('git\0'), 5_000);
    const live = await forgeHeldLock(s, 'live', { pushPid: pid, pushStartTime: startTimeOf(pid), bootId: bootId() });

    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1' });
    nodes.push(node);
    await node.waitForLog((line) => line.msg === TOOK_OVER && line.lock === live, 15_000);
    await queueDrained(s);
    await waitUntil('the task delivered', () => delivered(s, 'live', 'refs/heads/main'), 15_000);

    expect(isAlive(pid)).toBe(true);
    expect(push.exitCode).toBeNull();
    expect(push.signalCode).toBeNull();
    expect(linesFor(node, NOT_PROVED, live)).toMatchObject([{ level: 40, pushPid: pid, reason: 'parent-may-be-node' }]);
    expect(node.logs().some((line) => line.msg === "waiting for the former holder's git push to end")).toBe(false);
    expect(node.problems()).toEqual([]);
  });

  it("pushPid 0 (the node's own process group) and 1 (every process): the node survives, takes both locks over and keeps delivering", async () => {
    const s = await setUp(['zero', 'one']);
    const zero = await forgeHeldLock(s, 'zero', { pushPid: 0, pushStartTime: startTimeOf(process.pid), bootId: bootId() });
    const one = await forgeHeldLock(s, 'one', { pushPid: 1, pushStartTime: startTimeOf(1), bootId: bootId() });
    const bystander = startBystander();

    const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1' });
    nodes.push(node);
    await node.waitForLog((line) => line.msg === TOOK_OVER && line.lock === zero, 15_000);
    await node.waitForLog((line) => line.msg === TOOK_OVER && line.lock === one, 15_000);
    await queueDrained(s);
    await waitUntil('both tasks delivered', () => delivered(s, 'zero', 'refs/heads/main') && delivered(s, 'one', 'refs/heads/main'), 15_000);

    // Still running, and still delivering what comes next.
    expect(node.child.exitCode).toBeNull();
    expect(node.child.signalCode).toBeNull();
    const tasks = new TaskStore({ root: s.store, nodeId: 'hook' });
    for (const project of ['zero', 'one']) await tasks.create({ project, refs: ['refs/heads/second'], uri: s.uri(project), remote: 'mirror' });
    await waitUntil('the next tasks delivered', () => delivered(s, 'zero', 'refs/heads/second') && delivered(s, 'one', 'refs/heads/second'), 15_000);
    expect(node.child.exitCode).toBeNull();
    expect(isAlive(bystander.pid!)).toBe(true);

    // pushPid 0 is no pid at all: dropped when the record is read. 1 is read, and refused.
    expect(linesFor(node, NOT_PROVED, zero)).toEqual([]);
    expect(linesFor(node, NOT_PROVED, one)).toMatchObject([{ pushPid: 1, reason: 'invalid-pid' }]);
    expect(node.problems()).toEqual([]);
  });
});
