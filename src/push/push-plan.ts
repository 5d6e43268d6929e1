import { pushesLocalDelete } from '../config/delete-rule.js';
import { mapRefThroughRefspecs, unmapRef } from '../config/refspec.js';
import { refExclusion, type RefExclusionRules } from '../config/ref-exclusion.js';
import type { RemoteConfig } from '../config/types.js';
import { FULL_SYNC_REF } from '../task/task.js';
import type { RefOutcome } from './push-types.js';

export interface PlanInput {
  readonly remote: Pick<RemoteConfig, 'push' | 'mirror'> & RefExclusionRules;
  /** `git for-each-ref`: ref → object id, as read just before the push. */
  readonly localRefs: ReadonlyMap<string, string>;
  /** Claimed refs; FULL_SYNC_REF means every local ref. */
  readonly claimedRefs: readonly string[];
  /** `git ls-remote` of the destination. Needed for mirror deletes in a full sync; when given, refs already equal are not sent. */
  readonly remoteRefs?: ReadonlyMap<string, string>;
}

/** One ref that goes into the git push argv. */
export interface PlannedRef {
  readonly ref: string;
  readonly dst: string;
  /** `[+]<oid>:<dst>` or `:<dst>`. */
  readonly refspec: string;
  readonly action: 'update' | 'delete';
}

export interface PushPlan {
  /** What git push is asked to do, sorted by destination name. */
  readonly pushes: readonly PlannedRef[];
  /** Refs decided without asking git: dropped, or already equal on the destination. */
  readonly settled: readonly RefOutcome[];
  /** Claimed refs this remote does not replicate (no refspec matches, or `refExclusion`): not reported as outcomes. */
  readonly skipped: readonly { readonly ref: string; readonly reason: string }[];
}

export const DROPPED_NOT_DELETED = 'deleted locally; not deleted on the destination (refspec not forced and mirror off)';

/**
 * Turns claimed refs into an exact push. Updates name the object id resolved
 * now, never the ref name: a ref that moves or vanishes before git runs would
 * otherwise abort the whole push ("src refspec does not match any").
 */
export function planPush(input: PlanInput): PushPlan {
  const { remote, localRefs, remoteRefs } = input;
  const pushes = new Map<string, PlannedRef>();
  const settled: RefOutcome[] = [];
  const skipped: { ref: string; reason: string }[] = [];
  const claimedDst = new Set<string>();

  const consider = (ref: string): void => {
    const decision = decide(input, ref, claimedDst);
    if ('reason' in decision) skipped.push(decision);
    else if ('refspec' in decision) pushes.set(decision.dst, decision);
    else settled.push(decision);
    if (!('reason' in decision)) claimedDst.add(decision.dst);
  };

  const fullSync = input.claimedRefs.includes(FULL_SYNC_REF);
  const claimed = new Set(input.claimedRefs.filter((ref) => ref !== FULL_SYNC_REF));
  if (fullSync) {
    // Every local ref the refspecs cover; a local ref outside them is not "skipped", just not ours.
    for (const ref of [...localRefs.keys()].sort()) {
      if (ref !== 'HEAD' && mapRefThroughRefspecs(remote.push, ref) !== undefined) consider(ref);
    }
  }
  for (const ref of [...claimed].sort()) {
    if (!(fullSync && localRefs.has(ref))) consider(ref);
  }
  if (fullSync && remote.mirror && remoteRefs !== undefined) {
    for (const extra of mirrorDeletes(input, new Set([...claimedDst, ...allMappedDestinations(input)]))) {
      pushes.set(extra.dst, extra);
    }
  }
  return { pushes: [...pushes.values()].sort((a, b) => compare(a.dst, b.dst)), settled, skipped };
}

/** What one claimed ref becomes: a push, an outcome known without git, or nothing for this remote. */
function decide(input: PlanInput, ref: string, taken: ReadonlySet<string>): PlannedRef | RefOutcome | { ref: string; reason: string } {
  const { remote, localRefs, remoteRefs } = input;
  const mapped = mapRefThroughRefspecs(remote.push, ref);
  if (mapped === undefined) return { ref, reason: 'matches no push refspec' };
  // Before the delete below too: a ref this remote never receives is never deleted there either.
  const excluded = refExclusion(remote, ref);
  if (excluded !== undefined) return { ref, reason: excluded };
  const { dst, force } = mapped;
  // git refuses two updates of one ref in a push; the first claim keeps it.
  if (taken.has(dst)) return { ref, dst, status: 'dropped', detail: 'another ref of this push maps to the same destination ref' };
  const oid = localRefs.get(ref);
  if (oid !== undefined) {
    if (remoteRefs?.get(dst) === oid) return { ref, dst, status: 'up-to-date' };
    return { ref, dst, refspec: `${force ? '+' : ''}${oid}:${dst}`, action: 'update' };
  }
  if (!pushesLocalDelete(remote, mapped)) return { ref, dst, status: 'dropped', detail: DROPPED_NOT_DELETED };
  if (remoteRefs !== undefined && !remoteRefs.has(dst)) return { ref, dst, status: 'up-to-date', detail: 'already absent on the destination' };
  return { ref, dst, refspec: `:${dst}`, action: 'delete' };
}

/** Destination names of every local ref, excluded ones too: a ref we must not touch is not an orphan. */
function allMappedDestinations(input: PlanInput): string[] {
  const dsts: string[] = [];
  for (const ref of input.localRefs.keys()) {
    const mapped = mapRefThroughRefspecs(input.remote.push, ref);
    if (mapped !== undefined) dsts.push(mapped.dst);
  }
  return dsts;
}

/**
 * Destination refs inside a refspec's destination namespace that no local ref
 * maps to. The would-be local name (the refspec read backwards) must not be
 * excluded: what `refExclusion` keeps from the destination (excludedRefsPattern,
 * refs/meta/config, NoteDb meta refs, automerge cache) it also protects there.
 */
function mirrorDeletes(input: PlanInput, covered: ReadonlySet<string>): PlannedRef[] {
  const deletes: PlannedRef[] = [];
  for (const dst of input.remoteRefs?.keys() ?? []) {
    if (dst === 'HEAD' || dst.endsWith('^{}') || covered.has(dst)) continue;
    const source = unmapRef(input.remote.push, dst);
    if (source === undefined || refExclusion(input.remote, source) !== undefined) continue;
    deletes.push({ ref: source, dst, refspec: `:${dst}`, action: 'delete' });
  }
  return deletes;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
