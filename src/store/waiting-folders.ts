import { StoreError } from '../errors.js';
import { entryType } from '../runtime/bounded-read.js';
import { isGone, refusedErrno } from '../runtime/errno.js';
import { mapBounded } from '../runtime/map-bounded.js';
import type { Lane } from '../task/task.js';
import { quarantine } from './quarantine.js';
import type { StoreContext } from './store-context.js';
import { storeError } from './store-fs.js';
import { loadTask, lstatTolerant, oldestFirst, readdirStrict } from './store-listing.js';
import { LeftToPreferred, type PreferredTurn } from './preferred-turn.js';
import { ReadAhead } from './read-ahead.js';
import { StraySorter } from './stray-sorter.js';
import { isTaskFileName, parseWaitingFolderName, waitingFolderName } from './store-paths.js';
import type { WaitingTask } from './store-types.js';

/**
 * A change to waiting/ within this long of its listing may share its timestamp with a change
 * after it; the stamp proves nothing then (store clock against ours, so skew up to this is fine).
 */
const RECENT_CHANGE_MS = 10_000;

/** One URI's waiting folder in one lane, as this node learned it (DESIGN.md "Waiting folders"). */
export interface WaitingFolder {
  /** Its name in waiting/: `<uriKey>` or `<uriKey>.bulk`. */
  readonly folder: string;
  readonly uriKey: string;
  readonly lane: Lane;
  /** The oldest task that could be read: the folder's URI, remote and project as its content says. */
  readonly sample: WaitingTask;
  /** The oldest task file's mtime (store clock). */
  readonly oldestMtimeMs: number;
  /** Task files in the folder when it was learned; later arrivals are not counted. */
  readonly taskCount: number;
  /**
   * Our clock: when this node learned it or, for a folder it left to its preferred node first,
   * when it first listed it. A handoff counts from there (DESIGN.md "Preferred node").
   */
  readonly seenAt: number;
}

/** What a listing tells the distributor. */
export interface WaitingListing {
  /** Every learned folder (a copy, made when read). */
  readonly folders: readonly WaitingFolder[];
  /** A learned folder by its name in waiting/, without copying the listing. */
  folder(name: string): WaitingFolder | undefined;
  /**
   * The URIs whose folders were learned, learned again or dropped since the previous listing: a
   * pass regroups only those. One reader per store object, the node's distributor.
   */
  readonly changed: ReadonlySet<string>;
  /** Folders seen but not learned yet (learning is bounded per pass); a cached listing leaves out those this node claimed from. */
  readonly unlearned: number;
  /** New folders left to their preferred node for its turn (preferred-turn.ts): not read yet either. */
  readonly leftToPreferred: number;
  /**
   * Flat task files at the top of waiting/ (written by hand or by a tool): those not sorted into
   * their folders yet (sorting is bounded per pass too), and those that could not be sorted.
   */
  readonly loose: readonly string[];
}

export interface ListOptions {
  /** What this node knows, without any I/O (see list). */
  readonly cached?: boolean;
  /** A change this machine did not make is read once the last read is this old (due-planner.ts unreadChangesMayWaitMs). */
  readonly unreadChangesMayWaitMs?: number;
  /** New folders another live node is preferred for wait for its turn before they are read. */
  readonly preferredTurn?: PreferredTurn;
}

export interface WaitingFoldersOptions {
  /** waiting/ is listed in full at least this often, changed or not: NFS attribute caches may be stale. */
  readonly fullListingIntervalMs: number;
  /** Folders learned per listing (a quarter on the first), and flat task files sorted; the rest wait for the next ones. */
  readonly learnPerPass: number;
  /** An empty folder whose mtime is older than this is removed (a claim or publish that died midway). */
  readonly emptyFolderAgeMs: () => number;
}

/**
 * `waiting/` by folder name. waiting/ is read again only when its mtime or ctime changed — a
 * folder made or removed — or a full listing is due; a folder is read once, when first seen (or
 * after this node claimed from it), so a pass with nothing new opens no file, and a node never
 * holds more than one parsed task per folder. Flat task files found at the top of waiting/ are
 * sorted into their folders (loose-tasks.ts), as many per pass as folders are learned.
 */
