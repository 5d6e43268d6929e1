import type { Task } from '../task/task.js';
import { initStore, openStore, type StoreOpening, type UnmarkedStorePolicy } from './store-marker.js';
import { dropFailed, sweepDropped } from './dropped-tasks.js';
import { failClaimed, listFailed, parkFailed, retryFailed } from './failed-tasks.js';
import { replaceAtomic } from './publish.js';
import { storeContext, type StoreContext, type StoreContextOptions } from './store-context.js';
import { WaitingFolders, type ListOptions, type WaitingListing } from './waiting-folders.js';
import { publishEachTask, publishTasks } from './publish-tasks.js';
import type { StorePaths } from './store-paths.js';
import { countCorrupt, listClaimed, listRunning, readNodeRecordFiles, sweepBuilding, sweepDone, recoverLockFolder } from './store-records.js';
import type { ClaimedTask, CreateOutcome, CreateResult, FailedTask, WaitingTask } from './store-types.js';
import { claimUri, flatWaitingNames, giveBackToWaiting, waitingNamesOf, finishTasks, resetTasks, unlinkTolerant } from './task-moves.js';
import { readJsonOrQuarantine } from './task-reader.js';
import { listUriStateKeys, listUriStates } from './uri-state-files.js';

export type * from './store-types.js';
export type { WaitingFolder, WaitingListing } from './waiting-folders.js';
export type { DropActor, DropOutcome } from './dropped-tasks.js';
export type { StoreFs, StoreFileHandle, StoreStats } from './store-fs.js';
export { nodeStoreFs } from './store-fs.js';

export interface TaskStoreOptions extends StoreContextOptions {
  /**
   * When `root` holds no store marker (store/store-marker.ts): 'create' it (the default, for
   * programs and tests that own the folder), 'adopt-earlier' (the daemon: mark an earlier
   * refrelay's store, refuse an empty or missing folder) or 'refuse' (every other command).
   */
  readonly ifUnmarked?: UnmarkedStorePolicy;
  /** waiting/ is listed in full at least this often, changed or not (`fullListingInterval`). Default 5 min. */
  readonly fullListingIntervalMs?: number;
  /** Waiting folders learned per listing, a quarter of it on the first (waiting-folders.ts). Default 2,000. */
  readonly learnPerPass?: number;
  /** An empty waiting folder older than this is removed. Default 5 min; the daemon passes lockStale. */
  readonly emptyFolderAgeMs?: () => number;
}

/**
 * The directory protocol (DESIGN.md "Store layout"). Every state change is one atomic
 * `link`, `rename` or `unlink`; a lost race with another node is a return value, a real
 * I/O failure is a `StoreError` naming the operation and the path.
 */
export class TaskStore {
  readonly paths: StorePaths;
  private readonly ctx: StoreContext;
  private readonly waiting: WaitingFolders;
  private readonly ifUnmarked: UnmarkedStorePolicy;
  private layoutReady = false;
  private layoutPending: Promise<void> | undefined;

  constructor(options: TaskStoreOptions) {
    this.ctx = storeContext(options);
    this.paths = this.ctx.paths;
    this.ifUnmarked = options.ifUnmarked ?? 'create';
    this.waiting = new WaitingFolders(this.ctx, {
      fullListingIntervalMs: options.fullListingIntervalMs ?? 300_000,
      learnPerPass: options.learnPerPass ?? 2000,
      emptyFolderAgeMs: options.emptyFolderAgeMs ?? (() => 300_000),
    });
  }

  /** Publishes one task; `created: false` means it was already queued (its first file and mtime stay). */
  async create(task: Task): Promise<CreateResult> {
    const [result] = await this.createMany([task]);
    return result as CreateResult;
  }

  /**
   * Results in the order of `tasks`. Resolves only once every new file is durable. `mtimeOf`
   * backdates a new file (its due time is its mtime plus the delays): the file is published with
   * that mtime, so no node can list it with another one first.
   */
  async createMany(tasks: readonly Task[], options: { mtimeOf?: (task: Task) => Date | undefined } = {}): Promise<CreateResult[]> {
    await this.ready();
    return this.wrote(await publishTasks(this.ctx, tasks, options));
  }

