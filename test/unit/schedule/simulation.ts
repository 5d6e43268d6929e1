import { silentLog } from '../../../src/runtime/log.js';
import type { Pusher, PushOutcome, PushRequest } from '../../../src/push/git-pusher.js';
import { classifyPushFailure } from '../../../src/push/failure-class.js';
import { Distributor } from '../../../src/schedule/distributor.js';
import type { Lease, SchedulerDeps, SchedulerLocks, SchedulerStore } from '../../../src/schedule/ports.js';
import { parseWaitingFolderName, waitingFolderName } from '../../../src/store/store-paths.js';
import type { WaitingFolder, WaitingListing, WaitingTask } from '../../../src/store/task-store.js';
import { waitingFolderOf } from '../../../src/store/waiting-folder.js';
import { FULL_SYNC_REF, uriKey, type Task } from '../../../src/task/task.js';
import { FakeClock, SeededRandom, inertTimers } from '../../support/fake-clock.js';
import { configOf, pushedOutcome } from './scheduler-harness.js';

/**
 * A discrete-event simulation of one node: the real Distributor (with its fair share, push
 * slots and host circuits) over an in-memory store and locks, a fake clock, and a pusher whose
 * pushes take a seeded random time. Nothing waits for real time: the loop jumps the clock to the
 * next push completion or distributor pass.
 */

export interface SimRemote {
  readonly name: string;
  /** Waiting URIs kept constant: each finished push is replaced by a new URI, due at once. */
  readonly backlog: number;
  readonly shares?: number;
  readonly lane?: 'live' | 'bulk';
  /** Destination host (URLs are ssh://HOST/…); default `<name>.example.com`. */
  readonly host?: string;
  /** When the remote's backlog appears (ms from the start); default at once. */
  readonly joinsAtMs?: number;
  /** Stop topping the backlog up: the remote then only drains what it has. */
  readonly finite?: boolean;
}

export interface Dispatch {
  readonly remote: string;
  readonly uri: string;
  readonly startedAt: number;
  readonly endsAt: number;
  readonly ok: boolean;
}

export interface SimOptions {
  readonly remotes: readonly SimRemote[];
  readonly maxPushes: number;
  readonly durationMs: number;
  readonly seed: number;
  /** Mean push time (exponential); default 5 s. */
  readonly meanPushMs?: number;
  readonly extraConfig?: readonly string[];
  /** Decides a push's result: true = pushed, or a failure message (git's stderr line). */
  readonly outcome?: (request: PushRequest, now: number) => true | string;
}

export interface SimResult {
  readonly dispatches: Dispatch[];
  readonly startedAtMs: number;
  /** Push time per remote within [fromMs, toMs) (ms from the start), as shares of the total. */
  pushTimeShares(fromMs?: number, toMs?: number): Record<string, number>;
  /** Dispatches (push starts) per remote within the window, as shares of the total. */
  dispatchShares(fromMs: number, toMs: number): Record<string, number>;
  /** Longest time without a push starting for `remote` within the window. */
  longestGapMs(remote: string, fromMs: number, toMs: number): number;
  readonly distributor: Distributor;
  /** Distributor passes run: the simulation's cost. */
  readonly passes: number;
  readonly failed: number;
}

/** The store in memory, laid out as the real one: waiting tasks by folder (`<uriKey>`, `<uriKey>.bulk`). */
class MemoryStore implements SchedulerStore {
  readonly waiting = new Map<string, Map<string, WaitingTask>>();
  readonly claimed = new Map<string, WaitingTask>();
  readonly uriStates = new Map<string, unknown>();
  /** Each folder as a listing learned it, until it changes (the same object pass after pass, as the real store returns). */
  private readonly learned = new Map<string, WaitingFolder>();
  private changed = new Set<string>();
  failed = 0;
  private next = 0;

