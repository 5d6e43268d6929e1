import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { TaskStore } from '../../../src/store/task-store.js';
import { uriKey } from '../../../src/task/task.js';
import { commitFile, git, initBare, makeWorkTree, refsOf, writeHook } from '../../support/git.js';
import { killGroupsWith } from '../../support/processes.js';
import { RefrelayNode, storeDir, writeConfig, type LogLine } from '../../support/refrelay-node.js';
import { namesIn, waitUntil, waitingTaskNames } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

/**
 * Several `refrelay daemon` processes on one store, each with its own node id, pushing to bare
 * destinations whose hooks record every push and every overlap. Nodes and any orphaned
 * `git push` are killed after each test.
 */
export function useCluster(): { cluster: (options: ClusterOptions) => Cluster } {
  const tempDir = useTempDirs();
  const live: Cluster[] = [];
  afterEach(async () => {
    for (const cluster of live.splice(0)) await cluster.dispose();
  });
  return {
    cluster: (options) => {
      const made = new Cluster(tempDir(options.label), options);
      live.push(made);
      return made;
    },
  };
}

export interface ClusterOptions {
  readonly label: string;
  /** Names, or names chosen from the destination URIs they would get (see preferred-projects.ts). */
  readonly projects?: readonly string[] | ((uriOf: (project: string) => string) => readonly string[]);
  readonly lockStale?: string;
  readonly distributionInterval?: string;
  readonly randomDelay?: string;
  readonly shutdownGrace?: string;
  /** Replaces the store location (e.g. a tmpfs mount). */
  readonly storePath?: string;
  /** More `[replication]` settings, as config lines (e.g. `httpListen = 127.0.0.1:PORT`). */
  readonly replication?: readonly string[];
}

export class Cluster {
  readonly store: string;
  /** `replication.spoolPath`: in the test's temp folder, never the machine's default spool. */
  readonly spoolRoot: string;
  readonly base: string;
  readonly destRoot: string;
  readonly config: string;
  readonly projects: readonly string[];
  readonly nodes: RefrelayNode[] = [];
  private readonly works = new Map<string, string>();
  private commits = 0;

  constructor(
    readonly root: string,
    options: ClusterOptions,
  ) {
    this.store = options.storePath ?? join(root, 'store');
    this.spoolRoot = join(root, 'spool');
    this.base = join(root, 'base');
    this.destRoot = join(root, 'dest');
    const projects = options.projects ?? ['app'];
    this.projects = typeof projects === 'function' ? projects((project) => this.uri(project)) : projects;
    this.config = writeConfig(join(root, 'replication.config'), [
      '[replication]',
      `  storePath = ${this.store}`,
      `  basePath = ${this.base}`,
      `  spoolPath = ${this.spoolRoot}`,
      `  distributionInterval = ${options.distributionInterval ?? '200ms'}`,
      `  randomDelay = ${options.randomDelay ?? '100ms'}`,
      `  lockStale = ${options.lockStale ?? '2s'}`,
      `  shutdownGrace = ${options.shutdownGrace ?? '500ms'}`,
      ...(options.replication ?? []).map((line) => `  ${line}`),
      '[remote "mirror"]',
      `  url = ${this.destRoot}/\${name}.git`,
      '  replicationDelay = 0',
      // Retries must not hide behind a minute of backoff in a test that lasts seconds.
      '  replicationRetry = 1s',
    ]);
    for (const project of this.projects) {
      const source = initBare(join(this.base, `${project}.git`));
      const work = makeWorkTree(join(root, 'work', project), 1);
      git(work, ['push', '-q', source, 'main']);
      this.works.set(project, work);
      makeWatchedDestination(this.dest(project));
    }
  }

  dest(project = this.projects[0]!): string {
    return join(this.destRoot, `${project}.git`);
  }

  source(project = this.projects[0]!): string {
    return join(this.base, `${project}.git`);
  }

  uri(project = this.projects[0]!): string {
    return `${this.destRoot}/${project}.git`;
  }

  lockName(project = this.projects[0]!): string {
    return uriKey(this.uri(project));
  }

  taskStore(nodeId = 'hook'): TaskStore {
    return new TaskStore({ root: this.store, nodeId });
  }

  /** `hostname`: as if on another machine (see RefrelayNode.start; root only). */
  start(nodeId: string, env: NodeJS.ProcessEnv = {}, hostname?: string): RefrelayNode {
    const node = RefrelayNode.start({ config: this.config, nodeId, env, ...(hostname === undefined ? {} : { hostname }) });
    this.nodes.push(node);
    return node;
  }