  /**
   * As createMany, but each task on its own: one that cannot be published (its waiting folder's
   * name taken by a file, an I/O error) is reported in its place with its error, and the others
   * are still published and made durable. Only a store that cannot be opened rejects.
   */
  async createEach(tasks: readonly Task[], options: { mtimeOf?: (task: Task) => Date | undefined } = {}): Promise<CreateOutcome[]> {
    await this.ready();
    return this.wrote(await publishEachTask(this.ctx, tasks, options));
  }

  /**
   * The waiting folders this node knows, learning what changed since the last call (bounded per
   * call); `cached`: what it knows, without reading the store — for a pass that follows the last
   * one closely (a push slot came free).
   */
  async listWaiting(options: ListOptions = {}): Promise<WaitingListing> {
    if (!this.layoutReady) await this.ready();
    return this.waiting.list(options);
  }

  /** Every waiting task file name: a `readdir` of waiting/ and of each folder in it, no reads. */
  async listWaitingNames(): Promise<string[]> {
    await this.ready();
    return [...(await waitingNamesOf(this.ctx))];
  }

  /** The task file names waiting for these URIs (both lanes): one `readdir` per folder, no reads. */
  readonly waitingNamesOf = this.gated(waitingNamesOf);

  /** Which of these task file names wait flat at the top of waiting/ (a stray, or a task a stale lookup sent there): one `lstat` each. */
  readonly flatWaitingNames = this.gated(flatWaitingNames);

  /**
   * Reads the waiting tasks of URIs this node expects to claim soon, so that their claim need not
   * (read-ahead.ts). Only learned folders, each once; never throws.
   */
  async readAhead(uriKeys: readonly string[]): Promise<void> {
    if (this.layoutReady) await this.waiting.readAhead(uriKeys);
  }

  /**
   * Claims every waiting task of the URI into `running/<lockName>/`, the lock folder the caller
   * holds, and reads them (or checks they are the files read ahead); the folders claimed from are
   * learned again. `leasedFolder`: the waiting folder the lock renamed in as that folder.
   */
  async claim(lockName: string, uriKey: string, leasedFolder?: string): Promise<ClaimedTask[]> {
    await this.ready();
    const { tasks, folders } = await claimUri(this.ctx, lockName, uriKey, this.waiting.early, leasedFolder);
    this.waiting.claimed(uriKey, folders);
    return tasks;
  }

  /** Task files of `running/<lockName>/` (made from `waiting/<folder>`) not in `keep` → back there, unread. */
  async giveBack(lockName: string, folder: string, keep: ReadonlySet<string>): Promise<string[]> {
    await this.ready();
    return this.wrote(await giveBackToWaiting(this.ctx, this.ctx.paths.lockFolder(lockName), folder, (name) => keep.has(name)));
  }

  readonly listClaimed = this.gated(listClaimed);

  /** Back to `waiting/` for a retry, keeping the first-enqueue mtime. Returns the names moved. */
  async reset(lockName: string, tasks: readonly WaitingTask[]): Promise<string[]> {
    await this.ready();
    return this.wrote(await resetTasks(this.ctx, lockName, tasks));
  }

  /** Deletes claimed tasks after a successful push. Returns the names removed. */
  readonly finish = this.gated(finishTasks);

  /** Gives up on claimed tasks: they move to `failed/<uriKey>/` with the reason. Returns the names moved. */
  readonly fail = this.gated(failClaimed);

  /** Writes a new failed task, e.g. only the refs a push rejected. */
  readonly parkFailed = this.gated(parkFailed);

  readonly listFailed = this.gated(listFailed);

  /** Puts matching failed tasks back in the queue; returns how many. */
  async retryFailed(filter: (task: FailedTask) => boolean): Promise<number> {
    await this.ready();
    return this.wrote(await retryFailed(this.ctx, filter));
  }

  /** Moves matching failed tasks out of failed/ into one drop folder with a record of `actor` (dropped-tasks.ts). */
  readonly dropFailed = this.gated(dropFailed);

