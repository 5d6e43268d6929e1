import { readSpool, removeSpooled, spooledNames } from '../intake/spool.js';
import type { Log } from '../observe/log.js';
import type { Task } from '../task/task.js';
import type { TaskStore } from '../store/task-store.js';

/** Tasks published per `createMany`: one fsync of waiting/ each, and spool files go as each batch lands. */
const FORWARD_BATCH = 500;

export interface SpoolForwarderOptions {
  /** This store's folder in the local spool (`intake/spool.ts` `spoolDirFor`). */
  readonly dir: string;
  readonly store: Pick<TaskStore, 'createMany'>;
  readonly log: Log;
  /** Store clock minus local clock: a spooled file's mtime is local, a task's due time is store time. */
  readonly storeClockOffsetMs: () => number;
}

export interface ForwardReport {
  readonly forwarded: number;
  readonly quarantined: number;
}

/**
 * Moves what `enqueue` spooled on this machine into the store (DESIGN.md invariant 9). Each task
 * is published with the store's no-clobber create, backdated to when it was enqueued, and its
 * spool file is removed only once `createMany` has resolved, i.e. the task is durable in the
 * store: a crash in between leaves a spool file whose task is already queued, and forwarding it
 * again is a no-op. Several nodes of the store on one machine may forward at once for the same
 * reason.
 */
export class SpoolForwarder {
  private waitingCount = 0;

  constructor(private readonly options: SpoolForwarderOptions) {}

  /** Spooled tasks seen by the last tick that are not in the store yet. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** One pass: a `readdir` when the spool is empty. Store errors reject (the spool is kept for the next pass). */
  async tick(): Promise<ForwardReport> {
    const { dir, store, log } = this.options;
    if ((await spooledNames(dir)).length === 0) {
      this.waitingCount = 0;
      return { forwarded: 0, quarantined: 0 };
    }
    const reading = await readSpool(dir);
    for (const bad of reading.quarantined) log.error({ file: bad.name, reason: bad.reason, spool: dir }, 'moved an unreadable spool file to corrupt/');
    this.waitingCount = reading.tasks.length;
    const offset = this.options.storeClockOffsetMs();
    let forwarded = 0;
    for (let start = 0; start < reading.tasks.length; start += FORWARD_BATCH) {
      const batch = reading.tasks.slice(start, start + FORWARD_BATCH);
      const enqueuedAt = new Map<Task, Date>(batch.map((spooled) => [spooled.task, new Date(spooled.enqueuedAtMs + offset)]));
      await store.createMany(batch.map((spooled) => spooled.task), { mtimeOf: (task) => enqueuedAt.get(task) });
      await Promise.all(batch.map((spooled) => removeSpooled(spooled.path)));
      forwarded += batch.length;
      this.waitingCount -= batch.length;
    }
    if (forwarded > 0) log.info({ tasks: forwarded, spool: dir }, 'forwarded spooled tasks into the store');
    return { forwarded, quarantined: reading.quarantined.length };
  }
}
