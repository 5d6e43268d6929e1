import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nodeLockFs } from '../../../src/lock/lock-files.js';
import { UriLocks, type LockFs } from '../../../src/lock/uri-lock.js';
import { FakeClock, SeededRandom } from '../../support/fake-clock.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { memoryLockFs } from './memory-lock-fs.js';
import { MemoryStoreFs } from './memory-store-fs.js';

export interface LockNodeOptions {
  /** `trustMs` of UriLocks (default 0: every fence reads the record). */
  readonly trustMs?: number;
  /** Wraps the env's LockFs, to stage a failure or a peer acting in between two steps. */
  readonly wrapFs?: (fs: LockFs) => LockFs;
}

/**
 * One store's `ref-updates/` as the lock sees it, with direct access for the test (a peer, an
 * operator or a crash). Paths given to the helpers are relative to `ref-updates/`.
 */
export interface LockEnv {
  readonly clock: FakeClock;
  /** `<store>/ref-updates/running`. */
  readonly runningDir: string;
  /** `<store>/ref-updates/done`, where retired lease folders go. */
  readonly doneDir: string;
  /** This node's UriLocks on the env's filesystem, with the env's clock. */
  locks(nodeId: string, options?: LockNodeOptions): UriLocks;
  /** Sorted names of a folder; [] when it does not exist. */
  list(rel: string): string[];
  read(rel: string): string;
  write(rel: string, content: string): void;
  mkdir(rel: string): void;
  exists(rel: string): boolean;
  /** What a stranger can leave: a FIFO, a symlink (never followed by the lock), a file of `bytes`. */
  mkfifo(rel: string): void;
  symlink(rel: string, targetRel: string): void;
  writeSized(rel: string, bytes: number): void;
}

export type LockEnvFactory = readonly [name: string, make: () => LockEnv];

/**
 * The URI lock contract runs against a real directory (the daemon's `nodeLockFs`) and the
 * in-memory fake. Call at the top of a test file: the real one registers temp-dir cleanup.
 */
export function lockEnvs(): LockEnvFactory[] {
  const tempDir = useTempDirs();
  return [
    ['real directory', () => realEnv(tempDir('refrelay-lock'))],
    ['in-memory fs', () => memoryEnv()],
  ];
}

function makeLocks(runningDir: string, clock: FakeClock, fs: LockFs, nodeId: string, options: LockNodeOptions = {}): UriLocks {
  return new UriLocks({
    runningDir,
    nodeId,
    host: 'test-host',
    pid: 4242,
    clock,
    // Tokens differ per node only by the node id in them, as leaseIds do.
    random: new SeededRandom(1),
    fs: options.wrapFs === undefined ? fs : options.wrapFs(fs),
    trustMs: () => options.trustMs ?? 0,
  });
}

function realEnv(root: string): LockEnv {
  const base = join(root, 'ref-updates');
  const at = (rel: string): string => join(base, rel);
  const clock = new FakeClock();
  const env: LockEnv = {
    clock,
    runningDir: at('running'),
    doneDir: at('done'),
    locks: (nodeId, options) => makeLocks(at('running'), clock, nodeLockFs, nodeId, options),
    list: (rel) => (existsSync(at(rel)) ? readdirSync(at(rel)).sort() : []),
    read: (rel) => readFileSync(at(rel), 'utf8'),
    write: (rel, content) => writeFileSync(at(rel), content),
    mkdir: (rel) => mkdirSync(at(rel), { recursive: true }),
    exists: (rel) => existsSync(at(rel)),
    mkfifo: (rel) => execFileSync('mkfifo', [at(rel)]),
    symlink: (rel, targetRel) => symlinkSync(at(targetRel), at(rel)),
    writeSized: (rel, bytes) => {
      writeFileSync(at(rel), '');
      truncateSync(at(rel), bytes);
    },
  };
  env.mkdir('running');
  env.mkdir('done');
  return env;
}

function memoryEnv(): LockEnv {
  const clock = new FakeClock();
  const fs = new MemoryStoreFs(() => clock.now());
  const lockFs = memoryLockFs(fs);
  const base = '/store/ref-updates';
  const at = (rel: string): string => join(base, rel);
  const env: LockEnv = {
    clock,
    runningDir: at('running'),
    doneDir: at('done'),
    locks: (nodeId, options) => makeLocks(at('running'), clock, lockFs, nodeId, options),
    list: (rel) => (fs.existsSync(at(rel)) ? fs.readdirSync(at(rel)).sort() : []),
    read: (rel) => fs.readFileSync(at(rel)),
    write: (rel, content) => fs.writeRaw(at(rel), content),
    mkdir: (rel) => fs.mkdirSync(at(rel)),
    exists: (rel) => fs.existsSync(at(rel)),
    mkfifo: (rel) => fs.makeSpecial(at(rel), 'fifo'),
    // The in-memory fs has no outside to point to: the link is an entry that is never followed.
    symlink: (rel) => fs.makeSpecial(at(rel), 'symlink'),
    writeSized: (rel, bytes) => fs.writeRaw(at(rel), ' '.repeat(bytes)),
  };
  env.mkdir('running');
  env.mkdir('done');
  return env;
}
