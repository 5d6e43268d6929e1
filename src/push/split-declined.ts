import { DeclineBisection } from './decline-bisection.js';
import type { PushFailure, RefOutcome } from './push-types.js';

/** What one `git push` of a chunk (or of part of it) came back with. */
export interface ChunkAnswer {
  readonly refs: RefOutcome[];
  /** Refs a pre-receive hook declined together with the rest of that push. */
  readonly declinedWithPush: readonly RefOutcome[];
  readonly failure?: PushFailure;
}

/**
 * When a hook declined a push of several refs as a whole, pushes the declined refs again in
 * parts (see DeclineBisection) so that every ref the hook accepts lands and only the refused
 * ones stay rejected, with git's reason. `pushAgain` pushes the refs with these destination
 * names. A push that fails on the way ends the search: its failure is returned with what is
 * known, and the caller retries the whole push later.
 */
export async function splitDeclined(
  first: ChunkAnswer,
  pushAgain: (dsts: readonly string[]) => Promise<ChunkAnswer>,
): Promise<{ refs: RefOutcome[]; failure?: PushFailure }> {
  // Keyed by destination name (unique within a plan); a later answer for a ref replaces the earlier one.
  const latest = new Map(first.refs.map((ref) => [ref.dst, ref]));
  const bisection = new DeclineBisection(first.declinedWithPush.map((ref) => ref.dst));
  for (let dsts = bisection.next(); dsts !== undefined; dsts = bisection.next()) {
    const answer = await pushAgain(dsts);
    for (const ref of answer.refs) latest.set(ref.dst, ref);
    if (answer.failure !== undefined) return { refs: [...latest.values()], failure: answer.failure };
    bisection.report(answer.declinedWithPush.map((ref) => ref.dst));
  }
  // Refused refs keep the decline git reported for them; so do refs a search that ran too long
  // left unsettled, which are then parked like a plain rejection.
  return { refs: [...latest.values()] };
}
