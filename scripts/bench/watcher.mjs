// Cost of the ref watcher (replication.watchRepositories) at 1,000 repositories: time to be
// ready, inotify watches, memory, and the delay from a ref update to its task being queued.
// A measurement to document, not a target: the baseline is this process before watching.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { RefWatcher } from '../../dist/intake/ref-watcher.js';
import { SavedRefSnapshots } from '../../dist/intake/saved-ref-snapshots.js';
import { validateConfig } from '../../dist/config/load-config.js';
import { TaskStore } from '../../dist/store/task-store.js';
import { silentLog } from '../../dist/runtime/log.js';
import { gitEnv } from './cluster-util.mjs';
import { fmt, withTempDir } from './util.mjs';

function inotifyWatches() {
  let watches = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) !== 'anon_inode:inotify') continue;
      watches += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((line) => line.startsWith('inotify wd:')).length;
    } catch {
      // fd closed meanwhile
    }
  }
  return watches;
}

export async function run({ quick }) {
  const count = quick ? 100 : 1000;
  return withTempDir('watcher', async (root) => {
    const template = join(root, 'template.git');
    execFileSync('git', ['init', '-q', '--bare', template], { env: gitEnv });
    const work = join(root, 'work');
    mkdirSync(work);
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: work, env: gitEnv });
    execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'x'], { cwd: work, env: gitEnv });
    execFileSync('git', ['push', '-q', template, 'main', 'main:refs/heads/b1', 'main:refs/heads/b2'], { cwd: work, env: gitEnv });
    for (let i = 0; i < count; i++) cpSync(template, join(root, 'base', `team${i % 10}`, `repo${i}.git`), { recursive: true });
    const entries = [
      ['replication', 'storepath', join(root, 'store')],
      ['replication', 'basepath', join(root, 'base')],
      ['replication', 'watchrepositories', 'true'],
      ['replication', 'watchrepositorieslimit', String(count)],
    ].map(([section, name, value]) => ({ section, subsection: undefined, name, value }));
    entries.push({ section: 'remote', subsection: 'm', name: 'url', value: `${root}/dest/\${name}.git` });
    const config = validateConfig(entries, 'bench.config', 'host').config;
    const store = new TaskStore({ root: config.storePath, nodeId: 'bench' });
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const watchesBefore = inotifyWatches();
    // As a daemon runs it: with its snapshots saved on local disk, beside the spool.
    const saved = new SavedRefSnapshots(join(root, 'spool', 'ref-snapshots'));
    const newWatcher = () =>
      new RefWatcher({
        config: () => config,
        store,
        log: process.env.BENCH_DEBUG ? { debug: console.log, info: console.log, warn: console.log, error: console.log } : silentLog,
        saved,
      });
    // The first start saves a snapshot of every repository (fsync each); a restart reads them back.
    let started = performance.now();
    const first = newWatcher();
    await first.start();
    const firstReadyMs = performance.now() - started;
    await first.stop();
    const watcher = newWatcher();
    started = performance.now();
    await watcher.start();
    const readyMs = performance.now() - started;
    const watches = inotifyWatches() - watchesBefore;
    const rssMb = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
    // Latency: one ref update in one repository until its task is in waiting/.
    started = performance.now();
    execFileSync('git', ['update-ref', 'refs/heads/b1', 'refs/heads/main'], { cwd: join(root, 'base', 'team3', 'repo3.git'), env: gitEnv });
    execFileSync('git', ['update-ref', '-d', 'refs/heads/b2'], { cwd: join(root, 'base', 'team3', 'repo3.git'), env: gitEnv });
    while ((await store.listWaitingNames()).length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const latencyMs = performance.now() - started;
    await watcher.stop();
    return {
      pass: watcher.tasksQueued >= 1,
      summary: `${count} repositories watched: ${watches} inotify watches (${(watches / count).toFixed(1)} per repository), +${rssMb.toFixed(0)} MB RSS, ready in ${fmt(firstReadyMs)} at the first start (saving every snapshot) and ${fmt(readyMs)} at a restart (comparing with them); ref update → task queued in ${fmt(latencyMs)}`,
      details: [
        'the latency includes the 150 ms debounce; this machine allows ' +
          readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8').trim() +
          ' watches per user',
      ],
    };
  });
}