  add(task: Task, mtimeMs: number): void {
    const name = `t${(this.next++).toString(36)}.json`;
    this.put(Object.freeze({ name, key: name.slice(0, -5), task, mtimeMs }));
  }
  private put(item: WaitingTask): void {
    const folder = waitingFolderOf(item.task);
    let tasks = this.waiting.get(folder);
    if (tasks === undefined) this.waiting.set(folder, (tasks = new Map()));
    tasks.set(item.name, item);
    this.learned.delete(folder);
    this.changed.add(uriKey(item.task.uri));
  }
  async listWaiting(): Promise<WaitingListing> {
    const folders: WaitingFolder[] = [];
    for (const [folder, tasks] of this.waiting) {
      let learned = this.learned.get(folder);
      if (learned === undefined) {
        const sample = [...tasks.values()].reduce((oldest, item) => (item.mtimeMs < oldest.mtimeMs ? item : oldest));
        const { uriKey, lane } = parseWaitingFolderName(folder)!;
        learned = Object.freeze({ folder, uriKey, lane, sample, oldestMtimeMs: sample.mtimeMs, taskCount: tasks.size, seenAt: sample.mtimeMs });
        this.learned.set(folder, learned);
      }
      folders.push(learned);
    }
    const changed = this.changed;
    this.changed = new Set();
    return { folders, folder: (name) => this.learned.get(name), changed, unlearned: 0, leftToPreferred: 0, loose: [] };
  }
  /** Only a job that lost its lock queues tasks itself, and no lock is ever lost here. */
  async createMany(): Promise<never> {
    throw new Error('the simulation never loses a lock, so no job queues tasks again');
  }
  async claim(_lock: string, uriKey: string): Promise<WaitingTask[]> {
    const claimed: WaitingTask[] = [];
    for (const lane of ['live', 'bulk'] as const) {
      const folder = waitingFolderName(uriKey, lane);
      const tasks = this.waiting.get(folder);
      if (tasks === undefined) continue;
      for (const item of tasks.values()) {
        this.claimed.set(item.name, item);
        claimed.push(item);
      }
      this.waiting.delete(folder);
      this.learned.delete(folder);
      this.changed.add(uriKey);
    }
    return claimed;
  }
  /** Its locks never move a waiting folder in, so there is never anything to give back. */
  async giveBack(): Promise<string[]> {
    return [];
  }

  async reset(_lock: string, tasks: readonly WaitingTask[]): Promise<string[]> {
    const moved: string[] = [];
    for (const { name } of tasks) {
      const item = this.claimed.get(name);
      if (item === undefined) continue;
      this.claimed.delete(name);
      this.put(item);
      moved.push(name);
    }
    return moved;
  }
  async finish(_lock: string, names: readonly string[]): Promise<string[]> {
    for (const name of names) this.claimed.delete(name);
    return [...names];
  }
  async fail(_lock: string, names: readonly string[]): Promise<string[]> {
    for (const name of names) this.claimed.delete(name);
    this.failed += names.length;
    return [...names];
  }
  async parkFailed(): Promise<{ uriKey: string; name: string }> {
    this.failed++;
    return { uriKey: 'x', name: 'x' };
  }
  async readUriState(uriKey: string): Promise<unknown> {
    return this.uriStates.get(uriKey);
  }
  async writeUriState(uriKey: string, state: unknown): Promise<void> {
    this.uriStates.set(uriKey, state);
  }
  async deleteUriState(uriKey: string): Promise<boolean> {
    return this.uriStates.delete(uriKey);
  }
  async listUriStateKeys(): Promise<string[]> {
    return [...this.uriStates.keys()];
  }
}

class MemoryLocks implements SchedulerLocks {
  private readonly held = new Set<string>();
  async acquire(lockName: string): Promise<Lease | undefined> {
    if (this.held.has(lockName)) return undefined;
    this.held.add(lockName);
    return {
      leaseId: `lease-${lockName}`,
      claimName: lockName,
      stillMine: async () => this.held.has(lockName),
      heartbeat: async () => this.held.has(lockName),
      release: async () => this.held.delete(lockName),
    };
  }
}

