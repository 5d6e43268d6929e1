import { posix } from 'node:path';
import { refusalOf, type BoundedRead } from '../../../src/runtime/bounded-read.js';
import type { StoreFileHandle, StoreFs, StoreStats } from '../../../src/store/store-fs.js';

interface FileNode {
  readonly kind: 'file';
  content: string;
  mtimeMs: number;
}
interface DirNode {
  readonly kind: 'dir';
  readonly entries: Map<string, Node>;
  mtimeMs: number;
}
/** A FIFO or a symlink someone left: never opened, never followed (a path through it is ENOTDIR). */
interface SpecialNode {
  readonly kind: 'fifo' | 'symlink';
  mtimeMs: number;
}
type Node = FileNode | DirNode | SpecialNode;

/**
 * An in-memory POSIX-ish filesystem behind the `StoreFs` port: the "fake adapter" the
 * task store contract runs against next to a real directory. It keeps the semantics the
 * store relies on: `link` never overwrites (EEXIST), `rename` replaces a file, hard links
 * share one file, a directory opened for reading fails on read with EISDIR.
 */
export class MemoryStoreFs implements StoreFs {
  private readonly root: DirNode;
  /** Inode numbers, given out on first `lstat`: hard links share one, a rename keeps it. */
  private readonly inodes = new WeakMap<Node, number>();
  private nextIno = 1;

  constructor(private readonly now: () => number = () => Date.now()) {
    this.root = { kind: 'dir', entries: new Map(), mtimeMs: now() };
  }

  async open(path: string, flags: 'r' | 'wx'): Promise<StoreFileHandle> {
    let node: Node;
    if (flags === 'wx') {
      const [parent, name] = this.parentOf(path, 'open');
      if (parent.entries.has(name)) throw fsError('EEXIST', 'open', path);
      node = { kind: 'file', content: '', mtimeMs: this.now() };
      this.add(parent, name, node);
    } else {
      node = this.lookup(path, 'open');
    }
    const target = node;
    let closed = false;
    const live = (syscall: string): void => {
      if (closed) throw fsError('EBADF', syscall, path);
    };
    return {
      writeFile: async (data) => {
        live('write');
        if (target.kind !== 'file') throw fsError('EISDIR', 'write', path);
        target.content = data;
        target.mtimeMs = this.now();
      },
      sync: async () => live('fsync'),
      utimes: async (_atime, mtime) => {
        live('futimes');
        target.mtimeMs = mtime.getTime();
      },
      close: async () => {
        live('close');
        closed = true;
      },
    };
  }

  async link(existingPath: string, newPath: string): Promise<void> {
    const node = this.lookup(existingPath, 'link');
    if (node.kind === 'dir') throw fsError('EPERM', 'link', existingPath);
    const [parent, name] = this.parentOf(newPath, 'link');
    if (parent.entries.has(name)) throw fsError('EEXIST', 'link', newPath);
    this.add(parent, name, node);
  }

  async unlink(path: string): Promise<void> {
    const [parent, name] = this.parentOf(path, 'unlink');
    const node = parent.entries.get(name);
    if (node === undefined) throw fsError('ENOENT', 'unlink', path);
    if (node.kind === 'dir') throw fsError('EISDIR', 'unlink', path);
    this.remove(parent, name);
  }

  async rename(oldPath: string, newPath: string): Promise<void> {
    const [from, fromName] = this.parentOf(oldPath, 'rename');
    const node = from.entries.get(fromName);
    if (node === undefined) throw fsError('ENOENT', 'rename', oldPath);
    const [to, toName] = this.parentOf(newPath, 'rename');
    const existing = to.entries.get(toName);
    if (existing === node) return;
    if (existing !== undefined) {
      if (node.kind === 'file' && existing.kind === 'dir') throw fsError('EISDIR', 'rename', newPath);
      if (node.kind === 'dir' && existing.kind === 'file') throw fsError('ENOTDIR', 'rename', newPath);
      if (existing.kind === 'dir' && existing.entries.size > 0) throw fsError('ENOTEMPTY', 'rename', newPath);
    }
    this.remove(from, fromName);
    this.add(to, toName, node);
  }

  async readdir(path: string): Promise<string[]> {
    return this.readdirSync(path);
  }

  async readBounded(path: string, maxBytes: number): Promise<BoundedRead> {
    const stats = this.statSync(path);
    const refused = refusalOf(stats, maxBytes);
    if (refused !== undefined) return { kind: 'refused', reason: refused };
    const text = this.readFileSync(path);
    return { kind: 'text', text, mtimeMs: stats.mtimeMs, ctimeMs: stats.mtimeMs, sizeBytes: Buffer.byteLength(text), ino: stats.ino };
  }

  async lstat(path: string): Promise<StoreStats> {
    return this.statSync(path);
  }

  async mkdir(path: string, options?: { recursive: true }): Promise<unknown> {
    if (options?.recursive) {
      this.mkdirSync(path);
      return undefined;
    }
    // As mkdir(2): the parent must exist, and any entry at the name is EEXIST.
    const [parent, name] = this.parentOf(path, 'mkdir');
    if (parent.entries.has(name)) throw fsError('EEXIST', 'mkdir', path);
    this.add(parent, name, { kind: 'dir', entries: new Map(), mtimeMs: this.now() });
    return undefined;
  }

