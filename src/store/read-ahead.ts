import { join } from 'node:path';
import { mapBounded } from '../runtime/map-bounded.js';
import type { StoreContext } from './store-context.js';
import type { StoreStats } from './store-fs.js';
import { readdirTolerant } from './store-listing.js';
import { isTaskFileName } from './store-paths.js';
import type { WaitingTask } from './store-types.js';
import { readTaskFile } from './task-reader.js';
import { taskKey } from '../task/task.js';

/** A task read before its claim, with what tells its file from another put under its name later. */
interface EarlyRead {
  readonly task: WaitingTask;
  readonly ino: number;
  readonly sizeBytes: number;
  /** Named by the hash of its own content: any task file under that name holds the same task. */
  readonly selfNamed: boolean;
}

/**
 * Task files read before their URI is claimed (DESIGN.md "Read-ahead"). A node reads the waiting
 * tasks of the URIs it expects to push next while their batch waits out its delay, so that the
 * claim, on the path to the push, only renames each file. A task file is named by the hash of its
 * content (`taskKey`) and publishing never replaces one, so a task read ahead whose name is its own
 * hash is the task any file under that name holds: it is used as read. One named otherwise (a
 * Gerrit file, a hand-made one) is used only when an `lstat` of the claimed file shows the file
 * read (same inode, size and mtime; a rename keeps them). Anything else — a file that arrived
 * later, or could not be read here — the claim reads as before, and quarantines if it must.
 * At most `maxTasks` are held; a folder's reads go when it is claimed from or no longer listed.
 */
export class ReadAhead {
  private readonly folders = new Map<string, Map<string, EarlyRead>>();
  private held = 0;

  constructor(
    private readonly ctx: StoreContext,
    private readonly maxTasks: number,
  ) {}

  /** Tasks held. */
  get size(): number {
    return this.held;
  }

  /**
   * Reads the task files of each waiting folder not read ahead yet: one `readdir`, then one
   * bounded read per file, while room is left. Never throws: a failure here is the claim's to see.
   */
  async read(folders: readonly string[]): Promise<void> {
    for (const folder of folders) {
      if (this.folders.has(folder) || this.held >= this.maxTasks) continue;
      const reads = new Map<string, EarlyRead>();
      this.folders.set(folder, reads);
      const dir = this.ctx.paths.waitingFolder(folder);
      const names = await readdirTolerant(this.ctx, dir, 'read ahead').catch(() => undefined);
      if (names === undefined) continue;
      const room = Math.max(0, this.maxTasks - this.held);
      await mapBounded(names.filter(isTaskFileName).slice(0, room), this.ctx.concurrency, async (name) => {
        const outcome = await readTaskFile(this.ctx.fs, join(dir, name)).catch(() => undefined);
        // Claimed from or dropped meanwhile: what was read belongs to nobody now.
        if (outcome?.kind !== 'task' || this.folders.get(folder) !== reads) return;
        const key = name.slice(0, -'.json'.length);
        const task = Object.freeze({ name, key, task: outcome.task, mtimeMs: outcome.mtimeMs });
        reads.set(name, { task, ino: outcome.ino, sizeBytes: outcome.sizeBytes, selfNamed: key === taskKey(outcome.task) });
        this.held++;
      });
    }
  }

  /**
   * What the claim of `name` from `folder` may do with the read-ahead: use it as read (`task`), use
   * it if an `lstat` of the claimed file shows the same file (`check`), or read the file (undefined).
   */
  lookup(folder: string, name: string): { readonly use: 'task'; readonly task: WaitingTask } | { readonly use: 'check' } | undefined {
    const early = this.folders.get(folder)?.get(name);
    if (early === undefined) return undefined;
    return early.selfNamed ? { use: 'task', task: early.task } : { use: 'check' };
  }

  /** The task read ahead as `name` of `folder`, when `stats` of the claimed file show it is that same file. */
  matching(folder: string, name: string, stats: StoreStats): WaitingTask | undefined {
    const early = this.folders.get(folder)?.get(name);
    if (early === undefined) return undefined;
    const same = stats.isFile() && stats.ino === early.ino && stats.size === early.sizeBytes && stats.mtimeMs === early.task.mtimeMs;
    return same ? early.task : undefined;
  }

  /** Forgets what was read of `folder`: it was claimed from, or is no longer listed. */
  drop(folder: string): void {
    const reads = this.folders.get(folder);
    if (reads === undefined) return;
    this.held -= reads.size;
    this.folders.delete(folder);
  }
}
