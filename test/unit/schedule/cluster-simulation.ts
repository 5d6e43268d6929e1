import { Heap } from 'heap-js';
import type { Pusher, PushOutcome, PushRequest } from '../../../src/push/git-pusher.js';
import { silentLog } from '../../../src/runtime/log.js';
import { Distributor } from '../../../src/schedule/distributor.js';
import type { Lease, SchedulerDeps, SchedulerLocks } from '../../../src/schedule/ports.js';
import type { StoreFs } from '../../../src/store/store-fs.js';
import { waitingFolderName } from '../../../src/store/store-paths.js';
import { TaskStore } from '../../../src/store/task-store.js';
import { FULL_SYNC_REF, encodeTask, taskKey, uriKey, type Task } from '../../../src/task/task.js';
import { MemoryStoreFs } from '../../contract/support/memory-store-fs.js';
import { FakeClock, SeededRandom, inertTimers } from '../../support/fake-clock.js';
import { configOf, pushedOutcome } from './scheduler-harness.js';

/**
 * Many nodes on one store, as a discrete-event simulation (DESIGN.md "Scheduling"): every node is
 * the real Distributor over a real TaskStore (waiting folders learned, URIs claimed, tasks
 * finished as the daemon does), all on one in-memory file system seen through a per-node wrapper
 * that counts each operation by kind and makes it take NFS-like time on the fake clock. Locks are
 * the mkdir protocol's operations on that same file system (mkdir, owner record, retire by one
 * rename, release). A bulk backlog (a replicate-all) waits at the start; live updates arrive at a
 * steady rate on random URIs of it. Nothing waits for real time: the loop jumps the clock to the
 * next event.
 */

export interface ClusterSimOptions {
  readonly nodes: number;
  readonly uris: number;
  /** Bulk tasks waiting per URI at the start. */
  readonly tasksPerUri: number;
  /** Live updates per second, each on a random URI. */
  readonly arrivalsPerSecond: number;
  /** Simulated time; figures are taken after `warmupMs`. */
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly seed: number;
  /** Latency per metadata operation and per open (+ read), ms. */
  readonly metadataMs?: number;
  readonly openMs?: number;
  /** Mean push time (exponential), ms. */
  readonly meanPushMs?: number;
  readonly maxPushes?: number;
  /** Offer each URI to its preferred node first (preferred-node.ts); default true. */
  readonly preferredNode?: boolean;
  /** Claim a URI by renaming its waiting folder in as the lease folder; default true. */
  readonly claimByRename?: boolean;
}

export interface ClusterSimResult {
  /** Store operations per second after the warm-up: all, by kind, and those of the nodes alone (not the enqueues). */
  readonly opsPerSecond: number;
  readonly nodeOpsPerSecond: number;
  readonly opsByKind: Record<string, number>;
  /** URIs whose folders were made (a live update on a URI without one) or removed (a claim), per second. */
  readonly changedUrisPerSecond: number;
  readonly claims: number;
  /** Lock attempts refused because another node held the lock, per successful claim. */
  readonly collisionsPerClaim: number;
  /** Share of the pushes after the warm-up, per node, in percent. */
  readonly pushShares: number[];
  /** Enqueue → push start of the live updates enqueued after the warm-up, ms. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Live updates enqueued after the warm-up, more than the latency bound before the end, and not pushed. */
  readonly unpushed: number;
  /** replicationDelay + distributionInterval + randomDelay of the simulated config, ms. */
  readonly batchingBoundMs: number;
}

const ROOT = '/store';
const REMOTE = 'mirror';

/** The simulated clock and its events: sleeps that resolve when the clock reaches them. */
class Engine {
  readonly clock = new FakeClock();
  private readonly events = new Heap<{ at: number; seq: number; resolve: () => void }>((a, b) => a.at - b.at || a.seq - b.seq);
  private seq = 0;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.events.push({ at: this.clock.now() + ms, seq: this.seq++, resolve }));
  }

  /** Lets every runnable continuation run, then moves the clock to the next event and fires all due then. */
  async step(): Promise<boolean> {
    let seen = -1;
    // Continuations scheduled by continuations: run until a round schedules no new event.
    while (seen !== this.seq) {
      seen = this.seq;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const next = this.events.peek();
    if (next === undefined) return false;
    if (next.at > this.clock.now()) this.clock.advance(next.at - this.clock.now());
    while (this.events.peek() !== undefined && this.events.peek()!.at <= this.clock.now()) this.events.pop()!.resolve();
    return true;
  }
}