  mkdirSync(path: string): void {
    let dir = this.root;
    let walked = '';
    for (const part of parts(path)) {
      walked += `/${part}`;
      const next = dir.entries.get(part);
      if (next === undefined) {
        const made: DirNode = { kind: 'dir', entries: new Map(), mtimeMs: this.now() };
        this.add(dir, part, made);
        dir = made;
      } else if (next.kind === 'dir') {
        dir = next;
      } else {
        throw fsError('ENOTDIR', 'mkdir', walked);
      }
    }
  }

  async rmdir(path: string): Promise<void> {
    const [parent, name] = this.parentOf(path, 'rmdir');
    const node = parent.entries.get(name);
    if (node === undefined) throw fsError('ENOENT', 'rmdir', path);
    if (node.kind !== 'dir') throw fsError('ENOTDIR', 'rmdir', path);
    if (node.entries.size > 0) throw fsError('ENOTEMPTY', 'rmdir', path);
    this.remove(parent, name);
  }

  /** Test backdoors: what a peer, an editor or a crash would leave behind. */
  writeRaw(path: string, content: string): void {
    const [parent, name] = this.parentOf(path, 'open');
    this.add(parent, name, { kind: 'file', content, mtimeMs: this.now() });
  }

  makeSpecial(path: string, kind: SpecialNode['kind']): void {
    const [parent, name] = this.parentOf(path, 'mknod');
    this.add(parent, name, { kind, mtimeMs: this.now() });
  }

  setMtime(path: string, mtimeMs: number): void {
    this.lookup(path, 'utime').mtimeMs = mtimeMs;
  }

  existsSync(path: string): boolean {
    try {
      this.lookup(path, 'stat');
      return true;
    } catch {
      return false;
    }
  }

  readdirSync(path: string): string[] {
    const node = this.lookup(path, 'scandir');
    if (node.kind !== 'dir') throw fsError('ENOTDIR', 'scandir', path);
    return [...node.entries.keys()];
  }

  readFileSync(path: string): string {
    const node = this.lookup(path, 'open');
    if (node.kind === 'dir') throw fsError('EISDIR', 'read', path);
    if (node.kind !== 'file') throw fsError('EPERM', 'read', path);
    return node.content;
  }

  statSync(path: string): StoreStats {
    const node = this.lookup(path, 'stat');
    const is = (kind: Node['kind']) => () => node.kind === kind;
    const no = () => false;
    return {
      mtimeMs: node.mtimeMs,
      ctimeMs: node.mtimeMs,
      ino: this.inoOf(node),
      size: node.kind === 'file' ? Buffer.byteLength(node.content) : 0,
      isFile: is('file'),
      isDirectory: is('dir'),
      isSymbolicLink: is('symlink'),
      isFIFO: is('fifo'),
      isSocket: no,
      isBlockDevice: no,
      isCharacterDevice: no,
    };
  }

  private inoOf(node: Node): number {
    let ino = this.inodes.get(node);
    if (ino === undefined) this.inodes.set(node, (ino = this.nextIno++));
    return ino;
  }

  private lookup(path: string, syscall: string): Node {
    let node: Node = this.root;
    for (const part of parts(path)) {
      if (node.kind !== 'dir') throw fsError('ENOTDIR', syscall, path);
      const next: Node | undefined = node.entries.get(part);
      if (next === undefined) throw fsError('ENOENT', syscall, path);
      node = next;
    }
    return node;
  }

  private parentOf(path: string, syscall: string): [DirNode, string] {
    const normalized = posix.normalize(path);
    const parent = this.lookup(posix.dirname(normalized), syscall);
    if (parent.kind !== 'dir') throw fsError('ENOTDIR', syscall, path);
    return [parent, posix.basename(normalized)];
  }

  private add(dir: DirNode, name: string, node: Node): void {
    dir.entries.set(name, node);
    dir.mtimeMs = this.now();
  }

  private remove(dir: DirNode, name: string): void {
    dir.entries.delete(name);
    dir.mtimeMs = this.now();
  }
}

function parts(path: string): string[] {
  return posix
    .normalize(path)
    .split('/')
    .filter((part) => part !== '');
}

const MESSAGES: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EEXIST: 'file already exists',
  ENOTDIR: 'not a directory',
  EISDIR: 'illegal operation on a directory',
  ENOTEMPTY: 'directory not empty',
  EPERM: 'operation not permitted',
  EBADF: 'bad file descriptor',
  ENOSPC: 'no space left on device',
  EROFS: 'read-only file system',
  EIO: 'i/o error',
  EACCES: 'permission denied',
};

/** Shaped like Node's own errors, so the store cannot tell the difference. */
export function fsError(code: string, syscall: string, path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: ${MESSAGES[code] ?? 'error'}, ${syscall} '${path}'`);
  error.code = code;
  error.syscall = syscall;
  error.path = path;
  return error;
}
