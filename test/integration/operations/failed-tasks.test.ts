import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { taskKey, uriKey } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { appSource, git, initBare, writeHook } from '../../support/git.js';
import { RefrelayNode, storeDir, writeConfig } from '../../support/refrelay-node.js';
import { namesIn } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const nodes: RefrelayNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

const DECLINED = 'rejected by the destination: [remote rejected] (pre-receive hook declined)';

interface Setup {
  root: string;
  store: string;
  source: string;
  config: string;
  /** The destination's repository, and its URL as tasks carry it. */
  dest: string;
}

/**
 * Source `app` with main and feature; a destination `dr` whose pre-receive hook refuses any push
 * that carries refs/heads/blocked (and takes everything else), as a policy on a real server would.
 */
function setup(label: string, replication: string[] = []): Setup {
  const root = tempDir(label);
  const { store, base, source } = appSource(root);
  git(source, ['update-ref', 'refs/heads/blocked', 'refs/heads/main']);
  const dest = initBare(join(root, 'dr', 'app.git'));
  writeHook(dest, 'pre-receive', '#!/bin/sh\nwhile read old new ref; do [ "$ref" = refs/heads/blocked ] && exit 1; done\nexit 0\n');
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${store}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 0',
    ...replication.map((line) => `  ${line}`),
    '[remote "dr"]',
    `  url = ${join(root, 'dr')}/\${name}.git`,
    '  replicationDelay = 0',
  ]);
  return { root, store, source, config, dest };
}

function enqueue(s: Setup, refs: string[]): void {
  const result = runCli(['enqueue', '--config', s.config, '--project', 'app', ...refs.flatMap((ref) => ['--ref', ref])]);
  expect(result).toMatchObject({ status: 0, stderr: '' });
}

async function drain(s: Setup): Promise<{ node: RefrelayNode; code: number | null }> {
  const node = RefrelayNode.start({ config: s.config, nodeId: 'node-1', drain: true });
  nodes.push(node);
  const { code } = await node.exited;
  return { node, code };
}

/** The one-ref task the drain parked for refs/heads/blocked: its key and its reason record. */
function parkedBlocked(s: Setup): { key: string; reason: { at: number; reason: string } } {
  const key = taskKey({ project: 'app', refs: ['refs/heads/blocked'], uri: s.dest, remote: 'dr' });
  const reason = JSON.parse(readFileSync(storeDir(s.store, 'failed', uriKey(s.dest), `${key}.json.reason.json`), 'utf8')) as { at: number; reason: string };
  return { key, reason };
}

