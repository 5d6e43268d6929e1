import { redactText, redactUrl } from '../runtime/redact.js';
import type { RefOutcome } from '../push/push-types.js';
import { accepted } from '../push/ref-outcomes.js';
import { countRefusals, type RefRejections, type Refusal } from './ref-rejections.js';
import type { Log } from '../runtime/log.js';
import type { SchedulerStore } from './ports.js';

export interface SettledRefs {
  /** Refs parked in failed/, one task each. */
  readonly parked: number;
  /** Refs refused for now, to be pushed again: the push unit's tasks go back to waiting/. */
  readonly retry: readonly Refusal[];
  /** Refused refs the retry state had no room to count: the URI backs off for them. */
  readonly untracked: readonly Refusal[];
  readonly rejections: RefRejections;
}

/**
 * The refs of a push the destination answered ref by ref. A ref rejected for good (a policy, a
 * non-fast-forward) is parked at once. A ref refused for a passing-looking reason is counted,
 * and parked once refused the same way `limit` times in a row. The others landed. Each parked ref
 * is logged at warn with git's reason: the push line counts rejections but cannot say why.
 */
export async function settleRefs(
  deps: { readonly store: Pick<SchedulerStore, 'parkFailed'>; readonly log: Log },
  unit: { readonly project: string; readonly uri: string; readonly remote: string },
  refs: readonly RefOutcome[],
  rejections: RefRejections | undefined,
  limit: number,
): Promise<SettledRefs> {
  const rejected = refs.filter((ref) => ref.status === 'rejected');
  const refusedForNow = rejected.filter((ref) => ref.transient === true).map((ref) => ({ ref: ref.ref, reason: ref.detail ?? 'rejected' }));
  const counted = countRefusals(
    rejections,
    refusedForNow,
    refs.filter(accepted).map((ref) => ref.ref),
    limit,
  );
  const park = [
    ...rejected.filter((ref) => ref.transient !== true).map((ref) => ({ ref: ref.ref, reason: `rejected by the destination: ${ref.detail ?? 'rejected'}` })),
    ...counted.park.map((ref) => ({ ref: ref.ref, reason: `rejected by the destination: ${ref.reason} (refused ${ref.count} times in a row)` })),
  ];
  for (const { ref, reason } of park) {
    await deps.store.parkFailed({ project: unit.project, refs: [ref], uri: unit.uri, remote: unit.remote }, { reason, refs: [ref] });
    deps.log.warn({ project: unit.project, ref, remote: unit.remote, uri: redactUrl(unit.uri), reason: redactText(reason) }, 'ref parked in failed/');
  }
  return { parked: park.length, retry: counted.retry, untracked: counted.untracked, rejections: counted.next };
}