/** Store operations by kind, counted from `since` on. */
class OpCounter {
  readonly byKind = new Map<string, number>();
  counting = false;
  add(kind: string): void {
    if (this.counting) this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
  }
  total(): number {
    return [...this.byKind.values()].reduce((a, b) => a + b, 0);
  }
}

/** The shared file system as one client sees it: each call counted, and taking its time. */
function nfsLike(base: StoreFs, engine: Engine, counters: OpCounter[], metadataMs: number, openMs: number): StoreFs {
  const timed = <T>(kind: string, ms: number, run: () => Promise<T>): Promise<T> => {
    for (const counter of counters) counter.add(kind);
    return engine.sleep(ms).then(run);
  };
  return {
    open: (path, flags) => timed('open', openMs, () => base.open(path, flags)),
    link: (from, to) => timed('link', metadataMs, () => base.link(from, to)),
    unlink: (path) => timed('unlink', metadataMs, () => base.unlink(path)),
    rename: (from, to) => timed('rename', metadataMs, () => base.rename(from, to)),
    readdir: (path) => timed('readdir', metadataMs, () => base.readdir(path)),
    readBounded: (path, maxBytes) => timed('open+read', openMs, () => base.readBounded(path, maxBytes)),
    lstat: (path) => timed('lstat', metadataMs, () => base.lstat(path)),
    mkdir: (path, options) => timed('mkdir', metadataMs, () => base.mkdir(path, options)),
    rmdir: (path) => timed('rmdir', metadataMs, () => base.rmdir(path)),
  };
}

/**
 * The lock protocol's store operations: mkdir the lock folder, the lease folder (made, or the URI's
 * waiting folder renamed in and checked with an lstat), write the owner record; retire in one
 * rename of the lease folder and an rmdir of the lock folder.
 */
class SimLocks implements SchedulerLocks {
  claims = 0;
  collisions = 0;
  private next = 0;
  constructor(
    private readonly fs: StoreFs,
    private readonly claimByRename: boolean,
  ) {}

  async acquire(lockName: string, _uri: string, leaseFrom?: string): Promise<Lease | undefined> {
    const folder = `${ROOT}/ref-updates/running/${lockName}`;
    try {
      await this.fs.mkdir(folder);
    } catch {
      this.collisions++;
      return undefined;
    }
    this.claims++;
    const leaseId = `lease-${this.next++}`;
    const leaseDir = `${folder}/${leaseId}`;
    const { fs } = this;
    let movedIn = false;
    if (this.claimByRename && leaseFrom !== undefined) {
      movedIn = await fs.rename(`${ROOT}/ref-updates/waiting/${leaseFrom}`, leaseDir).then(
        () => true,
        () => false,
      );
      if (movedIn) await fs.lstat(leaseDir);
    }
    if (!movedIn) await fs.mkdir(leaseDir);
    const owner = await fs.open(`${leaseDir}/owner.json`, 'wx');
    await owner.writeFile('{}');
    await owner.close();
    let held = true;
    const drop = async (): Promise<boolean> => {
      if (!held) return false;
      held = false;
      return true;
    };
    return {
      leaseId,
      claimName: `${lockName}/${leaseId}`,
      ...(movedIn ? { leasedFolder: leaseFrom } : {}),
      stillMine: async () => held,
      heartbeat: async () => held,
      release: async () => {
        if (!(await drop())) return false;
        for (const name of await fs.readdir(leaseDir)) await fs.unlink(`${leaseDir}/${name}`);
        await fs.rmdir(leaseDir);
        await fs.rmdir(folder);
        return true;
      },
      retire: async () => {
        if (!(await drop())) return false;
        await fs.rename(leaseDir, `${ROOT}/ref-updates/done/${lockName}.${leaseId}`);
        await fs.rmdir(folder);
        return true;
      },
    };
  }
}

