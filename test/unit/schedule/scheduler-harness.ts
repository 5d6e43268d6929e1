import type { RemoteConfig, ReplicationConfig } from '../../../src/config/types.js';
import { validateConfig } from '../../../src/config/load-config.js';
import type { GitConfigEntry } from '../../../src/config/git-config-reader.js';
import { silentLog } from '../../../src/runtime/log.js';
import type { Pusher, PushOutcome, PushRequest } from '../../../src/push/git-pusher.js';
import type { Lease, SchedulerDeps, SchedulerLocks } from '../../../src/schedule/ports.js';
import { groupByUri, type UriGroup } from '../../../src/schedule/uri-groups.js';
import { parseWaitingFolderName, waitingFolderName } from '../../../src/store/store-paths.js';
import { TaskStore, type WaitingFolder, type WaitingTask } from '../../../src/store/task-store.js';
import { decodeTask, laneOfTask, taskKey, uriKey, type Lane, type Task } from '../../../src/task/task.js';
import { MemoryStoreFs } from '../../contract/support/memory-store-fs.js';
import { FakeClock, SeededRandom, inertTimers } from '../../support/fake-clock.js';

export const ROOT = '/store';

/** Build a config from `section.key=value` lines, the way git would hand them over. */
export function configOf(lines: string[]): ReplicationConfig {
  const entries: GitConfigEntry[] = lines.map((line) => {
    const [key, ...rest] = line.split('=');
    const parts = key!.split('.');
    return {
      section: parts[0]!,
      subsection: parts.length > 2 ? parts.slice(1, -1).join('.') : undefined,
      name: parts.at(-1)!.toLowerCase(),
      value: rest.join('='),
    };
  });
  const result = validateConfig(
    [
      { section: 'replication', subsection: undefined, name: 'storepath', value: ROOT },
      { section: 'replication', subsection: undefined, name: 'basepath', value: '/repos' },
      ...entries,
    ],
    'test.config',
    'host',
  );
  if (result.config === undefined) throw new Error(result.problems.map((p) => `${p.key}: ${p.message}`).join('\n'));
  return result.config;
}

/** Locks held in memory; `heldElsewhere` simulates another node holding a URI's lock. */
export class FakeLocks implements SchedulerLocks {
  readonly held = new Map<string, string>();
  readonly heldElsewhere = new Set<string>();
  /** Leases offer `retire` (the real lock's one-rename finish) when set; `retireFails` makes it throw. */
  retiring = false;
  retireFails = false;
  /** The waiting folder a job names is renamed in as the claim folder, as the real lock does. */
  movingIn = false;
  readonly calls = { release: 0, retire: 0 };
  /** The task names each retire call was given. */
  readonly retiredNames: string[][] = [];
  private next = 0;
  constructor(private readonly fs: MemoryStoreFs) {}
  async acquire(lockName: string, _uri: string, leaseFrom?: string): Promise<Lease | undefined> {
    if (this.held.has(lockName) || this.heldElsewhere.has(lockName)) return undefined;
    const leaseId = `lease-${this.next++}`;
    this.held.set(lockName, leaseId);
    const claimDir = `${ROOT}/ref-updates/running/${lockName}`;
    const movedIn =
      this.movingIn &&
      leaseFrom !== undefined &&
      (await this.fs.rename(`${ROOT}/ref-updates/waiting/${leaseFrom}`, claimDir).then(
        () => true,
        () => false,
      ));
    if (!movedIn) this.fs.mkdirSync(claimDir);
    return {
      leaseId,
      claimName: lockName,
      ...(movedIn ? { leasedFolder: leaseFrom } : {}),
      stillMine: async () => this.held.get(lockName) === leaseId,
      heartbeat: async () => this.held.get(lockName) === leaseId,
      release: async () => {
        this.calls.release++;
        if (this.held.get(lockName) !== leaseId) return false;
        this.held.delete(lockName);
        await this.fs.rmdir(claimDir).catch(() => undefined);
        return true;
      },
      ...(this.retiring
        ? {
            retire: async (pushed: ReadonlySet<string>) => {
              this.calls.retire++;
              this.retiredNames.push([...pushed].sort());
              if (this.retireFails) throw Object.assign(new Error('EACCES: permission denied, rename'), { code: 'EACCES' });
              if (this.held.get(lockName) !== leaseId) return false;
              // As the real lease: never retire a file this push did not finish.
              if (this.fs.readdirSync(claimDir).some((name) => !pushed.has(name)))
                throw new Error(`the claim folder ${claimDir} holds files this push did not finish`);
              this.held.delete(lockName);
              await this.fs.rename(claimDir, `${ROOT}/ref-updates/done/${lockName}.${leaseId}`);
              return true;
            },
          }
        : {}),
    };
  }
}

type Respond = (request: PushRequest) => Partial<PushOutcome>;