function since(at: number): string {
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

describe('what an operator sees of a ref the destination refuses', () => {
  it("logs the parked ref at warn with git's reason, and daemon --drain says what it parked and why before it exits 1", async () => {
    const s = setup('refrelay-failed-drain');
    enqueue(s, ['refs/heads/main', 'refs/heads/blocked']);

    const { node, code } = await drain(s);
    expect(code).toBe(1);
    expect(
      node
        .logs()
        .filter((line) => line.msg === 'ref parked in failed/')
        .map(({ level, project, ref, remote, uri, reason }) => ({ level, project, ref, remote, uri, reason })),
    ).toEqual([{ level: 40, project: 'app', ref: 'refs/heads/blocked', remote: 'dr', uri: s.dest, reason: DECLINED }]);
    expect(node.stderr).toBe(
      'refrelay: 1 task moved to failed/ during this run:\n' +
        `  ${s.dest} refs/heads/blocked: ${DECLINED}\n` +
        'refrelay: see them with `refrelay failed list`; put them back with `refrelay retry`, or drop them with `refrelay failed drop`\n',
    );
    expect(git(s.dest, ['rev-parse', 'refs/heads/main']).trim()).toBe(git(s.source, ['rev-parse', 'refs/heads/main']).trim());

    // status names the task and the reason, not only a count.
    const status = runCli(['status', '--config', s.config]);
    expect(status.status).toBe(0);
    const rows = status.stdout.split('\n');
    const header = rows.findIndex((row) => row.startsWith('FAILED URI'));
    expect(rows[header]).toMatch(/^FAILED URI\s+REMOTE\s+PROJECT\s+REFS\s+FAILED\s+REASON$/);
    expect(rows[header + 1]!.split(/\s{2,}/)).toEqual([s.dest, 'dr', 'app', 'refs/heads/blocked', expect.stringMatching(/^\d+s ago$/), DECLINED]);
    expect(rows[header + 2]).toBe('');
    const json = JSON.parse(runCli(['status', '--json', '--config', s.config]).stdout) as { failed: unknown[] };
    const { key, reason } = parkedBlocked(s);
    expect(json.failed).toEqual([
      expect.objectContaining({ taskKey: key, uri: s.dest, remote: 'dr', project: 'app', refs: ['refs/heads/blocked'], reason: DECLINED, failedAt: reason.at }),
    ]);
  });
});

/** `failed list`'s text for the parked refs/heads/blocked task, header included, as an operator reads it. */
function listText(s: Setup, key: string, at: number): string {
  const widths = [40, 'REMOTE'.length, s.dest.length, 'PROJECT'.length, 'refs/heads/blocked'.length, 'SINCE'.padEnd(20).length];
  const row = (cells: string[]): string => cells.map((cell, i) => (i < widths.length ? cell.padEnd(widths[i]!) : cell)).join('  ');
  return `${row(['TASK', 'REMOTE', 'URI', 'PROJECT', 'REFS', 'SINCE', 'REASON'])}\n${row([key, 'dr', s.dest, 'app', 'refs/heads/blocked', since(at), DECLINED])}\n`;
}

describe('refrelay failed list and failed drop', () => {
  it('lists the parked task with its reason, drops it by key into failed/dropped/ with who and when, and then neither retry nor status sees it', async () => {
    const s = setup('refrelay-failed-drop');
    enqueue(s, ['refs/heads/main', 'refs/heads/blocked']);
    expect((await drain(s)).code).toBe(1);
    const { key, reason } = parkedBlocked(s);

    expect(runCli(['failed', 'list', '--config', s.config])).toEqual({ status: 0, stdout: listText(s, key, reason.at), stderr: '' });
    const json = JSON.parse(runCli(['failed', 'list', '--json', '--config', s.config]).stdout) as { version: number; failed: unknown[] };
    expect(json).toEqual({
      version: 1,
      failed: [
        {
          uriKey: uriKey(s.dest),
          name: `${key}.json`,
          taskKey: key,
          uri: s.dest,
          remote: 'dr',
          project: 'app',
          refs: ['refs/heads/blocked'],
          reason: DECLINED,
          failedAt: reason.at,
          failedAgeMs: expect.any(Number),
        },
      ],
    });

    // Usage problems: exit 2, nothing moved.
    const usage = (args: string[]) => runCli(['failed', 'drop', '--config', s.config, ...args]);
    expect(usage([])).toEqual({
      status: 2,
      stdout: '',
      stderr: 'refrelay: failed drop: give --all, --remote NAME, --uri SUBSTRING, --project PATTERN or TASKKEY… (see refrelay failed list)\n',
    });
    expect(usage(['--all', '--remote', 'dr'])).toEqual({
      status: 2,
      stdout: '',
      stderr: 'refrelay: failed drop: --all drops every failed task; give it alone, or narrow with --remote, --uri, --project or TASKKEY… instead\n',
    });
    expect(usage(['3f78'])).toEqual({
      status: 2,
      stdout: '',
      stderr: 'refrelay: failed drop: "3f78" is not a task key (40 hex digits, as refrelay failed list shows them)\n',
    });
    // Nothing matched: as retry, exit 0 and say so.
    expect(usage(['--remote', 'nosuch'])).toEqual({ status: 0, stdout: 'Nothing to drop\n', stderr: '' });
    expect(usage(['--project', 'app', '--dry-run'])).toEqual({ status: 0, stdout: `would drop 1 failed task:\n${listText(s, key, reason.at)}`, stderr: '' });
    expect(namesIn(storeDir(s.store, 'failed'))).toEqual([uriKey(s.dest)]);

    const dropped = runCli(['failed', 'drop', key, '--config', s.config]);
    const [folder] = namesIn(storeDir(s.store, 'failed', 'dropped'));
    expect(dropped).toEqual({
      status: 0,
      stdout: `dropped 1 failed task into failed/dropped/${folder} (deleted after 7d, replication.retention):\n${listText(s, key, reason.at)}`,
      stderr: '',
    });
    expect(namesIn(storeDir(s.store, 'failed'))).toEqual(['dropped']);
    const record = JSON.parse(readFileSync(storeDir(s.store, 'failed', 'dropped', folder!, 'dropped.json'), 'utf8')) as Record<string, unknown>;
    expect(record).toEqual({ version: 1, droppedAt: expect.any(Number), by: `${userInfo().username}@${hostname()}`, via: 'cli', nodeId: hostname() });
    expect(JSON.parse(readFileSync(storeDir(s.store, 'failed', 'dropped', folder!, `${uriKey(s.dest)}.${key}.json.reason.json`), 'utf8'))).toMatchObject({
      reason: DECLINED,
    });

    expect(runCli(['failed', 'list', '--config', s.config])).toEqual({ status: 0, stdout: 'No failed tasks\n', stderr: '' });
    expect(runCli(['retry', '--all', '--config', s.config])).toEqual({ status: 0, stdout: 'Nothing to retry\n', stderr: '' });
    expect(JSON.parse(runCli(['status', '--json', '--config', s.config]).stdout)).toMatchObject({ totals: { failed: 0 }, failed: [] });
    // Again: the task is gone already; still exit 0, and the key is named.
    expect(runCli(['failed', 'drop', key, '--config', s.config])).toEqual({ status: 0, stdout: `Nothing to drop\nno failed task ${key}\n`, stderr: '' });
  });

  it("retry refuses an empty --uri or --remote as failed drop does, instead of taking '' to match every task", async () => {
    const s = setup('refrelay-retry-empty');
    const task = { project: 'app', refs: ['refs/heads/blocked'], uri: s.dest, remote: 'dr' };
    await new TaskStore({ root: s.store, nodeId: 'hook' }).parkFailed(task, { reason: DECLINED, refs: task.refs });
    for (const option of ['--uri', '--remote']) {
      for (const command of [['retry'], ['failed', 'drop']]) {
        expect(runCli([...command, option, '', '--config', s.config])).toEqual({
          status: 2,
          stdout: '',
          stderr: `refrelay: ${command.join(' ')}: ${option} needs a value\n`,
        });
      }
    }
    expect(namesIn(storeDir(s.store, 'failed', uriKey(s.dest)))).toEqual([`${taskKey(task)}.json`, `${taskKey(task)}.json.reason.json`]);
  });

  it('a daemon deletes drop folders older than replication.retention and keeps younger ones', async () => {
    const s = setup('refrelay-failed-sweep', ['retention = 1d']);
    const store = new TaskStore({ root: s.store, nodeId: 'hook' });
    const dropsDir = storeDir(s.store, 'failed', 'dropped');
    const drops: string[] = [];
    for (const ref of ['refs/heads/old', 'refs/heads/young']) {
      await store.parkFailed({ project: 'app', refs: [ref], uri: s.dest, remote: 'dr' }, { reason: DECLINED, refs: [ref] });
      expect(runCli(['failed', 'drop', '--all', '--config', s.config]).status).toBe(0);
      drops.push(namesIn(dropsDir).find((name) => !drops.includes(name))!);
    }
    const [old, young] = drops;
    const twoDaysAgo = (Date.now() - 2 * 24 * 3_600_000) / 1000;
    utimesSync(join(dropsDir, old!), twoDaysAgo, twoDaysAgo);

    const { node, code } = await drain(s);
    expect(code).toBe(0);
    expect(node.logs().find((line) => line.msg === 'deleted dropped failed tasks older than replication.retention')).toMatchObject({
      level: 30,
      folders: 1,
      retentionMs: 24 * 3_600_000,
    });
    expect(namesIn(dropsDir)).toEqual([young]);
  });
});

describe('verify and failed tasks', () => {
  it('names failed tasks whose refs are now in sync at the destination, and verify --fix drops them, recorded as dropped by verify', async () => {
    const s = setup('refrelay-failed-verify');
    enqueue(s, ['refs/heads/main', 'refs/heads/feature', 'refs/heads/blocked']);
    expect((await drain(s)).code).toBe(1);
    const { key } = parkedBlocked(s);

    // Still refused: that is drift, and the failed task is still needed.
    const drifted = runCli(['verify', '--config', s.config]);
    expect(drifted.stdout).toBe(`DRIFT        dr ${s.dest}: 1 missing (refs/heads/blocked)\n1 destination: 0 in sync, 1 drifted, 0 unreachable\n`);

    // A minute later someone lifts the policy and pushes the ref by hand: the destination is in
    // sync, the task needless. (The failure is made a minute old: verify judges only failures
    // older than its reading by more than the clock margin, lockStale / 4.)
    const reasonFile = storeDir(s.store, 'failed', uriKey(s.dest), `${key}.json.reason.json`);
    writeFileSync(reasonFile, JSON.stringify({ ...parkedBlocked(s).reason, at: Date.now() - 60_000 }));
    writeHook(s.dest, 'pre-receive', '#!/bin/sh\nexit 0\n');
    git(s.source, ['push', '-q', s.dest, 'refs/heads/blocked']);
    expect(runCli(['verify', '--config', s.config])).toEqual({
      status: 0,
      stdout: `in sync      dr ${s.dest} (3 refs)\nfailed/      dr ${s.dest}: 1 failed task whose refs are now in sync; \`refrelay verify --fix\` drops it\n1 destination: 1 in sync, 0 drifted, 0 unreachable\n`,
      stderr: '',
    });
    const json = JSON.parse(runCli(['verify', '--json', '--config', s.config]).stdout) as { failedInSync: unknown };
    expect(json.failedInSync).toEqual([{ remote: 'dr', uri: s.dest, taskKeys: [key], dropped: false }]);
    expect(namesIn(storeDir(s.store, 'failed'))).toEqual([uriKey(s.dest)]);

    expect(runCli(['verify', '--fix', '--config', s.config])).toEqual({
      status: 0,
      stdout: `in sync      dr ${s.dest} (3 refs)\nfailed/      dr ${s.dest}: dropped 1 failed task whose refs are now in sync\n1 destination: 1 in sync, 0 drifted, 0 unreachable; queued 0 tasks to repair the drift\n`,
      stderr: '',
    });
    expect(runCli(['failed', 'list', '--config', s.config]).stdout).toBe('No failed tasks\n');
    const [folder] = namesIn(storeDir(s.store, 'failed', 'dropped'));
    expect(JSON.parse(readFileSync(storeDir(s.store, 'failed', 'dropped', folder!, 'dropped.json'), 'utf8'))).toMatchObject({
      by: `${userInfo().username}@${hostname()}`,
      via: 'verify',
    });
    expect(runCli(['verify', '--config', s.config]).stdout).toBe(`in sync      dr ${s.dest} (3 refs)\n1 destination: 1 in sync, 0 drifted, 0 unreachable\n`);
  });
});