  /** A new commit on `branch` of the source (as a developer's push would make), and its enqueue. */
  async update(project = this.projects[0]!, branch = 'main', store = this.taskStore()): Promise<string> {
    const work = this.works.get(project)!;
    const sha = commitFile(work, `change-${++this.commits}.txt`, `change ${this.commits}\n`);
    git(work, ['push', '-q', '-f', this.source(project), `HEAD:refs/heads/${branch}`]);
    await store.create({ project, refs: [`refs/heads/${branch}`], uri: this.uri(project), remote: 'mirror' });
    return sha;
  }

  /** Seconds the destination's pre-receive hook sleeps from now on (0: no sleep). */
  setPushSleep(seconds: number, project = this.projects[0]!): void {
    const file = join(this.dest(project), 'sleep-seconds');
    if (seconds > 0) writeFileSync(file, `${seconds}\n`);
    else rmSync(file, { force: true });
  }

  delivered(project = this.projects[0]!): boolean {
    const want = refsOf(this.source(project));
    const have = refsOf(this.dest(project));
    return want.size === have.size && [...want].every(([ref, sha]) => have.get(ref) === sha);
  }

  queueEmpty(): boolean {
    return waitingTaskNames(this.store).length === 0 && namesIn(storeDir(this.store, 'running')).length === 0;
  }

  async waitDelivered(timeoutMs = 20_000): Promise<void> {
    await waitUntil('every ref delivered and the queue empty', () => this.queueEmpty() && this.projects.every((p) => this.delivered(p)), timeoutMs, 50);
  }

  async dispose(): Promise<void> {
    for (const node of this.nodes.splice(0)) {
      await node.stop();
    }
    killGroupsWith(this.destRoot);
  }
}

/**
 * A bare repository whose pre-receive hook appends its pid to `hooks.log`, sleeps for the
 * seconds in `sleep-seconds` (when present), and appends to `overlaps.log` when another push's
 * hook is alive at the same time; post-receive appends to `pushes.log`. A marker left by a
 * killed hook names a dead pid, so it is no overlap.
 */
export function makeWatchedDestination(path: string): string {
  initBare(path);
  writeHook(
    path,
    'pre-receive',
    [
      '#!/bin/sh',
      'm="$GIT_DIR/push-in-progress"',
      'if ! mkdir "$m" 2>/dev/null; then',
      '  old=$(cat "$m/pid" 2>/dev/null)',
      '  if [ -n "$old" ] && case "$(ps -o stat= -p "$old" 2>/dev/null)" in ""|Z*) true;; *) false;; esac; then',
      '    rm -rf "$m"; mkdir "$m" 2>/dev/null || echo "overlap $$" >> "$GIT_DIR/overlaps.log"',
      '  else',
      '    echo "overlap $$ with ${old:-?}" >> "$GIT_DIR/overlaps.log"',
      '  fi',
      'fi',
      'echo $$ > "$m/pid"',
      'echo $$ >> "$GIT_DIR/hooks.log"',
      's=$(cat "$GIT_DIR/sleep-seconds" 2>/dev/null)',
      '[ -n "$s" ] && sleep "$s"',
      'cat > /dev/null',
      '[ "$(cat "$m/pid" 2>/dev/null)" = $$ ] && rm -rf "$m"',
      'exit 0',
      '',
    ].join('\n'),
  );
  writeHook(path, 'post-receive', '#!/bin/sh\nrefs=$(wc -l)\necho "push $refs" >> "$GIT_DIR/pushes.log"\n');
  return path;
}

/** Pids of pre-receive hooks that started at this destination, in order. */
export function hookPids(dest: string): number[] {
  const log = join(dest, 'hooks.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

/** Milliseconds since the epoch of a node log line (pino's ISO `time`, the real clock). */
export function logTime(line: LogLine): number {
  return Date.parse(String(line.time));
}

const TASK_FILE = /^[0-9a-f]{40}\.json$/;

/** The lock folder of a URI: the owner record (in its lease folder), and the task files claimed into each lease folder. */
export function lockSnapshot(store: string, lockName: string): { owner: Record<string, unknown> | undefined; entries: Record<string, string[]> } {
  const dir = storeDir(store, 'running', lockName);
  let owner: Record<string, unknown> | undefined;
  const entries: Record<string, string[]> = {};
  for (const name of namesIn(dir)) {
    const ownerFile = join(dir, name, 'owner.json');
    if (owner === undefined && existsSync(ownerFile)) owner = JSON.parse(readFileSync(ownerFile, 'utf8')) as Record<string, unknown>;
    // Claimed task names only: the owner record is reported separately, and its temp
    // (`.owner.<token>.tmp`) comes and goes with every heartbeat.
    entries[name] = existsSync(join(dir, name)) ? safeNames(join(dir, name)).filter((entry) => TASK_FILE.test(entry) || entry === '<not a folder>') : [];
  }
  return { owner, entries };
}

function safeNames(path: string): string[] {
  try {
    return namesIn(path);
  } catch {
    return ['<not a folder>'];
  }
}