/** A push that updated every ref it was asked to. */
export function pushedOutcome(request: PushRequest, durationMs: number): PushOutcome {
  return { result: 'ok', refs: request.refs.map((ref) => ({ ref, dst: ref, status: 'updated' as const })), createdRepository: false, durationMs, argv: [] };
}

/** A pusher whose pushes finish when the test releases them. */
export class FakePusher implements Pusher {
  readonly requests: PushRequest[] = [];
  private readonly waiting: Array<() => void> = [];
  respond: Respond = () => ({});
  manual = false;

  async push(request: PushRequest): Promise<PushOutcome> {
    this.requests.push(request);
    if (this.manual) await new Promise<void>((resolve) => this.waiting.push(resolve));
    const defaults = pushedOutcome(request, 10);
    return { ...defaults, ...this.respond(request) };
  }

  releaseAll(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  get inFlight(): number {
    return this.waiting.length;
  }
}

export interface Harness {
  clock: FakeClock;
  fs: MemoryStoreFs;
  store: TaskStore;
  locks: FakeLocks;
  pusher: FakePusher;
  deps: SchedulerDeps;
  remote(name: string): RemoteConfig;
  enqueue(project: string, refs: string[], remote?: string, uri?: string): Promise<void>;
  uriOf(project: string, remote?: string): string;
  settle(): Promise<void>;
  /** Every task in the waiting folders, read from the files (a listing holds one task per folder), oldest first. */
  waitingTasks(): WaitingTask[];
  /** The URI's group as a pass would build it from a listing of the store; throws when nothing of it is listed. */
  groupOf(uri: string): Promise<UriGroup>;
}

export function harness(configLines: string[], options: { random?: number } = {}): Harness {
  const clock = new FakeClock();
  const fs = new MemoryStoreFs(() => clock.now());
  const random = new SeededRandom(7, options.random ?? 0.5);
  const store = new TaskStore({ root: ROOT, nodeId: 'node-a', fs, clock, random });
  const locks = new FakeLocks(fs);
  const pusher = new FakePusher();
  const config = configOf(configLines);
  const deps: SchedulerDeps = { config: () => config, store, locks, pusher, clock, random, timers: inertTimers, log: silentLog };
  const uriOf = (project: string, remote = 'mirror'): string => `/dest/${remote}/${project}.git`;
  return {
    clock,
    fs,
    store,
    locks,
    pusher,
    deps,
    remote: (name) => config.remotes.find((r) => r.name === name)!,
    uriOf,
    enqueue: async (project, refs, remote = 'mirror', uri = uriOf(project, remote)) => {
      await store.create({ project, refs, uri, remote });
    },
    // Let promise chains (push jobs) run to completion without any real time passing.
    settle: async () => {
      for (let i = 0; i < 50; i++) await new Promise((resolve) => setImmediate(resolve));
    },
    waitingTasks: () => waitingTasksIn(fs, store),
    groupOf: async (uri) => {
      const group = groupByUri(config, (await store.listWaiting()).folders).get(uriKey(uri));
      if (group === undefined) throw new Error(`nothing of ${uri} is listed in waiting/`);
      return group;
    },
  };
}

/** The task files of every waiting folder, parsed, oldest first (then by name). */
export function waitingTasksIn(fs: MemoryStoreFs, store: TaskStore): WaitingTask[] {
  const tasks: WaitingTask[] = [];
  for (const folder of fs.readdirSync(store.paths.waiting)) {
    if (parseWaitingFolderName(folder) === undefined) continue;
    const dir = store.paths.waitingFolder(folder);
    for (const name of fs.readdirSync(dir)) {
      const path = `${dir}/${name}`;
      tasks.push({ name, key: name.slice(0, -'.json'.length), task: decodeTask(fs.readFileSync(path)), mtimeMs: fs.statSync(path).mtimeMs });
    }
  }
  return tasks.sort((a, b) => a.mtimeMs - b.mtimeMs || a.name.localeCompare(b.name));
}

/**
 * A waiting folder as a listing learns it (frozen), its sample task standing for the folder. By
 * default the folder is the sample's URI's, in the sample's lane, with one task.
 */
export function waitingFolder(
  sample: Task,
  options: { oldestMtimeMs: number; taskCount?: number; lane?: Lane; uriKey?: string; sampleMtimeMs?: number; seenAt?: number },
): WaitingFolder {
  const key = options.uriKey ?? uriKey(sample.uri);
  const lane = options.lane ?? laneOfTask(sample);
  const name = taskKey(sample);
  return Object.freeze({
    folder: waitingFolderName(key, lane),
    uriKey: key,
    lane,
    sample: Object.freeze({ name: `${name}.json`, key: name, task: Object.freeze(sample), mtimeMs: options.sampleMtimeMs ?? options.oldestMtimeMs }),
    oldestMtimeMs: options.oldestMtimeMs,
    taskCount: options.taskCount ?? 1,
    seenAt: options.seenAt ?? options.oldestMtimeMs,
  });
}

export { uriKey };
