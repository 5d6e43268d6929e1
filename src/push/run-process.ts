import { spawn } from 'node:child_process';

export interface RunOptions {
  readonly cwd?: string;
  /** The complete environment: nothing is inherited. */
  readonly env: Readonly<Record<string, string>>;
  /** Aborting it stops the whole process group: SIGTERM, then SIGKILL after killGraceMs. */
  readonly signal?: AbortSignal;
  readonly killGraceMs: number;
  /** Each stderr line (split on \n and \r, as git redraws progress with \r). */
  readonly onStderrLine?: (line: string) => void;
  /**
   * Given the child's pid (also its process group id), records it where a recovery can find it,
   * and answers whether the command may start. It does not start before the returned promise
   * settles, and never unless it resolves true: a node killed before its record is written leaves
   * no command running that nobody knows of (DESIGN.md "Orphaned pushes").
   */
  readonly onSpawn?: (pid: number) => Promise<boolean>;
  /** Any bytes on stdout or stderr: the child (or what it started) is making progress. */
  readonly onOutput?: () => void;
}

export interface RunResult {
  /** Null when the process ended by a signal or never started. */
  readonly exitCode: number | null;
  readonly exitSignal: NodeJS.Signals | null;
  readonly stdout: string;
  /** The last STDERR_KEEP characters of stderr. */
  readonly stderr: string;
  /** True when the signal fired while the process ran. */
  readonly killed: boolean;
  /** Set when the process could not be started (ENOENT, EACCES…). */
  readonly spawnError?: Error;
}

const STDERR_KEEP = 64 * 1024;

/**
 * Holds the command until a line arrives on stdin, then becomes it (`exec` keeps the pid, its
 * start time and the group). End of input without a line, as when the node dies, ends the
 * shell without running it.
 */
const GATE = 'read -r go || exit 1; exec "$0" "$@"';
/** The shell's exit status when `exec` could not run the command: not found, not executable. */
const GATE_EXEC_FAILED = new Set([126, 127]);

/** Process groups of children still running, by leader pid. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

/** Whether `pid` leads a process group this process started and still runs (a push of its own): recovery never signals one. */
export function isLiveChildGroup(pid: number): boolean {
  return liveGroups.has(pid);
}

/**
 * An abrupt exit (a second stop signal, a fatal error) leaves the claims of running pushes to
 * recovery; their git and ssh must not push on as orphans while a restarted node pushes the
 * same claim. A graceful stop has already waited for or aborted them, so this finds nothing.
 */
function trackGroup(pid: number): void {
  liveGroups.add(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const group of liveGroups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // ESRCH: already gone.
      }
    }
  });
}

/**
 * Runs a command in its own process group (`detached`), so that stopping it
 * also stops what it started: git forks ssh through `sh -c`, and killing only
 * git leaves ssh running, reparented to PID 1, until the server gives up.
 * Resolves once stdout and stderr are closed, that is once every process that
 * held them (ssh included) has exited.
 */
export function runProcess(command: string, args: readonly string[], options: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    if (options.signal?.aborted) {
      resolve({ exitCode: null, exitSignal: null, stdout: '', stderr: '', killed: true });
      return;
    }
    const { onSpawn } = options;
    const [file, argv] = onSpawn === undefined ? [command, args] : ['sh', ['-c', GATE, command, ...args]];
    // stdin is an empty pipe, ended at once or when the gate opens.
    const child = spawn(file, argv, { cwd: options.cwd, env: options.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    const pid = child.pid;
    if (pid !== undefined) trackGroup(pid);
    // The child may be gone already (stopped meanwhile): nothing to write to then.
    child.stdin.on('error', () => undefined);
    const open = (go: boolean): void => void child.stdin.end(go ? '\n' : undefined);
    if (pid === undefined || onSpawn === undefined) open(false);
    else onSpawn(pid).then(open, () => open(false));

    let killed = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      killed = true;
      killGroup(pid, 'SIGTERM');
      graceTimer = setTimeout(() => killGroup(pid, 'SIGKILL'), options.killGraceMs);
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });

    const stdout: Buffer[] = [];
    const stderr = new StderrTail(options.onStderrLine);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout.push(chunk);
      options.onOutput?.();
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      options.onOutput?.();
      stderr.add(chunk);
    });
    let spawnError: Error | undefined;
    child.once('error', (error) => {
      spawnError = error;
    });
    child.once('close', (exitCode, exitSignal) => {
      if (onSpawn !== undefined && spawnError === undefined && stdout.length === 0) spawnError = gateExecFailure(command, exitCode, stderr.text);
      if (pid !== undefined) liveGroups.delete(pid);
      options.signal?.removeEventListener('abort', onAbort);
      if (graceTimer !== undefined) clearTimeout(graceTimer);
      // A killed group member that closed its pipes early could still linger.
      if (killed) killGroup(pid, 'SIGKILL');
      stderr.end();
      resolve({
        exitCode,
        exitSignal,
        stdout: Buffer.concat(stdout).toString('utf8'),
        stderr: stderr.text,
        killed,
        ...(spawnError === undefined ? {} : { spawnError }),
      });
    });
  });
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every process of the group has exited already.
  }
}

/** The gate's shell could not become the command: reported as a command that could not start. */
function gateExecFailure(command: string, exitCode: number | null, stderr: string): Error | undefined {
  if (exitCode === null || !GATE_EXEC_FAILED.has(exitCode) || !stderr.includes(command)) return undefined;
  return new Error(stderr.trim().split('\n').pop() ?? `exit ${exitCode}`);
}

/** Keeps the last STDERR_KEEP characters of stderr and hands each whole line on (split on \n and \r). */
class StderrTail {
  text = '';
  private partialLine = '';

  constructor(private readonly onLine: ((line: string) => void) | undefined) {}

  add(chunk: string): void {
    this.text = (this.text + chunk).slice(-STDERR_KEEP);
    if (this.onLine === undefined) return;
    const parts = (this.partialLine + chunk).split(/\r\n|\r|\n/);
    this.partialLine = parts.pop() ?? '';
    for (const line of parts) if (line !== '') this.onLine(line);
  }

  /** The last line, when the output did not end with a line break. */
  end(): void {
    if (this.partialLine !== '' && this.onLine !== undefined) this.onLine(this.partialLine);
    this.partialLine = '';
  }
}
