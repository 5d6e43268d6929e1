import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { freePort, waitForPort } from './free-port.js';
import { gitEnv } from './git.js';

export interface GitDaemon {
  readonly port: number;
  /** `git://127.0.0.1:PORT/<name>`, `name` relative to the base path. */
  url(name: string): string;
  stop(): Promise<void>;
}

/**
 * A real `git daemon` on loopback serving every repository under `basePath`,
 * with pushes enabled. `port` brings a destination back where it was (a
 * destination that was down). It runs as our child (no --detach) in its own process
 * group, so stop() also ends the per-connection children it forked.
 */
export async function startGitDaemon(basePath: string, options: { port?: number } = {}): Promise<GitDaemon> {
  mkdirSync(basePath, { recursive: true });
  let lastError: unknown;
  // The free port may be taken between picking and binding: try a few (a fixed port is tried as is).
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = options.port ?? (await freePort());
    const child = spawn(
      'git',
      [
        'daemon',
        '--reuseaddr',
        '--enable=receive-pack',
        '--export-all',
        '--informative-errors',
        `--base-path=${basePath}`,
        '--listen=127.0.0.1',
        `--port=${port}`,
        basePath,
      ],
      { detached: true, stdio: ['ignore', 'ignore', 'pipe'], env: gitEnv },
    );
    const stderr = drain(child);
    try {
      await waitForPort(port, { alive: () => child.exitCode === null && child.signalCode === null });
      return { port, url: (name) => `git://127.0.0.1:${port}/${name.replace(/^\/+/, '')}`, stop: () => stopGroup(child) };
    } catch (error) {
      await stopGroup(child);
      lastError = new Error(`git daemon did not start: ${stderr()}`, { cause: error });
    }
  }
  throw lastError;
}

function drain(child: ChildProcess): () => string {
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-4000);
  });
  return () => text;
}

/** SIGTERM the whole group, SIGKILL after 3 s, resolve once the leader is gone. */
export async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined) return;
  const pid = child.pid;
  const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise<void>((resolve) => child.once('exit', () => resolve()));
  signalGroup(pid, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
  // Children that ignored SIGTERM must not outlive the test.
  signalGroup(pid, 'SIGKILL');
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}
