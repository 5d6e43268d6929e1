import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { StorePaths } from '../../src/store/store-paths.js';
import { STORE_FORMAT, STORE_MARKER_NAME } from '../../src/store/store-marker.js';
import { join } from 'node:path';
import { cliBin } from './paths.js';

export interface LogLine {
  level: number;
  msg: string;
  node?: string;
  [key: string]: unknown;
}

/** A `refrelay daemon` process as an operator runs it, with its JSON log kept for assertions. */
export class RefrelayNode {
  private output = '';
  private stderrText = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  private constructor(
    readonly child: ChildProcess,
    readonly nodeId: string,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (this.stderrText += chunk.toString()));
    this.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  }

  /**
   * `hostname`: run the node in a UTS namespace of its own under that host name (root only), as a
   * peer on another machine: it cannot signal this host's processes, so it never kills another
   * node's git push when it takes a lock over.
   */
  static start(options: { config: string; nodeId: string; drain?: boolean; env?: NodeJS.ProcessEnv; extraArgs?: string[]; hostname?: string }): RefrelayNode {
    const args = [cliBin, 'daemon', '--config', options.config, '--node-id', options.nodeId, '--log-level', 'debug'];
    if (options.drain) args.push('--drain');
    args.push(...(options.extraArgs ?? []));
    const spawnOptions = { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'] };
    // unshare and sh exec in turn, so the child's pid is the node's.
    const child =
      options.hostname === undefined
        ? spawn(process.execPath, args, spawnOptions)
        : spawn('unshare', ['--uts', 'sh', '-c', 'hostname "$0" && exec "$@"', options.hostname, process.execPath, ...args], spawnOptions);
    return new RefrelayNode(child, options.nodeId);
  }

  get pid(): number {
    return this.child.pid!;
  }

  get stderr(): string {
    return this.stderrText;
  }

  logs(): LogLine[] {
    return this.output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as LogLine);
  }

  /** Resolves once a log line with this message appears (or rejects after timeoutMs). */
  async waitForLog(predicate: (line: LogLine) => boolean, timeoutMs = 30_000): Promise<LogLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.logs().find(predicate);
      if (found !== undefined) return found;
      if (this.child.exitCode !== null || this.child.signalCode !== null)
        throw new Error(`node ${this.nodeId} exited before the expected log line; stderr: ${this.stderrText}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for a log line of node ${this.nodeId}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Logged errors and crashes: any of these fails a test that expects a clean run. */
  problems(): string[] {
    const bad = this.logs()
      .filter((line) => line.level >= 50)
      .map((line) => `${this.nodeId}: ${line.msg}`);
    if (/unhandled|TypeError|ReferenceError|at .*\.js:\d+/.test(this.stderrText)) bad.push(`${this.nodeId} stderr: ${this.stderrText.slice(0, 2000)}`);
    return bad;
  }
}

/** Write a replication.config from sections of lines. */
/**
 * Writes a config and, as an operator's `refrelay init` would, makes the store its `storePath`
 * names (layout and marker) unless `initStore` is false or the store is already there.
 */
export function writeConfig(path: string, lines: string[], options: { initStore?: boolean } = {}): string {
  writeFileSync(path, `${withoutDefaultListener(lines).join('\n')}\n`);
  const storePath = lines.map((line) => /^\s*storePath\s*=\s*(.+?)\s*$/.exec(line)?.[1]).find((found) => found !== undefined);
  if (storePath !== undefined && options.initStore !== false) initStoreSync(storePath);
  return path;
}

/**
 * A node's HTTP endpoint listens on 127.0.0.1:9464 unless told otherwise: nodes of test files
 * running side by side (or of two suites on one machine) would fight over that port, and the
 * loser logs a warning. A config that does not name `httpListen` gets `httpListen = off`.
 */
function withoutDefaultListener(lines: string[]): string[] {
  const section = lines.findIndex((line) => /^\s*\[replication\]\s*$/.test(line));
  if (section < 0 || lines.some((line) => /^\s*httpListen\s*=/.test(line))) return lines;
  return [...lines.slice(0, section + 1), '  httpListen = off', ...lines.slice(section + 1)];
}

/** The store's layout and marker, made synchronously (what `refrelay init` makes). */
export function initStoreSync(root: string): void {
  for (const dir of new StorePaths(root).folders) mkdirSync(dir, { recursive: true });
  const marker = join(root, STORE_MARKER_NAME);
  if (!existsSync(marker)) writeFileSync(marker, `${JSON.stringify({ format: STORE_FORMAT, storeId: 'test-store', createdAt: Date.now() })}\n`);
}

export function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

export function storeDir(store: string, ...parts: string[]): string {
  return join(store, 'ref-updates', ...parts);
}
