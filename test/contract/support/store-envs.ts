import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { storeContext, type StoreContext, type StoreContextOptions } from '../../../src/store/store-context.js';
import { nodeStoreFs, type StoreFs } from '../../../src/store/store-fs.js';
import { TaskStore, type TaskStoreOptions } from '../../../src/store/task-store.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { MemoryStoreFs } from './memory-store-fs.js';

/** One store location plus direct access to it, as a peer or an operator would have. */
export interface StoreEnv {
  readonly root: string;
  readonly fs: StoreFs;
  store(nodeId: string, options?: Partial<TaskStoreOptions>): TaskStore;
  /** The store's helpers' context on the same fs and clock, for work no `TaskStore` opens the store for (layout-upgrade.ts). */
  context(nodeId: string, options?: Partial<StoreContextOptions>): StoreContext;
  /** Sorted entry names of a folder relative to the root; [] when it does not exist. */
  list(rel: string): string[];
  read(rel: string): string;
  write(rel: string, content: string): void;
  mkdir(rel: string): void;
  exists(rel: string): boolean;
  mtime(rel: string): number;
  setMtime(rel: string, mtimeMs: number): void;
  /** What a stranger can leave in the store: a FIFO, a symlink to `target` (absolute), a file of `bytes` (sparse where real). */
  mkfifo(rel: string): void;
  symlink(rel: string, target: string): void;
  writeSized(rel: string, bytes: number): void;
}

export type StoreEnvFactory = readonly [name: string, make: () => StoreEnv];

/**
 * The task store contract runs against a real directory and against the in-memory fake.
 * Call at the top of a test file: the real one registers temp-dir cleanup.
 */
export function storeEnvs(): StoreEnvFactory[] {
  const tempDir = useTempDirs();
  return [
    ['real directory', () => realEnv(tempDir('refrelay-store'))],
    ['in-memory fs', () => memoryEnv()],
  ];
}

function realEnv(root: string): StoreEnv {
  const at = (rel: string): string => join(root, rel);
  return {
    root,
    fs: nodeStoreFs,
    store: (nodeId, options) => new TaskStore({ root, nodeId, ...options }),
    context: (nodeId, options) => storeContext({ root, nodeId, ...options }),
    list: (rel) => (existsSync(at(rel)) ? readdirSync(at(rel)).sort() : []),
    read: (rel) => readFileSync(at(rel), 'utf8'),
    write: (rel, content) => writeFileSync(at(rel), content),
    mkdir: (rel) => mkdirSync(at(rel), { recursive: true }),
    exists: (rel) => existsSync(at(rel)),
    mtime: (rel) => statSync(at(rel)).mtimeMs,
    setMtime: (rel, mtimeMs) => utimesSync(at(rel), mtimeMs / 1000, mtimeMs / 1000),
    mkfifo: (rel) => execFileSync('mkfifo', [at(rel)]),
    symlink: (rel, target) => symlinkSync(target, at(rel)),
    writeSized: (rel, bytes) => {
      writeFileSync(at(rel), '');
      truncateSync(at(rel), bytes);
    },
  };
}

function memoryEnv(): StoreEnv {
  let now = Date.UTC(2025, 0, 1);
  // Every call moves time on, so files written one after another have distinct mtimes.
  const clock = { now: () => (now += 1), monotonic: () => now };
  const fs = new MemoryStoreFs(clock.now);
  const root = '/store';
  const at = (rel: string): string => join(root, rel);
  return {
    root,
    fs,
    store: (nodeId, options) => new TaskStore({ root, nodeId, clock, ...options, fs: options?.fs ?? fs }),
    context: (nodeId, options) => storeContext({ root, nodeId, clock, ...options, fs: options?.fs ?? fs }),
    list: (rel) => (fs.existsSync(at(rel)) ? fs.readdirSync(at(rel)).sort() : []),
    read: (rel) => fs.readFileSync(at(rel)),
    write: (rel, content) => fs.writeRaw(at(rel), content),
    mkdir: (rel) => fs.mkdirSync(at(rel)),
    exists: (rel) => fs.existsSync(at(rel)),
    mtime: (rel) => fs.statSync(at(rel)).mtimeMs,
    setMtime: (rel, mtimeMs) => fs.setMtime(at(rel), mtimeMs),
    mkfifo: (rel) => fs.makeSpecial(at(rel), 'fifo'),
    // The in-memory fs has no outside to point to: the link is an entry that is never followed.
    symlink: (rel) => fs.makeSpecial(at(rel), 'symlink'),
    writeSized: (rel, bytes) => fs.writeRaw(at(rel), ' '.repeat(bytes)),
  };
}
