import { isTransientRejection, isWholePushDecline, type PorcelainRef } from './porcelain.js';
import type { PlannedRef } from './push-plan.js';
import type { RefOutcome, RefStatus } from './push-types.js';

const STATUS_BY_FLAG: Readonly<Record<PorcelainRef['flag'], RefStatus>> = {
  ' ': 'updated',
  '+': 'forced',
  '-': 'deleted',
  '*': 'new',
  '!': 'rejected',
  '=': 'up-to-date',
};

export interface ChunkRefs {
  readonly refs: RefOutcome[];
  /** Rejections that say the remote was busy (could not lock), not no. */
  readonly transientRejections: RefOutcome[];
  /** Refs a pre-receive hook declined with the whole push: their own answer is not known. */
  readonly declinedWithPush: RefOutcome[];
}

/**
 * Joins git's per-ref report to what we asked for, by destination name
 * (unique within a plan; the source column holds an object id, not our ref).
 */
export function refOutcomes(planned: readonly PlannedRef[], reported: readonly PorcelainRef[]): ChunkRefs {
  const byDst = new Map(reported.map((line) => [line.dst, line]));
  const refs: RefOutcome[] = [];
  const transientRejections: RefOutcome[] = [];
  const declinedWithPush: RefOutcome[] = [];
  for (const want of planned) {
    const line = byDst.get(want.dst);
    if (line === undefined) {
      refs.push({ ref: want.ref, dst: want.dst, status: 'rejected', detail: 'git reported no status for this ref' });
      continue;
    }
    const detail = line.reason === undefined ? line.summary : `${line.summary} (${line.reason})`;
    const transient = isTransientRejection(line);
    const outcome: RefOutcome = { ref: want.ref, dst: want.dst, status: STATUS_BY_FLAG[line.flag], detail, ...(transient ? { transient } : {}) };
    refs.push(outcome);
    if (transient) transientRejections.push(outcome);
    if (isWholePushDecline(line)) declinedWithPush.push(outcome);
  }
  return { refs, transientRejections, declinedWithPush };
}

/** Landed, or already there: the destination took this ref. */
export function accepted(ref: RefOutcome): boolean {
  return ref.status !== 'rejected' && ref.status !== 'dropped';
}

/** `ok` unless something was rejected or dropped. */
export function resultOf(refs: readonly RefOutcome[]): 'ok' | 'partial' {
  return refs.some((ref) => ref.status === 'rejected' || ref.status === 'dropped') ? 'partial' : 'ok';
}
