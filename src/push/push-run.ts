import { performance } from 'node:perf_hooks';
import { classifyPushFailure, pushFailure, stderrTail } from './failure-class.js';
import { porcelainCompleted } from './porcelain.js';
import type { PushFailure, PushOutcome, PushRequest, RefOutcome } from './push-types.js';
import type { RunResult } from './run-process.js';
import { stoppedFailure, type StopSignal } from './stop-signal.js';

/** State of one GitPusher.push() call. */
export interface Run {
  readonly request: PushRequest;
  readonly env: Readonly<Record<string, string>>;
  readonly stop: StopSignal;
  readonly startedAt: number;
  /** One creation attempt per push, whatever its result: a failing create must not loop. */
  createAttempted: boolean;
  createdRepository: boolean;
  argv: string[];
  /** From a Retry-After header in curl's trace, when the server sent one. */
  retryAfterMs?: number;
}

export type Step<T> = { ok: T } | { failure: PushFailure };

/** git ran to the end and printed porcelain's closing line. */
export function completed(result: RunResult): boolean {
  return !result.killed && result.exitCode !== null && porcelainCompleted(result.stdout);
}

export function outcome(run: Run, result: PushOutcome['result'], refs: RefOutcome[], failed?: PushFailure): PushOutcome {
  const { createdRepository, argv } = run;
  return { result, refs, ...(failed === undefined ? {} : { failure: failed }), createdRepository, durationMs: performance.now() - run.startedAt, argv };
}

/** Why a command of the run failed: a limit or the caller stopped it, it could not start, or what its stderr says. */
export function failureOf(run: Run, git: string, result: RunResult, prefix = ''): PushFailure {
  const tail = stderrTail(result.stderr);
  const stopped = stoppedFailure(run.stop.reason(), run.request.remote, tail);
  if (stopped !== undefined) return stopped;
  if (result.spawnError !== undefined) return pushFailure('permanent', `could not run ${git}: ${result.spawnError.message}`, tail);
  const classified = classifyPushFailure(result.exitCode, result.stderr);
  const killedBy = result.exitCode === null ? (result.exitSignal ?? undefined) : undefined;
  const found = pushFailure(classified.kind, `${prefix}${classified.message}`, tail, killedBy);
  return classified.kind === 'overloaded' && run.retryAfterMs !== undefined ? { ...found, retryAfterMs: run.retryAfterMs } : found;
}
