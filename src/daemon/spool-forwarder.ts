import { WaitingFolderRefusedError } from '../errors.js';
import { claimSpool, realSpoolFiles, removeSpooled, type SpooledTask, type SpoolFiles } from '../intake/spool.js';
import { errnoName } from '../runtime/errno.js';
import { basename } from 'node:path';
import type { Log } from '../runtime/log.js';
import { redactUrl } from '../runtime/redact.js';
import type { Task } from '../task/task.js';
import type { TaskStore } from '../store/task-store.js';

/** Tasks published per `createEach`: one fsync of waiting/ each, and spool files go as each batch lands. */
const FORWARD_BATCH = 500;

export interface SpoolForwarderOptions {
  /** This store's folder in the local spool (`intake/spool.ts` `spoolDirFor`). */
  readonly dir: string;
  readonly store: Pick<TaskStore, 'createEach'>;
  readonly log: Log;
  /** Store clock minus local clock: a spooled file's mtime is local, a task's due time is store time. */
  readonly storeClockOffsetMs: () => number;
  /** The real file operations unless a test injects faults. */
  readonly files?: SpoolFiles;
}

export interface ForwardReport {
  readonly forwarded: number;
  readonly quarantined: number;
  /** Unreadable files that could not be moved to corrupt/: left in place. */
  readonly skipped: number;
}

/** A spool file forwarded but not removed: forwarded again only once it changes. */
interface Stuck {
  readonly mtimeMs: number;
  readonly ctimeMs: number;
  readonly sizeBytes: number;
  readonly reason: string;
}

/** A waiting folder the store refuses to write through (a file or a link under its name): its URI's spooled tasks stay spooled. */
interface RefusedFolder {
  readonly uri: string;
  readonly reason: string;
  readonly tasks: number;
}

const sameFile = (stuck: Stuck, spooled: SpooledTask): boolean =>
  stuck.mtimeMs === spooled.enqueuedAtMs && stuck.ctimeMs === spooled.ctimeMs && stuck.sizeBytes === spooled.sizeBytes;

/**
 * Moves what `enqueue` spooled on this machine into the store (DESIGN.md invariant 9). Each spool
 * file is claimed (renamed into `forwarding/`) before it is read, so an update spooled meanwhile
 * is a new file; its task is published with the store's no-clobber create, backdated to when it
 * was enqueued, and the claim is removed only once `createEach` reported it durable in the store:
 * a crash in between leaves a claim whose task is already queued, and forwarding it again is a
 * no-op. Several nodes of the store on one machine may forward at once for the same reason. Each
 * task lands on its own: one the store refuses (its URI's waiting folder name is taken) stays
 * spooled without holding back the others.
 */
export class SpoolForwarder {
  private waitingCount = 0;
  /**
   * By file name. In memory only: after a restart each is forwarded once more, which the store's
   * no-clobber create or a push of refs already there makes harmless.
   */
  private readonly stuck = new Map<string, Stuck>();
  /** Unreadable, unmovable files of the last pass, by name; each is logged once. */
  private skipped = new Map<string, string>();
  /** Waiting folders the store refused the last pass that went through, by path; each is logged once. */
  private refused = new Map<string, RefusedFolder>();
  /** Why the last pass that had files to claim read them in place instead; logged when it starts. */
  private claimRefused: string | undefined;

  private readonly files: SpoolFiles;

  constructor(private readonly options: SpoolForwarderOptions) {
    this.files = options.files ?? realSpoolFiles;
  }

  /** Spooled tasks seen by the last tick that are not in the store yet. */
  get waiting(): number {
    return this.waitingCount;
  }

  /** Why the spool needs a person (for /healthz), or undefined. */
  problem(): string | undefined {
    const { dir } = this.options;
    const problems: string[] = [];
    if (this.stuck.size > 0) {
      const reasons = [...new Set([...this.stuck.values()].map((stuck) => stuck.reason))].join(', ');
      problems.push(
        `${this.stuck.size} spool file(s) in ${dir} were forwarded but could not be removed (${reasons}): give this daemon's user write permission on that folder`,
      );
    }
    if (this.skipped.size > 0) {
      problems.push(
        `${this.skipped.size} unreadable spool file(s) in ${dir} could not be moved to corrupt/: check the permissions of that folder, with corrupt/ a plain folder in it`,
      );
    }
    if (this.refused.size > 0) {
      const folders = [...this.refused.values()];
      const tasks = folders.reduce((sum, folder) => sum + folder.tasks, 0);
      problems.push(
        `${tasks} spooled task(s) in ${dir} cannot be queued: ${folders.map((folder) => folder.reason).join(', ')}: move away what stands under that name in the store`,
      );
    }
    if (this.claimRefused !== undefined) {
      problems.push(
        `spool files in ${dir} could not be claimed before forwarding (${this.claimRefused}), so an update spooled again meanwhile can be missed: give this daemon's user write permission on that folder, with forwarding/ a plain folder in it`,
      );
    }
    return problems.length === 0 ? undefined : problems.join('; ');
  }

