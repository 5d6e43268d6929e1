import { spawn, spawnSync } from 'node:child_process';
import { cliBin } from './paths.js';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Run the built `refrelay` binary as a user would. */
export function runCli(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): CliResult {
  const result = spawnSync(process.execPath, [cliBin, ...args], {
    cwd: options.cwd,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A `refrelay` command running in the background: its output so far, and its end. */
export interface RunningCli {
  readonly done: Promise<CliResult>;
  stderr(): string;
  /** Resolves once stderr holds `text` (or rejects after timeoutMs, or when the command ended first). */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
  /** SIGTERM: for a command that would wait for ever. */
  stop(): void;
}

export function startCli(args: string[], options: { env?: NodeJS.ProcessEnv } = {}): RunningCli {
  const child = spawn(process.execPath, [cliBin, ...args], { env: { ...process.env, NO_COLOR: '1', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let ended = false;
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliResult>((resolve) =>
    child.on('close', (status) => {
      ended = true;
      resolve({ status, stdout, stderr });
    }),
  );
  return {
    done,
    stderr: () => stderr,
    stop: () => void child.kill('SIGTERM'),
    async waitForStderr(text, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!stderr.includes(text)) {
        if (ended) throw new Error(`the command ended before writing ${JSON.stringify(text)}; stdout: ${stdout}; stderr: ${stderr}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${JSON.stringify(text)} on stderr: ${stderr}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
  };
}