  /** Deletes drop folders older than `retentionMs`; returns how many went. */
  readonly sweepDropped = this.gated(sweepDropped);

  readonly listRunning = this.gated(listRunning);

  /** Move every task of a lock folder (tombstone, own old claim) back to waiting/ and remove it. */
  async recoverLockFolder(lockName: string): Promise<{ recovered: number; removed: boolean }> {
    await this.ready();
    return this.wrote(await recoverLockFolder(this.ctx, lockName));
  }

  readonly countCorrupt = this.gated(countCorrupt);

  /** The persisted retry state of a URI; undefined when absent or unreadable (treated as a fresh start). */
  async readUriState(uriKey: string): Promise<unknown> {
    await this.ready();
    return readJsonOrQuarantine(this.ctx, this.paths.uriStateFile(uriKey), `${uriKey}.json`, 'read uri state');
  }

  /** Only the URI lock holder calls this; temp + rename, so readers never see half a record. */
  async writeUriState(uriKey: string, state: unknown): Promise<void> {
    await this.ready();
    await replaceAtomic(this.ctx, this.paths.uriStateFile(uriKey), `${JSON.stringify(state)}\n`, `${uriKey}.json`, 'write uri state');
  }

  /** Returns false when there was nothing to delete. */
  async deleteUriState(uriKey: string): Promise<boolean> {
    await this.ready();
    return unlinkTolerant(this.ctx, this.paths.uriStateFile(uriKey), 'delete uri state');
  }

  /** URI keys that have a retry state file, from one `readdir` (the distributor's per-pass check). */
  readonly listUriStateKeys = this.gated(listUriStateKeys);

  /** Retry state files, read (at most `limit`: `refrelay retry` reads all); unreadable content is undefined. */
  readonly listUriStates = this.gated(listUriStates);

  /** Node heartbeats with their files' store-clock mtimes, for judging which nodes are alive. */
  readonly readNodeRecordFiles = this.gated(readNodeRecordFiles);

  /** Deletes up to `maxFolders` claim folders of finished pushes from done/ (HeldLock.retire); returns how many went. */
  readonly sweepDone = this.gated(sweepDone);

  /** Removes temps a crash left in `building/` (older than `maxAgeMs`); returns how many. */
  readonly sweepBuilding = this.gated(sweepBuilding);

  /**
   * Tasks reached waiting/ from this machine (a write the daemon saw in building/): the next
   * listing reads waiting/ however recently it read it, as after this store's own writes.
   */
  noteLocalWrite(): void {
    this.waiting.wroteLocally();
  }

  /** This store's own writes into waiting/ count as local writes too (see noteLocalWrite). */
  private wrote<T>(result: T): T {
    this.noteLocalWrite();
    return result;
  }

  /** `fn` on this store, once its marker and layout are checked. */
  private gated<A extends unknown[], R>(fn: (ctx: StoreContext, ...args: A) => Promise<R>): (...args: A) => Promise<R> {
    return async (...args) => {
      await this.ready();
      return fn(this.ctx, ...args);
    };
  }

  /** Creates the folders once per instance; a failure is retried by the next call. */
  private ready(): Promise<void> {
    if (this.layoutReady) return Promise.resolve();
    this.layoutPending ??= this.makeLayout().then(
      () => {
        this.layoutReady = true;
      },
      (error: unknown) => {
        this.layoutPending = undefined;
        throw error;
      },
    );
    return this.layoutPending;
  }

  private async makeLayout(): Promise<void> {
    const opening = await openStore(this.ctx, this.ifUnmarked);
    if (opening !== 'existing') this.ctx.onEvent({ type: 'store-marked', root: this.paths.root, opening });
  }

  /** Checks the marker (adopting or creating per `ifUnmarked`) and the layout; every other method does it first too. */
  async open(): Promise<void> {
    await this.ready();
  }

  /** `refrelay init`: creates the store (never its parent folders) or adopts an earlier one. */
  async init(): Promise<StoreOpening> {
    const opening = await initStore(this.ctx);
    this.layoutReady = true;
    return opening;
  }
}