/** The backlog, written straight into the store (not counted): bulk tasks, backdated an hour. */
function writeBacklog(fs: MemoryStoreFs, options: ClusterSimOptions, now: number): string[] {
  const uris: string[] = [];
  for (let u = 0; u < options.uris; u++) {
    const uri = `ssh://mirror.example.com/p${u}.git`;
    uris.push(uri);
    const folder = `${ROOT}/ref-updates/waiting/${waitingFolderName(uriKey(uri), 'bulk')}`;
    fs.mkdirSync(folder);
    for (let t = 0; t < options.tasksPerUri; t++) {
      const task: Task = { project: `p${u}`, refs: [t === 0 ? FULL_SYNC_REF : `refs/heads/b${t}`], uri, remote: REMOTE };
      const path = `${folder}/${taskKey(task)}.json`;
      fs.writeRaw(path, encodeTask(task));
      fs.setMtime(path, now - 3_600_000);
    }
  }
  return uris;
}

export async function simulateCluster(options: ClusterSimOptions): Promise<ClusterSimResult> {
  const engine = new Engine();
  const { clock } = engine;
  const startedAt = clock.now();
  const random = new SeededRandom(options.seed);
  const config = configOf([
    'replication.distributionInterval=1s',
    'replication.randomDelay=1s',
    `replication.maxPushes=${options.maxPushes ?? 4}`,
    `remote.${REMOTE}.url=ssh://mirror.example.com/\${name}.git`,
    `remote.${REMOTE}.replicationDelay=2s`,
    `remote.${REMOTE}.threads=${options.maxPushes ?? 4}`,
  ]);
  const shared = new MemoryStoreFs(() => clock.now());
  await new TaskStore({ root: ROOT, nodeId: 'init', clock, fs: shared }).init();
  shared.mkdirSync(`${ROOT}/ref-updates/done`);
  const uris = writeBacklog(shared, options, clock.now());

  const all = new OpCounter();
  const byNodes = new OpCounter();
  const metadataMs = options.metadataMs ?? 0.5;
  const openMs = options.openMs ?? 2;
  const enqueuer = new TaskStore({ root: ROOT, nodeId: 'enqueue', clock, fs: nfsLike(shared, engine, [all], metadataMs, openMs) });
  const enqueuedAt = new Map<string, number>();
  const latencies: number[] = [];
  let measuring = false;
  let changedUris = 0;

  const nodeFs = nfsLike(shared, engine, [all, byNodes], metadataMs, openMs);
  const locks = new SimLocks(nodeFs, options.claimByRename ?? true);
  const pushes = new Array<number>(options.nodes).fill(0);
  const durations = new SeededRandom(options.seed + 1);
  const meanPushMs = options.meanPushMs ?? 300;
  const pusherOf = (node: number): Pusher => ({
    push: async (request: PushRequest): Promise<PushOutcome> => {
      const now = clock.now();
      for (const ref of request.refs) {
        const at = enqueuedAt.get(`${request.uri} ${ref}`);
        if (at === undefined) continue;
        enqueuedAt.delete(`${request.uri} ${ref}`);
        if (at >= startedAt + options.warmupMs) latencies.push(now - at);
      }
      if (measuring) pushes[node]!++;
      const took = Math.max(1, Math.round(-Math.log(1 - durations.next()) * meanPushMs));
      await engine.sleep(took);
      return pushedOutcome(request, took);
    },
  });

  const endAt = startedAt + options.durationMs;
  const nodeIds = Array.from({ length: options.nodes }, (_, i) => `node-${i}`);
  const nodes = Array.from({ length: options.nodes }, (_, i) => {
    const membership = { self: nodeIds[i]!, live: nodeIds };
    const store = new TaskStore({ root: ROOT, nodeId: nodeIds[i]!, clock, fs: nodeFs, emptyFolderAgeMs: () => 60_000 });
    const state = { slotFreed: false, wake: (): void => undefined };
    const deps: SchedulerDeps = {
      config: () => config,
      store,
      locks,
      pusher: pusherOf(i),
      clock,
      random: new SeededRandom(options.seed + 100 + i),
      timers: inertTimers,
      log: silentLog,
      ...(options.preferredNode === false ? {} : { membership: () => membership }),
    };
    const distributor = new Distributor(deps, () => {
      state.slotFreed = true;
      state.wake();
    });
    return { distributor, state };
  });

  /** A node's loop, as daemon/daemon.ts runs it: periodic passes, a pass when a slot frees or a URI comes due. */
  const runNode = async ({ distributor, state }: (typeof nodes)[number], offsetMs: number): Promise<void> => {
    await engine.sleep(offsetMs);
    let listedAt = Number.NEGATIVE_INFINITY;
    let periodicAt = clock.now();
    while (clock.now() < endAt) {
      const reuseListing = state.slotFreed && clock.now() - listedAt < config.distributionIntervalMs;
      state.slotFreed = false;
      if (!reuseListing) listedAt = clock.now();
      if (clock.now() >= periodicAt) periodicAt = clock.now() + config.distributionIntervalMs;
      const report = await distributor.tick({ reuseListing });
      if (state.slotFreed) continue;
      const wakeAt = Math.min(periodicAt, report.nextDueAt ?? Number.POSITIVE_INFINITY);
      await new Promise<void>((resolve) => {
        state.wake = resolve;
        void engine.sleep(Math.max(0, wakeAt - clock.now())).then(resolve);
      });
      state.wake = () => undefined;
    }
  };

  /** Live updates at a steady rate: each one a task of a random URI of the backlog, published as enqueue does. */
  const arrivals = async (): Promise<void> => {
    const gapMs = 1000 / options.arrivalsPerSecond;
    for (let n = 0; clock.now() < endAt; n++) {
      await engine.sleep(gapMs);
      const uri = uris[Math.floor(random.next() * uris.length)]!;
      const ref = `refs/heads/u${n}`;
      const at = clock.now();
      enqueuedAt.set(`${uri} ${ref}`, at);
      if (measuring && !shared.existsSync(`${ROOT}/ref-updates/waiting/${uriKey(uri)}`)) changedUris++;
      void enqueuer.create({ project: uri.slice(uri.lastIndexOf('/') + 1, -4), refs: [ref], uri, remote: REMOTE });
    }
  };

  const running = [arrivals(), ...nodes.map((node) => runNode(node, random.next() * config.distributionIntervalMs))];
  let done = false;
  let failure: unknown;
  void Promise.all(running).then(
    () => (done = true),
    (error: unknown) => {
      failure = error;
      done = true;
    },
  );
  let claimsBefore = 0;
  let collisionsBefore = 0;
  while (!done && (await engine.step())) {
    if (!measuring && clock.now() >= startedAt + options.warmupMs) {
      measuring = true;
      all.counting = true;
      byNodes.counting = true;
      claimsBefore = locks.claims;
      collisionsBefore = locks.collisions;
    }
  }
  if (failure !== undefined) throw failure;

  const seconds = (options.durationMs - options.warmupMs) / 1000;
  const claims = locks.claims - claimsBefore;
  const sorted = [...latencies].sort((a, b) => a - b);
  const percentile = (p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
  const totalPushes = pushes.reduce((a, b) => a + b, 0);
  const batchingBoundMs = config.remotes[0]!.replicationDelayMs + config.distributionIntervalMs + config.randomDelayMs;
  let unpushed = 0;
  for (const at of enqueuedAt.values()) if (at >= startedAt + options.warmupMs && at < endAt - batchingBoundMs - 2000) unpushed++;
  return {
    opsPerSecond: all.total() / seconds,
    nodeOpsPerSecond: byNodes.total() / seconds,
    opsByKind: Object.fromEntries([...all.byKind].map(([kind, count]) => [kind, count / seconds])),
    changedUrisPerSecond: (changedUris + claims) / seconds,
    claims,
    collisionsPerClaim: (locks.collisions - collisionsBefore) / Math.max(1, claims),
    pushShares: pushes.map((count) => (100 * count) / Math.max(1, totalPushes)),
    p50Ms: percentile(50),
    p99Ms: percentile(99),
    unpushed,
    batchingBoundMs,
  };
}
