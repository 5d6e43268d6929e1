import type { RemoteConfig } from '../config/types.js';
import type { FailureKind } from './failure-policy.js';

/** The port the scheduler pushes through; GitPusher is the real adapter, tests may use a fake. */
export interface Pusher {
  push(request: PushRequest): Promise<PushOutcome>;
  /** Releases what pushes share (ssh master connections) when the node stops. */
  close?(): Promise<void>;
}

export interface PushRequest {
  readonly remote: RemoteConfig;
  /** The destination, `${name}` already expanded. May hold credentials: never logged as is. */
  readonly uri: string;
  /** The local repository (bare or work tree) the refs are read from. */
  readonly localRepo: string;
  /** Claimed local ref names, or [FULL_SYNC_REF]. */
  readonly refs: readonly string[];
  readonly signal?: AbortSignal;
  /** git's progress lines (stderr), redacted; asking for them adds --progress. */
  readonly onProgress?: (line: string) => void;
  /**
   * Called with the process group id of each `git push` spawned, for the lock's owner record;
   * git runs only when it resolves true (see run-process.ts `onSpawn`).
   */
  readonly onPushSpawn?: (pid: number) => Promise<boolean>;
}

export type RefStatus = 'new' | 'updated' | 'forced' | 'deleted' | 'up-to-date' | 'rejected' | 'dropped';

export interface RefOutcome {
  /** Local ref name. */
  readonly ref: string;
  /** Name on the destination. */
  readonly dst: string;
  readonly status: RefStatus;
  /** Why a ref was rejected or dropped, or git's summary (`abc..def`). */
  readonly detail?: string;
  /**
   * Rejected for a reason that may pass (the remote could not lock or write the ref): retried,
   * and parked only once refused the same way `replication.refRejectionLimit` times in a row.
   */
  readonly transient?: boolean;
}

export interface PushFailure {
  /** What follows from it is `FAILURE_POLICY[kind]` (`failure-policy.ts`). */
  readonly kind: FailureKind;
  /** Redacted, one line. */
  readonly message: string;
  /** Redacted, the last ~20 lines of git's stderr. */
  readonly stderrTail: string;
  readonly retryable: boolean;
  /** With kind `overloaded`: the server's Retry-After, when it sent one. */
  readonly retryAfterMs?: number;
}

/**
 * - `ok`: every ref landed or was already there.
 * - `partial`: git reported a result for every ref, and at least one was
 *   rejected or dropped. This holds even when nothing landed: the per-ref list
 *   is authoritative, and the caller parks exactly the refs that failed. A ref
 *   refused for a reason that may pass is marked `transient`: the caller
 *   decides when to give up on it. When a pre-receive hook declined a push of
 *   several refs as a whole, the refs were pushed again in parts, and only the
 *   refs it refuses are rejected here.
 * - `failed`: the push did not complete (or a later chunk of a long push did
 *   not), or a chunk's only answers were refusals that may pass (the remote
 *   could not lock a ref): `failure` says why (then kind `transient`), `refs`
 *   holds what was reported.
 */
export interface PushOutcome {
  readonly result: 'ok' | 'partial' | 'failed';
  readonly refs: RefOutcome[];
  readonly failure?: PushFailure;
  readonly createdRepository: boolean;
  readonly durationMs: number;
  /** The last git push command run (the one that decided the outcome), redacted, for logs; [] when nothing needed pushing. */
  readonly argv: string[];
}
