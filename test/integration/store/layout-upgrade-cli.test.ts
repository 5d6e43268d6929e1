import { mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { StorePaths, waitingFolderName } from '../../../src/store/store-paths.js';
import { encodeTask, laneOfTask, taskKey, uriKey, type Task } from '../../../src/task/task.js';
import { runCli } from '../../support/cli.js';
import { writeConfig } from '../../support/refrelay-node.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { spoolDirFor } from '../../../src/intake/spool.js';

/**
 * `refrelay init --upgrade` with the real CLI (DESIGN.md "Waiting folders (layout 2)"): every
 * command refuses a layout 1 store and names the upgrade; the upgrade refuses while a node may be
 * running on the store, and moves the flat tasks into their folders once every node is stopped.
 */
const tempDir = useTempDirs();

const tasks: Task[] = [
  { project: 'app', refs: ['refs/heads/main'], uri: 'ssh://h/app.git', remote: 'mirror' },
  { project: 'app', refs: ['..all..'], uri: 'ssh://h/app.git', remote: 'mirror' },
];
const QUEUED_AT = Date.UTC(2025, 0, 1, 12);

function layout1Site(label: string): { store: string; config: string; waiting: string; spool: string } {
  const root = tempDir(label);
  const store = join(root, 'store');
  const paths = new StorePaths(store);
  for (const dir of paths.folders) mkdirSync(dir, { recursive: true });
  writeFileSync(join(store, 'refrelay-store.json'), '{"format":1,"storeId":"s-1","createdAt":1234}\n');
  for (const task of tasks) {
    const file = join(paths.waiting, `${taskKey(task)}.json`);
    writeFileSync(file, encodeTask(task));
    utimesSync(file, QUEUED_AT / 1000, QUEUED_AT / 1000);
  }
  const config = writeConfig(
    join(root, 'replication.config'),
    ['[replication]', `  storePath = ${store}`, `  spoolPath = ${join(root, 'spool')}`, '[remote "mirror"]', '  url = ssh://h/${name}.git'],
    { initStore: false },
  );
  return { store, config, waiting: paths.waiting, spool: spoolDirFor(join(root, 'spool'), store) };
}

function beat(store: string, nodeId: string, record: Record<string, unknown>, atMs = Date.now()): void {
  const file = join(store, 'nodes', `${nodeId}.json`);
  writeFileSync(file, `${JSON.stringify({ nodeId, ...record })}\n`);
  utimesSync(file, atMs / 1000, atMs / 1000);
}

const folderOf = (task: Task): string => waitingFolderName(uriKey(task.uri), laneOfTask(task));

describe('refrelay init --upgrade', () => {
  it('every command refuses a layout 1 store; the upgrade waits for the nodes to stop, then moves the tasks and says so', () => {
    const s = layout1Site('refrelay-upgrade');
    const refused = `refrelay: the store at ${s.store} has layout 1; this refrelay needs layout 2: stop every node and run \`refrelay init --upgrade --config FILE\`\n`;
    for (const command of [['status'], ['init'], ['retry', '--all']]) {
      const result = runCli([...command, '--config', s.config]);
      expect(result.status, command.join(' ')).toBe(1);
      expect(result.stderr).toBe(refused);
    }

    // A hook meanwhile: the update waits in the local spool for a daemon started after the upgrade.
    const enqueue = runCli(['enqueue', '--config', s.config, '--project', 'app', '--ref', 'refs/heads/dev']);
    expect(enqueue.status).toBe(0);
    expect(enqueue.stderr).toBe(
      `refrelay: the store at ${s.store} cannot be written (it has layout 1, until \`refrelay init --upgrade\` has run); ` +
        `the update is spooled in ${s.spool} and will be forwarded by a daemon of this store on this machine\n`,
    );

    beat(s.store, 'node-1', { pid: 1, stoppedAt: null });
    const running = runCli(['init', '--upgrade', '--config', s.config]);
    expect(running.status).toBe(1);
    expect(running.stderr).toMatch(
      new RegExp(
        `^refrelay: refusing to upgrade the store at ${s.store}: nodes are running on it: node-1 \\(last beat \\d+s ago\\)\\. ` +
          'Stop every node first \\(a node counts as running until its record in nodes/ is 1m30s old, 3 × distributionInterval \\+ lockStale\\), ' +
          'or pass --force if they are stopped\\n$',
      ),
    );
    expect(readdirSync(s.waiting).sort()).toEqual(tasks.map((task) => `${taskKey(task)}.json`).sort());

    // node-1 stopped cleanly; node-2 was killed long ago.
    beat(s.store, 'node-1', { pid: 1, stoppedAt: Date.now() });
    beat(s.store, 'node-2', { pid: 2, stoppedAt: null }, Date.now() - 10 * 60_000);
    const upgraded = runCli(['init', '--upgrade', '--config', s.config]);
    expect(upgraded.stderr).toBe('');
    expect(upgraded.status).toBe(0);
    expect(upgraded.stdout).toBe(`upgraded the store at ${s.store} to layout 2: 2 tasks moved into their URI folders\n`);
    expect(readdirSync(s.waiting).sort()).toEqual(tasks.map(folderOf).sort());
    for (const task of tasks) expect(statSync(join(s.waiting, folderOf(task), `${taskKey(task)}.json`)).mtimeMs).toBe(QUEUED_AT);
    expect(JSON.parse(readFileSync(join(s.store, 'refrelay-store.json'), 'utf8'))).toEqual({ format: 2, storeId: 's-1', createdAt: 1234 });

    const again = runCli(['init', '--upgrade', '--config', s.config]);
    expect(again.status).toBe(0);
    expect(again.stdout).toBe(`the store at ${s.store} is already at layout 2; nothing to do\n`);
    const init = runCli(['init', '--config', s.config]);
    expect(init.stdout).toBe(`already a refrelay store: ${s.store}\n`);
  });

  it('--force upgrades although a node record is fresh, and reports what it left alone; --force alone is a usage error', () => {
    const s = layout1Site('refrelay-upgrade-force');
    writeFileSync(join(s.waiting, 'notes.txt'), 'not a task\n');
    beat(s.store, 'node-1', { pid: 1, stoppedAt: null });

    const usage = runCli(['init', '--force', '--config', s.config]);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toBe('refrelay: init: --force goes with --upgrade\n');

    const forced = runCli(['init', '--upgrade', '--force', '--config', s.config]);
    expect(forced.stderr).toBe('');
    expect(forced.status).toBe(0);
    expect(forced.stdout).toBe(
      `upgraded the store at ${s.store} to layout 2: 2 tasks moved into their URI folders\n` +
        'left alone in ref-updates/waiting/: "notes.txt" (not a task file name)\n',
    );
    expect(readdirSync(s.waiting).sort()).toEqual([...tasks.map(folderOf), 'notes.txt'].sort());
  });

  it('a task that cannot be sorted keeps the store at layout 1, with exit 1 and what is in the way', () => {
    const s = layout1Site('refrelay-upgrade-blocked');
    writeFileSync(join(s.waiting, folderOf(tasks[0]!)), 'a file under a folder name\n');

    const blocked = runCli(['init', '--upgrade', '--config', s.config]);
    expect(blocked.status).toBe(1);
    expect(blocked.stderr).toBe(
      `refrelay: the store at ${s.store} stays at layout 1: 1 task file in ref-updates/waiting/ could not be moved into its folder: ` +
        `${taskKey(tasks[0]!)}.json (waiting/${folderOf(tasks[0]!)} is a regular file, not a folder). ` +
        'Move aside what is in the way, then run `refrelay init --upgrade` again (what was moved stays moved)\n',
    );
    expect(JSON.parse(readFileSync(join(s.store, 'refrelay-store.json'), 'utf8'))).toMatchObject({ format: 1 });
  });
});
