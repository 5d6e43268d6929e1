import { join } from 'node:path';
import { mapBounded } from '../runtime/map-bounded.js';
import { taskKey } from '../task/task.js';
import type { StoreContext } from './store-context.js';
import type { StoreStats } from './store-fs.js';
import { readdirTolerant } from './store-listing.js';
import { isTaskFileName } from './store-paths.js';
import type { WaitingTask } from './store-types.js';
import { readTaskFile } from './task-reader.js';

/** A task read before its claim, with what tells its file from another put under its name later. */
interface EarlyRead {
  readonly task: WaitingTask;
  readonly ino: number;
  readonly sizeBytes: number;
}

/** The reads of one waiting folder, and when they were made (monotonic). */
interface FolderReads {
  readonly reads: Map<string, EarlyRead>;
  readonly readAt: number;
}

/** Task files held read ahead of their claim: a few seconds of pushes, a few MB. */
const LIMITS = {
  /** Task files held, at most. */
  tasks: 4096,
  /** Their bytes, at most, reads under way included. */
  bytes: 8 * 1024 * 1024,
  /** A bigger task file is left to the claim (a task file may be up to 1 MiB; they are a few hundred bytes). */
  taskBytes: 64 * 1024,
  /** Reads older than this are dropped: their URI was claimed elsewhere, or is waiting for a slot. */
  maxAgeMs: 60_000,
};

/**
 * Task files read before their URI is claimed (DESIGN.md "Read-ahead"). A node reads the waiting
 * tasks of the URIs it expects to push next while their batch waits out its delay, so that the
 * claim, on the path to the push, renames and `lstat`s each file instead of reading it. A read is
 * used only when the claimed file is a regular file with the inode, size and mtime read (a rename
 * keeps them; a task published again under its name after a peer pushed it is a new file), and
 * only for files named by the hash of their content (`taskKey`), whose content the name fixes:
 * one rewritten in place within a timestamp tick still holds that task. Anything else — a file
 * named otherwise, one that arrived later, changed, or could not be read here — the claim reads
 * as before, and quarantines if it must. Bounded in tasks, bytes (reads under way counted at
 * their most) and age (checked on every listing); a folder's reads also go when this node claims
 * from it or a listing no longer has it.
 */
export class ReadAhead {
  private readonly folders = new Map<string, FolderReads>();
  private heldTasks = 0;
  private heldBytes = 0;

  constructor(private readonly ctx: StoreContext) {}

  /**
   * Reads the task files of each waiting folder not read ahead yet (one `readdir`, then one
   * bounded read per file) while room is left. `stillWanted`
   * is asked again before each folder (it may have been claimed from meanwhile). Never throws: a
   * failure here is the claim's to see.
   */
  async read(folders: readonly string[], stillWanted: (folder: string) => boolean): Promise<void> {
    const now = this.ctx.clock.monotonic();
    for (const folder of folders) {
      if (this.folders.has(folder) || !stillWanted(folder) || this.full()) continue;
      const entry: FolderReads = { reads: new Map(), readAt: now };
      this.folders.set(folder, entry);
      const dir = this.ctx.paths.waitingFolder(folder);
      const names = await readdirTolerant(this.ctx, dir, 'read ahead').catch(() => undefined);
      if (names === undefined) continue;
      await mapBounded(names.filter(isTaskFileName), this.ctx.concurrency, async (name) => {
        if (this.full()) return;
        // Room for the biggest file this may read, given back once its size is known.
        this.heldBytes += LIMITS.taskBytes;
        const outcome = await readTaskFile(this.ctx.fs, join(dir, name), LIMITS.taskBytes).catch(() => undefined);
        this.heldBytes -= LIMITS.taskBytes;
        // Claimed from or dropped meanwhile: what was read belongs to nobody now.
        if (outcome?.kind !== 'task' || this.folders.get(folder) !== entry) return;
        const key = name.slice(0, -'.json'.length);
        if (key !== taskKey(outcome.task)) return;
        entry.reads.set(name, {
          task: Object.freeze({ name, key, task: outcome.task, mtimeMs: outcome.mtimeMs }),
          ino: outcome.ino,
          sizeBytes: outcome.sizeBytes,
        });
        this.heldTasks++;
        this.heldBytes += outcome.sizeBytes;
      });
    }
  }

  /** Whether `name` of `folder` was read ahead (the claim then `lstat`s it instead of reading it). */
  has(folder: string, name: string): boolean {
    return this.folders.get(folder)?.reads.has(name) === true;
  }

  /** The task read ahead as `name` of `folder`, when `stats` of the claimed file show it is that same file. */
  matching(folder: string, name: string, stats: StoreStats): WaitingTask | undefined {
    const early = this.folders.get(folder)?.reads.get(name);
    if (early === undefined) return undefined;
    const same = stats.isFile() && stats.ino === early.ino && stats.size === early.sizeBytes && stats.mtimeMs === early.task.mtimeMs;
    return same ? early.task : undefined;
  }

  /** Drops the reads older than `maxAgeMs`: their URI was claimed elsewhere, or waits long for a slot. */
  expire(): void {
    const now = this.ctx.clock.monotonic();
    for (const [folder, { readAt }] of this.folders) if (now - readAt > LIMITS.maxAgeMs) this.drop(folder);
  }

  /** Forgets what was read of `folder`: it was claimed from, is no longer listed, or its reads are too old. */
  drop(folder: string): void {
    const entry = this.folders.get(folder);
    if (entry === undefined) return;
    this.folders.delete(folder);
    this.heldTasks -= entry.reads.size;
    for (const early of entry.reads.values()) this.heldBytes -= early.sizeBytes;
  }

  private full(): boolean {
    return this.heldTasks >= LIMITS.tasks || this.heldBytes >= LIMITS.bytes;
  }
}