  /**
   * One pass: two `readdir`s when the spool is empty. A store failure rejects once the spool files
   * of the tasks that landed are removed (the others are kept for the next pass); a task whose
   * waiting folder the store refuses is kept and logged, and the pass goes on.
   */
  async tick(): Promise<ForwardReport> {
    const { dir, log } = this.options;
    const reading = await claimSpool(dir, this.files);
    // A pass with nothing to claim says nothing new: the state stays until a claim is tried again.
    if (reading.claims !== 'none-to-make') {
      const refused = reading.claims === 'made' ? undefined : reading.claims.refused;
      if (refused !== undefined && this.claimRefused === undefined) {
        log.warn({ reason: refused, spool: dir }, 'spool files are forwarded where enqueue put them, not claimed first');
      }
      this.claimRefused = refused;
    }
    for (const bad of reading.quarantined) log.error({ file: bad.name, reason: bad.reason, spool: dir }, 'moved an unreadable spool file to corrupt/');
    this.noteSkipped(reading.skipped);
    const pending = this.notStuck(reading.tasks);
    this.waitingCount = pending.length;
    const offset = this.options.storeClockOffsetMs();
    const refused = new Map<string, RefusedFolder>();
    let forwarded = 0;
    for (let start = 0; start < pending.length; start += FORWARD_BATCH) {
      const { landed, storeFailure } = await this.forward(pending.slice(start, start + FORWARD_BATCH), offset, refused);
      forwarded += landed;
      this.waitingCount -= landed;
      if (storeFailure !== undefined) throw storeFailure.error;
    }
    this.noteRefused(refused);
    if (forwarded > 0) log.info({ tasks: forwarded, spool: dir }, 'forwarded spooled tasks into the store');
    return { forwarded, quarantined: reading.quarantined.length, skipped: reading.skipped.length };
  }

  /** Logs each refused waiting folder the first pass it is refused (again once its tasks were queued meanwhile). */
  private noteRefused(refused: Map<string, RefusedFolder>): void {
    for (const [path, folder] of refused) {
      if (this.refused.get(path)?.reason === folder.reason) continue;
      const message =
        'the store refuses the waiting folder of spooled tasks: they stay in the spool and are tried again every pass until what stands under its name is moved away';
      this.options.log.error({ uri: redactUrl(folder.uri), tasks: folder.tasks, reason: folder.reason, spool: this.options.dir }, message);
    }
    this.refused = refused;
  }

  /** Logs each unreadable, unmovable file the first pass it is seen. */
  private noteSkipped(files: readonly { readonly name: string; readonly reason: string }[]): void {
    const skipped = new Map(files.map((bad) => [bad.name, bad.reason]));
    for (const [name, reason] of skipped) {
      if (this.skipped.has(name)) continue;
      const message =
        'skipped a spool file that can be neither read nor moved to corrupt/: check the permissions of the spool folder, with corrupt/ a plain folder in it';
      this.options.log.error({ file: name, reason, spool: this.options.dir }, message);
    }
    this.skipped = skipped;
  }

  /** The spooled tasks to forward: all but the stuck files that have not changed; forgets stuck files that are gone. */
  private notStuck(tasks: readonly SpooledTask[]): SpooledTask[] {
    const seen = new Set<string>();
    const pending: SpooledTask[] = [];
    for (const spooled of tasks) {
      const name = basename(spooled.path);
      seen.add(name);
      const stuck = this.stuck.get(name);
      if (stuck !== undefined && sameFile(stuck, spooled)) continue;
      this.stuck.delete(name);
      pending.push(spooled);
    }
    for (const name of this.stuck.keys()) if (!seen.has(name)) this.stuck.delete(name);
    return pending;
  }

  /**
   * Publishes the batch, each task on its own, backdated to when each was enqueued (local clock +
   * `offset`: store time), then removes the spool files of those that landed. A task whose waiting
   * folder the store refuses goes into `refused`; any other failure is the store's (full, gone,
   * I/O errors), returned for the pass to fail with, as a store that took none did before.
   */
  private async forward(
    batch: readonly SpooledTask[],
    offset: number,
    refused: Map<string, RefusedFolder>,
  ): Promise<{ landed: number; storeFailure: { error: unknown } | undefined }> {
    const enqueuedAt = new Map<Task, Date>(batch.map((spooled) => [spooled.task, new Date(spooled.enqueuedAtMs + offset)]));
    const outcomes = await this.options.store.createEach(
      batch.map((spooled) => spooled.task),
      { mtimeOf: (task) => enqueuedAt.get(task) },
    );
    const landed: SpooledTask[] = [];
    let storeFailure: { error: unknown } | undefined;
    batch.forEach((spooled, i) => {
      // createEach answers in the order of the tasks it was given.
      const outcome = outcomes[i]!;
      if (!('error' in outcome)) landed.push(spooled);
      else if (outcome.error instanceof WaitingFolderRefusedError) {
        const { path, message } = outcome.error;
        refused.set(path, { uri: spooled.task.uri, reason: message, tasks: (refused.get(path)?.tasks ?? 0) + 1 });
      } else storeFailure ??= { error: outcome.error };
    });
    await this.removeForwarded(landed);
    return { landed: landed.length, storeFailure };
  }

  /** Removes the spool files of tasks durable in the store; one that cannot be removed is remembered as stuck. */
  private async removeForwarded(forwarded: readonly SpooledTask[]): Promise<void> {
    const { log, dir } = this.options;
    const failures = await Promise.all(
      forwarded.map((spooled) =>
        removeSpooled(spooled, this.files).then(
          () => undefined,
          (error: unknown) => ({ spooled, error }),
        ),
      ),
    );
    for (const failure of failures) {
      if (failure === undefined) continue;
      // The task is durable in the store: forwarding this file again would queue it again
      // once a node has pushed and finished it, i.e. push the same update every pass.
      const { spooled, error } = failure;
      const reason = errnoName(error) ?? (error instanceof Error ? error.message : String(error));
      this.stuck.set(basename(spooled.path), { mtimeMs: spooled.enqueuedAtMs, ctimeMs: spooled.ctimeMs, sizeBytes: spooled.sizeBytes, reason });
      log.warn(
        { file: basename(spooled.path), reason, spool: dir },
        "forwarded a spooled task but could not remove its spool file: it is not forwarded again while unchanged; give the daemon's user write permission on the spool folder",
      );
    }
  }
}
