import { readFileSync, statSync } from 'node:fs';
import * as fsPromises from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { spoolTasks } from '../../../src/intake/spool.js';
import { encodeTask, taskKey, type Task } from '../../../src/task/task.js';
import { useTempDirs } from '../../support/temp-dir.js';

/** Real file operations, with a hook before `utimes` where a test plays a forwarder claiming the file. */
const beforeUtimes = vi.hoisted(() => ({ hook: undefined as ((path: string) => Promise<void>) | undefined }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...real,
    utimes: async (...args: Parameters<typeof real.utimes>) => {
      await beforeUtimes.hook?.(String(args[0]));
      return real.utimes(...args);
    },
  };
});

const tempDir = useTempDirs();
afterEach(() => {
  beforeUtimes.hook = undefined;
});

const TASK: Task = { project: 'app', refs: ['refs/heads/main'], uri: 'ssh://dr.example.com/app.git', remote: 'dr' };

/**
 * DESIGN.md "The local spool": a task already spooled is the same task, touched again for a
 * forwarder that reads in place; when a forwarder claims it between the `link` that found it and
 * the touch, `enqueue` must write it again, or it would say "spooled" with nothing on disk.
 */
describe('spooling a task whose file a forwarder claims meanwhile', () => {
  it('writes the file again when it is gone before its touch, with the new enqueue time', async () => {
    const dir = join(tempDir('refrelay-spool'), 'spool');
    const path = join(dir, `${taskKey(TASK)}.json`);
    await spoolTasks(dir, '/store', [TASK], new Date(Date.UTC(2026, 0, 1)));
    let claimed = 0;
    beforeUtimes.hook = async (target) => {
      if (target !== path || claimed > 0) return;
      claimed++;
      await fsPromises.rename(path, join(dir, 'claimed-by-forwarder'));
    };

    await spoolTasks(dir, '/store', [TASK], new Date(Date.UTC(2026, 0, 2)));

    expect(claimed).toBe(1);
    expect(readFileSync(path, 'utf8')).toBe(encodeTask(TASK));
    expect(statSync(path).mtimeMs).toBe(Date.UTC(2026, 0, 2));
  });

  it('keeps the earlier file and its mtime when nobody claims it', async () => {
    const dir = join(tempDir('refrelay-spool'), 'spool');
    const path = join(dir, `${taskKey(TASK)}.json`);
    await spoolTasks(dir, '/store', [TASK], new Date(Date.UTC(2026, 0, 1)));

    await spoolTasks(dir, '/store', [TASK], new Date(Date.UTC(2026, 0, 2)));

    expect(statSync(path).mtimeMs).toBe(Date.UTC(2026, 0, 1));
  });
});