export class WaitingFolders {
  private readonly learned = new Map<string, WaitingFolder>();
  /**
   * Seen, not learned yet, in the order they are learned: those this node claimed from, then
   * those that appeared since the node started (a live update must not wait behind a backlog
   * the node found at its start), then that backlog.
   */
  private readonly relearn = new Set<string>();
  private readonly toLearn = new Set<string>();
  private readonly backlog = new Set<string>();
  private readonly leftToPreferred = new LeftToPreferred();
  /**
   * Plain files under a live folder's name: the names of the task files of Gerrit's replication
   * plugin (a store at its events directory, which config check and the daemon warn about). They
   * are not ours and stay where they are, as in format 1; looked at again after a full interval.
   */
  private readonly foreign = new Set<string>();
  private foreignSince = Number.NEGATIVE_INFINITY;
  private readonly strays: StraySorter;
  /** URIs whose learned folders changed since the last listing. */
  private changed = new Set<string>();
  private stamp = '';
  private stampWasOld = false;
  /** Writes this machine made to waiting/, and how many of them the last read came after. */
  private localWrites = 0;
  private localWritesRead = 0;
  private listedAt = Number.NEGATIVE_INFINITY;
  private learnedOnce = false;
  /** Tasks of learned folders read before their claim; dropped with the folder. */
  readonly early: ReadAhead;

  constructor(
    private readonly ctx: StoreContext,
    private readonly options: WaitingFoldersOptions,
  ) {
    this.early = new ReadAhead(ctx);
    this.strays = new StraySorter(ctx);
  }

  /**
   * This node claimed the URI from `folders`: what is left there (if anything) is learned again,
   * and what was read ahead of either lane is of no use any more.
   */
  claimed(uriKey: string, folders: readonly string[]): void {
    this.early.drop(waitingFolderName(uriKey, 'live'));
    this.early.drop(waitingFolderName(uriKey, 'bulk'));
    for (const folder of folders) {
      if (this.unlearn(folder) || this.forgetUnlearned(folder)) this.relearn.add(folder);
    }
  }

  /**
   * Tasks reached waiting/ from this machine (its publishes and resets, or a write seen in building/),
   * which may be due at once: the next listing reads waiting/ if it changed, however recently read.
   */
  wroteLocally(): void {
    this.localWrites++;
  }

  /** Reads ahead the tasks of the learned waiting folders of these URIs (both lanes). */
  async readAhead(uriKeys: readonly string[]): Promise<void> {
    const learned = (name: string): boolean => this.learned.has(name);
    await this.early.read(uriKeys.flatMap((key) => [waitingFolderName(key, 'live'), waitingFolderName(key, 'bulk')]).filter(learned), learned);
  }

  private unlearn(folder: string): boolean {
    this.early.drop(folder);
    const known = this.learned.get(folder);
    if (known === undefined) return false;
    this.learned.delete(folder);
    this.changed.add(known.uriKey);
    return true;
  }

  /** Takes a name off the queues of folders seen but not learned (it is on one at most); whether it was on one. */
  private forgetUnlearned(name: string): boolean {
    return this.relearn.delete(name) || this.toLearn.delete(name) || this.backlog.delete(name) || this.leftToPreferred.delete(name);
  }

  /**
   * `cached`: what this node knows, without any I/O: the last listing minus the folders this node
   * claimed from since, which count as neither learned nor unlearned (what may be left in them is
   * seen by the next listing that reads the store).
   */
  async list(options: ListOptions = {}): Promise<WaitingListing> {
    const cached = options.cached === true;
    this.early.expire();
    if (!cached) {
      await this.readNamesIfChanged(options.unreadChangesMayWaitMs ?? 0, options.preferredTurn);
      await this.strays.sortSome(this.options.learnPerPass, (folder) => this.sortedInto(folder));
      await this.learnSome(options.preferredTurn);
    }
    const { learned, changed } = this;
    this.changed = new Set();
    return {
      get folders() {
        return [...learned.values()];
      },
      folder: (name) => learned.get(name),
      changed,
      unlearned: this.toLearn.size + this.backlog.size + (cached ? 0 : this.relearn.size),
      leftToPreferred: this.leftToPreferred.size,
      loose: this.strays.names,
    };
  }