const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export async function simulate(options: SimOptions): Promise<SimResult> {
  const clock = new FakeClock();
  const startedAt = clock.now();
  const durations = new SeededRandom(options.seed);
  const schedulerRandom = new SeededRandom(options.seed + 1000);
  const meanMs = options.meanPushMs ?? 5000;
  const hostOf = (remote: SimRemote): string => remote.host ?? `${remote.name}.example.com`;
  const config = configOf([
    'replication.distributionInterval=10s',
    'replication.randomDelay=0',
    `replication.maxPushes=${options.maxPushes}`,
    ...options.remotes.flatMap((remote) => [
      `remote.${remote.name}.url=ssh://${hostOf(remote)}/${remote.name}/\${name}.git`,
      `remote.${remote.name}.replicationDelay=0`,
      `remote.${remote.name}.threads=${options.maxPushes}`,
      `remote.${remote.name}.replicationRetry=30s`,
      ...(remote.shares === undefined ? [] : [`remote.${remote.name}.shares=${remote.shares}`]),
    ]),
    ...(options.extraConfig ?? []),
  ]);
  const store = new MemoryStore();
  let projects = 0;
  const addWork = (remote: SimRemote): void => {
    const project = `p${projects++}`;
    const refs = remote.lane === 'bulk' ? [FULL_SYNC_REF] : ['refs/heads/main'];
    // Backdated: a topped-up backlog is due at once, as a long-waiting one would be.
    store.add({ project, refs, uri: `ssh://${hostOf(remote)}/${remote.name}/${project}.git`, remote: remote.name }, clock.now() - 60_000);
  };
  const pending: Array<{ at: number; resolve: () => void }> = [];
  const dispatches: Dispatch[] = [];
  const byRemote = new Map(options.remotes.map((remote) => [remote.name, remote]));
  const pusher: Pusher = {
    push: async (request: PushRequest): Promise<PushOutcome> => {
      const took = Math.max(1, Math.round(-Math.log(1 - durations.next()) * meanMs));
      const startedPushAt = clock.now();
      const verdict = options.outcome?.(request, startedPushAt) ?? true;
      await new Promise<void>((resolve) => pending.push({ at: startedPushAt + took, resolve }));
      dispatches.push({
        remote: request.remote.name,
        uri: request.uri,
        startedAt: startedPushAt - startedAt,
        endsAt: clock.now() - startedAt,
        ok: verdict === true,
      });
      const remote = byRemote.get(request.remote.name)!;
      if (verdict === true && remote.finite !== true) addWork(remote);
      if (verdict === true) {
        return pushedOutcome(request, took);
      }
      return {
        result: 'failed',
        refs: [],
        createdRepository: false,
        durationMs: took,
        argv: [],
        failure: { kind: classifyPushFailure(128, verdict).kind, message: verdict, stderrTail: verdict, retryable: true },
      };
    },
  };
  let wake = false;
  const deps: SchedulerDeps = {
    config: () => config,
    store,
    locks: new MemoryLocks(),
    pusher,
    clock,
    random: schedulerRandom,
    timers: inertTimers,
    log: silentLog,
  };
  const distributor = new Distributor(deps, () => {
    wake = true;
  });
  const joins = options.remotes.map((remote) => ({ remote, at: startedAt + (remote.joinsAtMs ?? 0), done: false }));
  const interval = config.distributionIntervalMs;
  let nextPass = startedAt;
  let passes = 0;
  const endAt = startedAt + options.durationMs;
  for (;;) {
    for (const join of joins) {
      if (join.done || join.at > clock.now()) continue;
      join.done = true;
      for (let i = 0; i < join.remote.backlog; i++) addWork(join.remote);
      wake = true;
    }
    await flush();
    if (wake || clock.now() >= nextPass) {
      wake = false;
      if (clock.now() >= nextPass) nextPass = clock.now() + interval;
      await distributor.tick();
      passes++;
      await flush();
      continue;
    }
    pending.sort((a, b) => a.at - b.at);
    const nextJoin = Math.min(...joins.filter((join) => !join.done).map((join) => join.at));
    const next = Math.min(nextPass, pending[0]?.at ?? Number.POSITIVE_INFINITY, nextJoin);
    if (next >= endAt) break;
    clock.advance(next - clock.now());
    while (pending.length > 0 && pending[0]!.at <= clock.now()) pending.shift()!.resolve();
  }
  const windowOf = (fromMs: number, toMs: number): Dispatch[] => dispatches.filter((d) => d.endsAt > fromMs && d.startedAt < toMs);
  const asShares = (totals: Map<string, number>): Record<string, number> => {
    const sum = [...totals.values()].reduce((a, b) => a + b, 0);
    return Object.fromEntries(options.remotes.map((remote) => [remote.name, sum === 0 ? 0 : (100 * (totals.get(remote.name) ?? 0)) / sum]));
  };
  return {
    dispatches,
    startedAtMs: startedAt,
    distributor,
    passes,
    failed: store.failed,
    pushTimeShares(fromMs = 0, toMs = options.durationMs) {
      const totals = new Map<string, number>();
      for (const d of windowOf(fromMs, toMs)) totals.set(d.remote, (totals.get(d.remote) ?? 0) + Math.min(d.endsAt, toMs) - Math.max(d.startedAt, fromMs));
      return asShares(totals);
    },
    dispatchShares(fromMs, toMs) {
      const totals = new Map<string, number>();
      for (const d of dispatches) if (d.startedAt >= fromMs && d.startedAt < toMs) totals.set(d.remote, (totals.get(d.remote) ?? 0) + 1);
      return asShares(totals);
    },
    longestGapMs(remote, fromMs, toMs) {
      const starts = dispatches
        .filter((d) => d.remote === remote && d.startedAt >= fromMs && d.startedAt < toMs)
        .map((d) => d.startedAt)
        .sort((a, b) => a - b);
      let longest = 0;
      let previous = fromMs;
      for (const at of [...starts, toMs]) {
        longest = Math.max(longest, at - previous);
        previous = at;
      }
      return longest;
    },
  };
}
