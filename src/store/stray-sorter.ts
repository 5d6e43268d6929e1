import { join } from 'node:path';
import { mapBounded } from '../runtime/map-bounded.js';
import { moveAsideUnlessFile, sortLooseTasks } from './loose-tasks.js';
import type { StoreContext } from './store-context.js';

/**
 * Flat task files found at the top of waiting/ (written by hand or by a tool), sorted into their
 * folders a batch per pass (DESIGN.md "Strays"). A file that cannot be sorted, or whose sorting
 * fails, is reported and not tried again before the next read of waiting/: one stray never stops
 * a pass. An entry under a task's name that is no regular file (a FIFO, a symlink, a folder) is
 * moved to corrupt/ unread, as a listing of layout 1 did: sorting leaves such entries where they are.
 */
export class StraySorter {
  /** Flat task files of the last read of waiting/ not tried yet. */
  private loose: string[] = [];
  /** Flat task files that could not be sorted: tried again after the next read of waiting/. */
  private stuck: string[] = [];
  /** Why each of those could not be sorted, as last reported: said again only when it changes. */
  private readonly reported = new Map<string, string>();

  constructor(private readonly ctx: StoreContext) {}

  /** Those not sorted yet, and those that could not be. */
  get names(): string[] {
    return [...this.loose, ...this.stuck];
  }

  /** The flat task files of a new read of waiting/: every one is tried again. */
  listed(loose: string[]): void {
    this.loose = loose;
    this.stuck = [];
    const stillLoose = new Set(loose);
    for (const name of this.reported.keys()) if (!stillLoose.has(name)) this.reported.delete(name);
  }

  /** Sorts up to `limit` of them; `placed` hears of each folder that got a task. */
  async sortSome(limit: number, placed: (folder: string) => void): Promise<void> {
    if (this.loose.length === 0) return;
    const { ctx } = this;
    const batch = this.loose.splice(0, limit);
    const left = await mapBounded(batch, ctx.concurrency, async (name) => {
      try {
        const entry = (await sortLooseTasks(ctx, [name], { placed })).left[0];
        if (entry !== undefined && !entry.task) await moveAsideUnlessFile(ctx, name);
        return entry;
      } catch (error) {
        return { name, reason: error instanceof Error ? error.message : String(error), task: true };
      }
    });
    for (const entry of left) {
      // Not a task: moved aside, or an unreadable file that could not be (quarantine said so).
      if (entry === undefined || !entry.task) continue;
      this.stuck.push(entry.name);
      if (this.reported.get(entry.name) === entry.reason) continue;
      this.reported.set(entry.name, entry.reason);
      ctx.onEvent({ type: 'waiting-task-left', path: join(ctx.paths.waiting, entry.name), reason: entry.reason });
    }
  }
}
