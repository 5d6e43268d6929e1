import type { Task } from '../task/task.js';

/** Outcome of publishing one task: `created: false` means the same task was already queued. */
export interface CreateResult {
  readonly key: string;
  readonly created: boolean;
}

/** A task `TaskStore.createEach` could not publish, and why; the others of that call are unaffected. */
export interface CreateFailure {
  readonly key: string;
  readonly error: unknown;
}

export type CreateOutcome = CreateResult | CreateFailure;

/** A published task file. Immutable: the same object is returned by every listing while the file exists. */
export interface WaitingTask {
  /** File name, `<taskKey>.json`. */
  readonly name: string;
  /** The file name stem. Equal to `taskKey(task)` for files we wrote; Gerrit's files hash differently. */
  readonly key: string;
  readonly task: Task;
  /** Store-clock time of the first enqueue (kept by claim and reset renames). */
  readonly mtimeMs: number;
}

/** A task file inside a URI lock folder. */
export type ClaimedTask = WaitingTask;

/** Why tasks were given up on; stored next to them in `failed/<uriKey>/`. */
export interface FailureReason {
  readonly reason: string;
  readonly attempts?: number;
  /** The refs that failed, when only some refs of the task were rejected. */
  readonly refs?: readonly string[];
}

export interface FailureRecord extends FailureReason {
  /** Epoch ms on the failing node's clock. */
  readonly at: number;
  readonly nodeId: string;
}

export interface FailedTask extends WaitingTask {
  readonly uriKey: string;
  /** Undefined when the reason file is missing or unreadable; the task itself is still listed. */
  readonly reason: FailureRecord | undefined;
}

/** One entry of `running/`: a URI lock folder and what it holds. */
export interface RunningLock {
  readonly lockName: string;
  /** Parsed `owner.json` when present and readable; its shape belongs to the lock component. */
  readonly ownerRecord: unknown;
  /** Every task under the lock, wherever it sits. */
  readonly tasks: readonly ClaimedTask[];
  /**
   * The lock folder ('whole') or a claim folder in it ('part') is one this node may not list
   * (EACCES, EPERM): it may hold claimed tasks `tasks` does not show, so a wait counts the URI as
   * being pushed; `status` leaves out only a lock it could not list at all.
   */
  readonly unreadable: false | 'whole' | 'part';
  readonly mtimeMs: number;
}

/** `nodes/<nodeId>.json` as read: the parsed record and when the store last saw it replaced. */
export interface NodeRecordFile {
  readonly name: string;
  /** Parsed JSON; its shape belongs to the cluster component. */
  readonly record: unknown;
  /** Store-clock time of the last heartbeat write. */
  readonly mtimeMs: number;
}

/** What a node should log or count; the store itself never logs. */
export type StoreEvent =
  | { readonly type: 'quarantined'; readonly path: string; readonly movedTo: string; readonly reason: string }
  | { readonly type: 'quarantine-failed'; readonly path: string; readonly reason: string; readonly error: unknown }
  /** The store had no marker and got one: made new, or an earlier refrelay's store adopted. */
  | { readonly type: 'store-marked'; readonly root: string; readonly opening: 'created' | 'adopted' }
  /** A folder of the layout was missing from a marked store (removed by hand or a tool) and was made again. */
  | { readonly type: 'folder-recreated'; readonly path: string }
  /** A flat task file (layout 1) that could not be sorted into its waiting folder, and why: it is not pushed while it stays. */
  | { readonly type: 'waiting-task-left'; readonly path: string; readonly reason: string }
  /** A waiting folder this client saw as a claimed folder (a stale lookup): the task went to the top of waiting/ instead. */
  | { readonly type: 'stale-waiting-folder'; readonly path: string; readonly movedTo: string };
