import { Worker } from 'node:worker_threads';

/** One step of a batch: each is a single atomic system call. */
export type FileOp =
  | { readonly op: 'rename'; readonly from: string; readonly to: string }
  | { readonly op: 'unlink'; readonly path: string }
  | { readonly op: 'rmdir'; readonly path: string };

/** Write `data` to a new file `temp` (it must not exist), then rename it over `path`. */
interface ReplaceOp {
  readonly op: 'replace';
  readonly temp: string;
  readonly path: string;
  readonly data: string;
}

/** Per op: undefined when it was done, else the error the system call gave (with its `code`). */
export type FileOpResults = Array<NodeJS.ErrnoException | undefined>;

interface WireError {
  readonly code?: string;
  readonly errno?: number;
  readonly syscall?: string;
  readonly path?: string;
  readonly message: string;
}

/**
 * The worker runs each op as a plain synchronous system call and answers once per batch. It is
 * CommonJS evaluated from a string, so the bundled CLI needs no separate worker file.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
function replace(item) {
  const fd = fs.openSync(item.temp, 'wx');
  try {
    try {
      fs.writeFileSync(fd, item.data);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(item.temp, item.path);
  } catch (error) {
    // Ours since the exclusive open: a failed write (ENOSPC) or rename leaves nothing behind.
    try { fs.unlinkSync(item.temp); } catch {}
    throw error;
  }
}
parentPort.on('message', ({ id, ops }) => {
  const results = ops.map((item) => {
    try {
      if (item.op === 'rename') fs.renameSync(item.from, item.to);
      else if (item.op === 'rmdir') fs.rmdirSync(item.path);
      else if (item.op === 'replace') replace(item);
      else fs.unlinkSync(item.path);
      return null;
    } catch (error) {
      return { code: error.code, errno: error.errno, syscall: error.syscall, path: error.path, message: String(error.message) };
    }
  });
  parentPort.postMessage({ id, results });
});
`;

/** Ops per message: small enough that a slow network filesystem spreads a big claim over the workers. */
const CHUNK = 64;

interface Pending {
  readonly resolve: (results: Array<WireError | null>) => void;
  readonly reject: (error: Error) => void;
}

class BatchWorker {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private dead = false;

  constructor(onDeath: (worker: BatchWorker) => void) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true });
    // Idle workers must not keep a finished CLI command alive; busy ones must (see run()).
    this.worker.unref();
    this.worker.on('message', ({ id, results }: { id: number; results: Array<WireError | null> }) => {
      const request = this.pending.get(id);
      this.pending.delete(id);
      if (this.pending.size === 0) this.worker.unref();
      request?.resolve(results);
    });
    const die = (error: Error): void => {
      if (this.dead) return;
      this.dead = true;
      onDeath(this);
      for (const request of this.pending.values()) request.reject(error);
      this.pending.clear();
    };
    this.worker.on('error', die);
    this.worker.on('exit', (code) => die(new Error(`the store's file worker exited (code ${code})`)));
  }

  get load(): number {
    return this.pending.size;
  }

  run(ops: ReadonlyArray<FileOp | ReplaceOp>): Promise<Array<WireError | null>> {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.pending.set(id, { resolve, reject });
      this.worker.ref();
      this.worker.postMessage({ id, ops });
    });
  }

  terminate(): void {
    void this.worker.terminate();
  }
}

/**
 * Renames and unlinks in batches, run as plain system calls on worker threads. Claiming or
 * finishing a URI's tasks is one call per task file; through `fs.promises` each costs a promise,
 * a thread-pool hand-off and a wake-up of the event loop, which on a busy node costs more CPU
 * than the system call itself. Here a batch costs two messages. Up to `maxWorkers` threads serve
 * chunks side by side, as the thread pool would for a slow network filesystem.
 */
export class BatchFileOps {
  private readonly workers: BatchWorker[] = [];

  constructor(private readonly maxWorkers = 2) {}

  async run(ops: readonly FileOp[]): Promise<FileOpResults> {
    if (ops.length === 0) return [];
    const chunks: Array<readonly FileOp[]> = [];
    for (let start = 0; start < ops.length; start += CHUNK) chunks.push(ops.slice(start, start + CHUNK));
    const answers = await Promise.all(chunks.map((chunk) => this.pick().run(chunk)));
    return answers.flat().map((wire) => (wire === null ? undefined : toError(wire)));
  }

  /**
   * An atomic small-file write (temp, then rename) as one message instead of four thread-pool
   * round trips (open, write, close, rename): lock owner records are written this way twice per
   * push. Throws the failing call's error; the temp is gone either way.
   */
  async replaceFile(temp: string, path: string, data: string): Promise<void> {
    const [wire] = await this.pick().run([{ op: 'replace', temp, path, data }]);
    if (wire) throw toError(wire);
  }

  /** Stops the worker threads; a later batch starts new ones. */
  close(): void {
    for (const worker of this.workers.splice(0)) worker.terminate();
  }

  /** The least loaded worker; a new one only while every existing one is busy. */
  private pick(): BatchWorker {
    let best: BatchWorker | undefined;
    for (const worker of this.workers) if (best === undefined || worker.load < best.load) best = worker;
    if (best !== undefined && (best.load === 0 || this.workers.length >= this.maxWorkers)) return best;
    const worker = new BatchWorker((gone) => {
      const index = this.workers.indexOf(gone);
      if (index >= 0) this.workers.splice(index, 1);
    });
    this.workers.push(worker);
    return worker;
  }
}

function toError(wire: WireError): NodeJS.ErrnoException {
  return Object.assign(new Error(wire.message), {
    ...(wire.code === undefined ? {} : { code: wire.code }),
    ...(wire.errno === undefined ? {} : { errno: wire.errno }),
    ...(wire.syscall === undefined ? {} : { syscall: wire.syscall }),
    ...(wire.path === undefined ? {} : { path: wire.path }),
  });
}
