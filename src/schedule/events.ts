import type { FailureKind } from '../push/failure-policy.js';
import type { RefStatus } from '../push/push-types.js';
/**
 * What a node does, as facts for metrics and the per-URI history. URIs are redacted by the
 * emitter: nothing downstream ever holds a credential.
 */
export type ReplicationEvent =
  | {
      readonly type: 'claimed';
      readonly remote: string;
      readonly uri: string;
      readonly uriKey: string;
      readonly tasks: number;
      /** Store-clock mtime of the oldest claimed task: when the oldest update was queued. */
      readonly oldestQueuedAtMs: number;
    }
  | {
      /** A git push of these refs (local names, or the full-sync marker) is about to start. */
      readonly type: 'push-started';
      readonly remote: string;
      readonly uri: string;
      readonly uriKey: string;
      readonly project: string;
      readonly refs: readonly string[];
    }
  | {
      readonly type: 'pushed';
      readonly pushId: string;
      readonly remote: string;
      readonly uri: string;
      readonly uriKey: string;
      readonly project: string;
      /** The refs the push carried: local names, or the full-sync marker. */
      readonly refs: readonly string[];
      /** What git answered per ref (local name); `detail` redacted, one line. */
      readonly refResults: readonly { readonly ref: string; readonly status: RefStatus; readonly detail?: string }[];
      readonly outcomes: Readonly<Record<string, number>>;
      readonly durationMs: number;
      readonly result: 'ok' | 'partial' | 'failed';
      readonly failure?: string;
      /** The failure's class (push/failure-policy.ts), a small fixed set: a metric label. */
      readonly failureKind?: FailureKind;
      readonly oldestQueuedAtMs: number;
    }
  | {
      readonly type: 'retry-scheduled';
      readonly remote: string;
      readonly uri: string;
      readonly uriKey: string;
      readonly attempts: number;
      readonly retryInMs: number;
      readonly reason: string;
    }
  | { readonly type: 'task-failed'; readonly remote: string; readonly uri: string; readonly uriKey: string; readonly tasks: number; readonly reason: string }
  | { readonly type: 'takeover'; readonly uriKey: string; readonly formerNode: string | null; readonly tasks: number }
  | { readonly type: 'quarantined'; readonly file: string; readonly reason: string };

export type EventSink = (event: ReplicationEvent) => void;

export const ignoreEvents: EventSink = () => undefined;