  private async readNamesIfChanged(unreadChangesMayWaitMs: number, turn: PreferredTurn | undefined): Promise<void> {
    const { ctx } = this;
    const dir = ctx.paths.waiting;
    const stats = await ctx.fs.lstat(dir).catch((error: unknown) => {
      throw storeError('list waiting tasks', dir, error);
    });
    const stamp = `${stats.ino}:${stats.mtimeMs}:${stats.ctimeMs}`;
    const now = ctx.clock.monotonic();
    if (!this.mustRead(stamp, now - this.listedAt, unreadChangesMayWaitMs)) return;
    // Taken before the readdir: a folder made or a task written while it runs is read next time.
    const seenAt = ctx.clock.now();
    const stampWasOld = seenAt - Math.max(stats.mtimeMs, stats.ctimeMs) > RECENT_CHANGE_MS;
    const localWrites = this.localWrites;
    const names = await readdirStrict(ctx, dir, 'list waiting tasks');
    // What the first read finds is the backlog the node started on; anything later comes first,
    // unless another node is preferred for it.
    const firstRead = this.stamp === '';
    // Kept only once the names are in: after a failed readdir, the next pass must list again.
    this.stamp = stamp;
    this.stampWasOld = stampWasOld;
    this.listedAt = now;
    this.localWritesRead = localWrites;
    // A name can turn from a file into a folder between two listings (a person removed the file
    // and a publish made the folder): every name is looked at again now and then.
    if (now - this.foreignSince >= this.options.fullListingIntervalMs) {
      this.foreign.clear();
      this.foreignSince = now;
    }
    const present = new Set<string>();
    const loose: string[] = [];
    for (const name of names) {
      // A name known already is a folder name: only new names are parsed (100,000 a listing).
      if (this.isKnown(name)) {
        present.add(name);
        continue;
      }
      const parsed = parseWaitingFolderName(name);
      if (parsed !== undefined) {
        present.add(name);
        const turnMs = firstRead ? 0 : (turn?.turnMs(parsed.uriKey) ?? 0);
        if (firstRead) this.backlog.add(name);
        else if (turnMs > 0) this.leftToPreferred.leave(name, seenAt, turnMs);
        else this.toLearn.add(name);
      } else if (isTaskFileName(name)) {
        loose.push(name);
      }
    }
    this.strays.listed(loose);
    for (const name of this.learned.keys()) if (!present.has(name)) this.unlearn(name);
    for (const known of [this.toLearn, this.relearn, this.backlog, this.foreign]) {
      for (const name of known.keys()) if (!present.has(name)) known.delete(name);
    }
    this.leftToPreferred.keepOnly(present);
  }

  private isKnown(name: string): boolean {
    const { learned, relearn, toLearn, backlog, leftToPreferred, foreign } = this;
    return learned.has(name) || relearn.has(name) || toLearn.has(name) || backlog.has(name) || leftToPreferred.has(name) || foreign.has(name);
  }

  /** Whether waiting/ is read now (DESIGN.md "Waiting folders", Learn). */
  private mustRead(stamp: string, sinceRead: number, unreadChangesMayWaitMs: number): boolean {
    if (this.stamp === '' || sinceRead >= this.options.fullListingIntervalMs) return true;
    // File times have a granularity (a jiffy on Linux): a folder made in the same tick as a
    // change we listed leaves the stamp as it was. Only a stamp that was already old when we
    // listed proves that nothing came after.
    if (stamp === this.stamp && this.stampWasOld) return false;
    // Changed by this node's claims, or by another writer whose tasks cannot be due yet: a node
    // that claims a dozen URIs a second would otherwise read 100,000 names at every pass.
    return this.localWrites !== this.localWritesRead || sinceRead >= unreadChangesMayWaitMs;
  }

