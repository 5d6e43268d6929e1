import { EventEmitter } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { validateConfig } from '../../../src/config/load-config.js';
import type { ReplicationConfig } from '../../../src/config/types.js';
import { RefWatcher } from '../../../src/intake/ref-watcher.js';
import type { RefSnapshot } from '../../../src/intake/ref-snapshot.js';
import { silentLog } from '../../../src/runtime/log.js';
import type { Task } from '../../../src/task/task.js';
import { useTempDirs } from '../../support/temp-dir.js';

/** The watches: a test reports a change through `emitter` when it means one to be seen. */
const watches = vi.hoisted(() => ({ emitter: undefined as EventEmitter | undefined }));
vi.mock('chokidar', () => ({
  watch: () => {
    const emitter = Object.assign(new EventEmitter(), { close: async () => undefined, add: () => undefined });
    watches.emitter = emitter;
    queueMicrotask(() => emitter.emit('ready'));
    return emitter;
  },
}));

/** `git for-each-ref`, answered by the test. */
const refs = vi.hoisted(() => ({ read: undefined as ((repo: string) => Promise<RefSnapshot | undefined>) | undefined }));
vi.mock('../../../src/intake/ref-snapshot.js', async (importOriginal) => ({
  ...(await importOriginal<typeof import('../../../src/intake/ref-snapshot.js')>()),
  readRefSnapshot: (repo: string) => refs.read!(repo),
}));

const tempDir = useTempDirs();
const watchers: RefWatcher[] = [];
afterEach(async () => {
  for (const watcher of watchers.splice(0)) await watcher.stop();
  vi.useRealTimers();
});

const OLD = 'a'.repeat(40);
const NEW = 'b'.repeat(40);

function configFor(root: string): ReplicationConfig {
  const entries = [
    ['replication', undefined, 'storepath', join(root, 'store')],
    ['replication', undefined, 'basepath', join(root, 'base')],
    ['replication', undefined, 'watchrepositories', 'true'],
    ['remote', 'mirror', 'url', `${join(root, 'dest')}/\${name}.git`],
  ].map(([section, subsection, name, value]) => ({ section: section!, subsection, name: name!, value: value! }));
  const result = validateConfig(entries, 'test.config', 'host');
  if (result.config === undefined) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

/**
 * DESIGN.md "The flow", 1: the watches are in place before a repository's refs are read at start,
 * so a change made while they are read is either in what was read or seen by a watch. One seen
 * before the start gave the repository its snapshot has nothing to compare with then; it must be
 * scanned once the snapshot is in place, or it waits for the repository's next change.
 */
describe('ref watcher start', () => {
  it('queues a change its watch reported while the start was still reading that repository', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const root = tempDir('refrelay-watch-start');
    const repo = join(root, 'base', 'app.git');
    mkdirSync(repo, { recursive: true });
    writeFileSync(join(repo, 'HEAD'), 'ref: refs/heads/main\n');
    let current: RefSnapshot = new Map([['refs/heads/main', OLD]]);
    let reads = 0;
    refs.read = async () => {
      const read = current;
      if (++reads === 1) {
        // The ref moves just after for-each-ref printed it; the watch reports it, and its
        // debounced scan runs, before this read has returned.
        current = new Map([['refs/heads/main', NEW]]);
        watches.emitter!.emit('all', 'change', join(repo, 'refs', 'heads', 'main'));
        await vi.advanceTimersByTimeAsync(1000); // well past the watcher's debounce (150 ms)
      }
      return read;
    };
    const queued: Task[] = [];
    const watcher = new RefWatcher({
      config: () => configFor(root),
      store: {
        createMany: async (tasks: readonly Task[]) => {
          queued.push(...tasks);
          return [];
        },
      },
      log: silentLog,
    });
    watchers.push(watcher);

    await watcher.start();

    expect(queued.map((task) => `${task.project} ${task.refs.join(',')} ${task.remote}`)).toEqual(['app refs/heads/main mirror']);
    expect(reads).toBe(2);
  });
});
