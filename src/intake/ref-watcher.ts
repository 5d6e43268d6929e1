import { join, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import type { ReplicationConfig } from '../config/types.js';
import { RefrelayError } from '../errors.js';
import type { Log } from '../runtime/log.js';
import type { TaskStore } from '../store/task-store.js';
import { FULL_SYNC_REF } from '../task/task.js';
import { mapBounded } from '../runtime/map-bounded.js';
import { planTasks } from './plan-tasks.js';
import { discoverProjects } from './project-discovery.js';
import { changedRefs, readRefSnapshot, type RefSnapshot } from './ref-snapshot.js';
import type { SavedRefSnapshots } from './saved-ref-snapshots.js';

/** Ref changes within this window become one scan of the repository. */
const DEBOUNCE_MS = 150;
const SNAPSHOT_CONCURRENCY = 8;
const REDISCOVER_EVERY_MS = 60_000;
/** A repository whose changes could not be queued (the store failed) is scanned again this much later, until they are. */
const REQUEUE_AFTER_MS = 2000;

export class WatchLimitError extends RefrelayError {
  constructor(message: string) {
    super('WATCH_LIMIT', message);
  }
}

export interface RefWatcherDeps {
  readonly config: () => ReplicationConfig;
  readonly store: Pick<TaskStore, 'createMany'>;
  readonly log: Log;
  /** Where the snapshots outlive the daemon (the daemon's: beside its spool); without, a start sees no change made before it. */
  readonly saved?: SavedRefSnapshots;
}

/**
 * For servers where hooks cannot be installed: watches every repository's loose refs and
 * packed-refs (chokidar), debounces, compares `for-each-ref` with the last snapshot and queues
 * exactly the changed refs. At start each repository is compared with the snapshot saved when
 * its changes were last queued, once the watches are in place, so neither a change made while
 * no daemon watched nor one made while it started is missed. Repositories that appear later are
 * found by a periodic rescan and get a full sync. Refuses to start beyond
 * `watchRepositoriesLimit` instead of degrading.
 */
export class RefWatcher {
  private readonly snapshots = new Map<string, RefSnapshot>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private watcher: FSWatcher | undefined;
  private rediscover: NodeJS.Timeout | undefined;
  private repoRoots: string[] = [];
  private repoRootSet = new Set<string>();
  private queued = 0;
  private stopped = false;
  /** Repositories whose changes the store refused, scanned again until it takes them. */
  private readonly failing = new Set<string>();
  private saveFailing = false;
  /** The saved snapshots, once the start found their folder usable. */
  private saved: SavedRefSnapshots | undefined;
  /** Repositories a change was seen in before the start's catch-up gave them a snapshot. */
  private readonly seenEarly = new Set<string>();

  constructor(private readonly deps: RefWatcherDeps) {}

  get repositories(): number {
    return this.snapshots.size;
  }

  get tasksQueued(): number {
    return this.queued;
  }

  async start(): Promise<void> {
    const config = this.deps.config();
    const basePath = config.basePath;
    if (basePath === undefined) throw new WatchLimitError('watchRepositories needs replication.basePath');
    const projects = await discoverProjects(basePath);
    this.checkLimit(projects.length);
    this.know(projects);
    // Each repository folder is watched, pruned to refs/ and packed-refs: watching packed-refs
    // by name would not see it appear (and a missing path silences chokidar's other watches).
    this.watcher = watch(
      projects.map((project) => this.repoPath(project)),
      {
        ignoreInitial: true,
        // Closed by stop(); while it runs it is part of the node's work.
        persistent: true,
        ignored: (path: string) => this.ignored(path),
      },
    );
    this.watcher.on('all', (_event: string, path: string) => this.onChange(path));
    this.watcher.on('error', (error: unknown) => this.deps.log.warn({ err: String(error) }, 'ref watcher error'));
    await new Promise<void>((resolve) => this.watcher!.once('ready', () => resolve()));
    await this.catchUpAll(projects);
    this.rediscover = setInterval(
      () => void this.addNewRepositories().catch((error: unknown) => this.deps.log.warn({ err: String(error) }, 'repository rescan failed')),
      REDISCOVER_EVERY_MS,
    );
    this.rediscover.unref();
    this.deps.log.info({ repositories: projects.length }, 'watching repositories for ref changes');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.rediscover !== undefined) clearInterval(this.rediscover);
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.watcher?.close();
  }

  private checkLimit(count: number): void {
    const limit = this.deps.config().watchRepositoriesLimit;
    if (count > limit) {
      throw new WatchLimitError(
        `watchRepositories: ${count} repositories under basePath exceed replication.watchRepositoriesLimit (${limit}); ` +
          'raise the limit if this machine has the inotify watches and memory for it, or install hooks instead (refrelay hook install --all)',
      );
    }
  }

  private repoPath(project: string): string {
    return join(this.deps.config().basePath!, `${project}.git`);
  }

  /** Everything in a repository but its ref store; and lock files, whose rename is what counts. */
  private ignored(path: string): boolean {
    if (path.endsWith('.lock')) return true;
    for (let at = path.indexOf(`.git${sep}`); at >= 0; at = path.indexOf(`.git${sep}`, at + 1)) {
      const root = path.slice(0, at + '.git'.length + sep.length);
      if (!this.repoRootSet.has(root)) continue;
      const rel = path.slice(root.length);
      return !(rel === 'refs' || rel.startsWith(`refs${sep}`) || rel === 'packed-refs');
    }
    return false;
  }

  /** Adds repositories to those whose changes count (`ignored`, `projectOf`). */
  private know(projects: readonly string[]): void {
    this.repoRoots = [...new Set([...this.repoRoots, ...projects.map((project) => `${this.repoPath(project)}${sep}`)])];
    this.repoRootSet = new Set(this.repoRoots);
  }

  /**
   * Every repository at start, the watches in place. A folder of saved snapshots that cannot be
   * used costs the catch-up (said once), never the watch; files that cannot be trusted are said
   * in one line.
   */
  private async catchUpAll(projects: readonly string[]): Promise<void> {
    const opened = await this.deps.saved?.open();
    if (opened !== undefined && 'unusable' in opened) {
      this.deps.log.warn({ reason: opened.unusable }, 'ref snapshots are not saved: changes made while no daemon watches are not seen');
    }
    const usable = opened !== undefined && 'earlier' in opened ? opened : undefined;
    this.saved = usable === undefined ? undefined : this.deps.saved;
    const earlier = usable?.earlier ?? false;
    const untrusted = new Map<string, string>();
    await mapBounded(projects, SNAPSHOT_CONCURRENCY, async (project) => {
      const reason = await this.catchUp(project, earlier);
      if (reason !== undefined) untrusted.set(project, reason);
    });
    if (untrusted.size > 0) {
      const projectsShown = [...untrusted.keys()].sort().slice(0, 10);
      const reasons = [...new Set(untrusted.values())];
      this.deps.log.warn(
        { repositories: untrusted.size, projects: projectsShown, reasons },
        'saved ref snapshots that cannot be trusted: a full sync of each repository',
      );
    }
  }

  /**
   * A repository at start: the changes since its saved snapshot are queued (scanned again until
   * the store takes them). One with no snapshot starts from its refs now when this is the first
   * start that saves any (`earlier` false), else it is new since the last start (or its first save
   * failed) and gets a full sync, as does one whose file cannot be trusted; that reason is returned.
   * A change seen before its snapshot was in place is scanned.
   */
  private async catchUp(project: string, earlier: boolean): Promise<string | undefined> {
    const saved = (await this.saved?.load(this.repoPath(project))) ?? { kind: 'none' };
    if (saved.kind === 'saved') {
      this.snapshots.set(project, saved.refs);
      this.seenEarly.delete(project);
      await this.scan(project);
      return undefined;
    }
    const now = await readRefSnapshot(this.repoPath(project));
    if (saved.kind === 'unreadable' || earlier) {
      // The snapshot is set once the full sync is durable (queueFullSync), which scans what was seen meanwhile.
      await this.queueFullSync(project, now);
      return saved.kind === 'unreadable' ? saved.reason : undefined;
    }
    this.snapshots.set(project, now ?? new Map());
    if (now !== undefined) await this.save(project, now);
    if (this.seenEarly.delete(project)) await this.scan(project);
    return undefined;
  }

  /**
   * Records what the store now holds the changes of. A failure is logged once until a save works
   * again: the snapshot left is older, which after a restart queues changes twice, never loses one.
   */
  private async save(project: string, refs: RefSnapshot): Promise<void> {
    try {
      await this.saved?.save(this.repoPath(project), refs);
      this.saveFailing = false;
    } catch (error) {
      if (!this.saveFailing) this.deps.log.warn({ project, err: String(error) }, 'could not save the ref snapshot of a repository');
      this.saveFailing = true;
    }
  }

  private projectOf(path: string): string | undefined {
    const base = `${this.deps.config().basePath!}${sep}`;
    const root = this.repoRoots.find((candidate) => path.startsWith(candidate));
    return root === undefined ? undefined : root.slice(base.length, -('.git'.length + sep.length));
  }

  private onChange(path: string): void {
    const project = this.projectOf(path);
    if (project !== undefined) this.scanLater(project, DEBOUNCE_MS);
  }

  /**
   * One scan of `project` after `delayMs` (a later call moves it). A scan whose changes could not
   * be queued keeps its snapshot and is tried again: the repository may not change again, and the
   * update would be lost.
   */
  private scanLater(project: string, delayMs: number): void {
    clearTimeout(this.timers.get(project));
    this.timers.set(
      project,
      setTimeout(() => {
        this.timers.delete(project);
        void this.scan(project);
      }, delayMs),
    );
  }

  /** One scan; changes the store refused are scanned again REQUEUE_AFTER_MS later, until it takes them. */
  private async scan(project: string): Promise<void> {
    try {
      await this.rescan(project);
    } catch (error) {
      // Logged once per outage, not every retry: a long store outage must not flood the log.
      if (!this.failing.has(project)) this.deps.log.error({ project, err: String(error), retryInMs: REQUEUE_AFTER_MS }, 'watcher could not queue ref changes');
      this.failing.add(project);
      if (!this.stopped && !this.timers.has(project)) this.scanLater(project, REQUEUE_AFTER_MS);
      return;
    }
    if (this.failing.delete(project)) this.deps.log.info({ project }, 'watcher queued the ref changes it could not queue before');
  }

  private async rescan(project: string): Promise<void> {
    const before = this.snapshots.get(project);
    // No snapshot yet (catch-up or a full sync under way, or one the store refused): scanned once it has one.
    if (before === undefined) {
      this.seenEarly.add(project);
      return;
    }
    const after = await readRefSnapshot(this.repoPath(project));
    if (after === undefined) return;
    const changed = changedRefs(before, after);
    if (changed.length === 0) return;
    await this.queue(project, changed);
    // Only after the tasks are durable: a failed write is scanned again (scanLater).
    this.snapshots.set(project, after);
    await this.save(project, after);
  }

  private async queue(project: string, refs: readonly string[]): Promise<void> {
    const tasks = planTasks(this.deps.config(), project, refs);
    if (tasks.length === 0) return;
    await this.deps.store.createMany(tasks);
    this.queued += tasks.length;
    this.deps.log.info({ project, refs: refs.length, tasks: tasks.length }, 'watcher queued ref changes');
  }

  private async addNewRepositories(): Promise<void> {
    const projects = await discoverProjects(this.deps.config().basePath!);
    const fresh = projects.filter((project) => !this.snapshots.has(project));
    if (fresh.length === 0) return;
    this.checkLimit(projects.length);
    this.know(fresh);
    this.watcher?.add(fresh.map((project) => this.repoPath(project)));
    const snapshots = await mapBounded(fresh, SNAPSHOT_CONCURRENCY, (project) => readRefSnapshot(this.repoPath(project)));
    // Refs pushed before we looked were never seen: a full sync covers them.
    for (const [i, project] of fresh.entries()) await this.queueFullSync(project, snapshots[i]);
  }

  /**
   * A full sync of `project`; once the store took it, `refs` (read before it was queued) become
   * its snapshot, saved, and a change seen meanwhile is scanned. One the store did not take leaves
   * the repository without a snapshot, new again for the next rescan, which queues it again.
   */
  private async queueFullSync(project: string, refs: RefSnapshot | undefined): Promise<void> {
    try {
      await this.queue(project, [FULL_SYNC_REF]);
    } catch (error) {
      this.deps.log.error({ project, err: String(error) }, 'watcher could not queue the full sync of a repository; trying again at the next rescan');
      return;
    }
    this.snapshots.set(project, refs ?? new Map());
    if (refs !== undefined) await this.save(project, refs);
    if (this.seenEarly.delete(project)) await this.scan(project);
  }
}