  /** A folder that got a sorted task is learned again: its oldest task may be the one sorted in. */
  private sortedInto(folder: string): void {
    this.unlearn(folder);
    this.forgetUnlearned(folder);
    this.relearn.add(folder);
  }

  private async learnSome(turn: PreferredTurn | undefined): Promise<void> {
    // A quarter on the first pass, which also reads every name: a node that starts on a backlog
    // of any size claims after about as much work as on a small one.
    const limit = this.learnedOnce ? this.options.learnPerPass : Math.ceil(this.options.learnPerPass / 4);
    this.learnedOnce = true;
    const now = this.ctx.clock.now();
    // Those left to their preferred node keep when they were first listed; the others are seen now.
    const batch = new Map<string, number>();
    const fill = (names: Iterable<string>): void => {
      for (const name of names) {
        if (batch.size >= limit) return;
        batch.set(name, now);
      }
    };
    fill(this.relearn);
    for (const [name, seenAt] of this.leftToPreferred.ended(now, turn === undefined, limit - batch.size)) batch.set(name, seenAt);
    fill(this.toLearn);
    fill(this.backlog);
    if (batch.size === 0) return;
    const names = [...batch.keys()];
    const learned = await mapBounded(names, this.ctx.concurrency, (name) => this.learnFolder(name, batch.get(name)!));
    names.forEach((name, i) => {
      this.forgetUnlearned(name);
      const folder = learned[i];
      if (folder !== undefined) {
        this.learned.set(name, folder);
        this.changed.add(folder.uriKey);
      }
    });
  }

  /** One folder: undefined when it is gone, empty, or not a real folder (then quarantined). */
  private async learnFolder(name: string, seenAt: number): Promise<WaitingFolder | undefined> {
    const { ctx } = this;
    const dir = ctx.paths.waitingFolder(name);
    const stats = await lstatTolerant(ctx, dir, 'list waiting tasks');
    if (stats === undefined) return undefined;
    if (!stats.isDirectory()) {
      // A plain file named `<40 hex>` is how Gerrit's plugin names its task files: left alone.
      // Anything else (a symlink above all, or a `.bulk` file) is moved out of the way.
      if (stats.isFile() && parseWaitingFolderName(name)?.lane === 'live') this.foreign.add(name);
      else await quarantine(ctx, dir, name, `${entryType(stats)} where a waiting folder is expected`);
      return undefined;
    }
    let files: string[];
    try {
      const names = (await ctx.fs.readdir(dir)).filter(isTaskFileName);
      // A folder of one task (a live update's new folder, the common case) needs no lstat: the
      // task's read gives its mtime.
      files = names.length === 1 ? names : await oldestFirst(ctx, dir, names);
    } catch (error) {
      if (isGone(error)) return undefined;
      // A folder this node may not list, or whose entries it may not look at (listable but not
      // searchable), would fail every listing, on every pass.
      const code = refusedErrno(error);
      if (code === undefined) throw error instanceof StoreError ? error : storeError('list waiting tasks', dir, error);
      await quarantine(ctx, dir, name, `a waiting folder this node may not read (${code})`);
      return undefined;
    }
    if (files.length === 0) {
      if (ctx.clock.now() - stats.mtimeMs > this.options.emptyFolderAgeMs()) await ctx.fs.rmdir(dir).catch(() => undefined);
      return undefined;
    }
    // The oldest readable task speaks for the folder; unreadable ones are quarantined on the way,
    // and neither they nor those gone meanwhile are counted, nor their mtimes taken as the oldest.
    for (const [i, task] of files.entries()) {
      const sample = await loadTask(ctx, dir, task);
      if (sample === undefined) continue;
      const parsed = parseWaitingFolderName(name)!;
      return { folder: name, uriKey: parsed.uriKey, lane: parsed.lane, sample, oldestMtimeMs: sample.mtimeMs, taskCount: files.length - i, seenAt };
    }
    return undefined;
  }
}
