/**
 * A ref the destination refuses with a reason that looks passing (it could not lock or write the
 * ref) is retried, but not forever: refused with the same reason on `replication.refRejectionLimit`
 * pushes in a row while other refs of those pushes landed, it is parked in failed/. The count
 * lives in the URI's retry state (`uri-state/<uriKey>.json`), so it holds across nodes and
 * restarts; only the lock holder writes it.
 */

export interface RefRejection {
  readonly reason: string;
  /** Pushes in a row that refused the ref with this reason. */
  readonly count: number;
}

/** Local ref name → its run of refusals. */
export type RefRejections = Readonly<Record<string, RefRejection>>;

export interface Refusal {
  readonly ref: string;
  readonly reason: string;
}

/**
 * Bounds on what one record may hold: ref names are already bounded (maxRefNameBytes), so this
 * keeps the record far below the 1 MiB a store record may have.
 */
export const MAX_TRACKED_REFS = 100;
const MAX_REASON_CHARS = 200;

export interface RefusalCount {
  /** Refused often enough: park these, with how many times in a row. */
  readonly park: ReadonlyArray<Refusal & { readonly count: number }>;
  /** Refused, below the limit: retry these. */
  readonly retry: readonly Refusal[];
  /**
   * Refused, and no room left to count them: without a count they would be retried without
   * end, so the caller backs the URI off for them as for a failed push.
   */
  readonly untracked: readonly Refusal[];
  readonly next: RefRejections;
}

/**
 * One push of a URI that the destination answered ref by ref, some refs landing: `refused` are
 * the refs it refused with a passing-looking reason, `accepted` the refs it took (landed or
 * already there), which end their run. Refs not in this push keep their count.
 */
export function countRefusals(previous: RefRejections | undefined, refused: readonly Refusal[], accepted: readonly string[], limit: number): RefusalCount {
  const next = new Map<string, RefRejection>();
  const park: Array<Refusal & { count: number }> = [];
  const retry: Refusal[] = [];
  const untracked: Refusal[] = [];
  const before = new Map(Object.entries(previous ?? {}));
  for (const refusal of refused) {
    const reason = bounded(refusal.reason);
    const earlier = before.get(refusal.ref);
    before.delete(refusal.ref);
    const count = earlier !== undefined && earlier.reason === reason ? earlier.count + 1 : 1;
    if (count >= limit) {
      park.push({ ref: refusal.ref, reason: refusal.reason, count });
    } else if (next.size < MAX_TRACKED_REFS) {
      next.set(refusal.ref, { reason, count });
      retry.push(refusal);
    } else {
      untracked.push(refusal);
    }
  }
  for (const ref of accepted) before.delete(ref);
  // Runs of refs this push did not carry go on, as far as room is left.
  for (const [ref, run] of before) {
    if (next.size >= MAX_TRACKED_REFS) break;
    next.set(ref, run);
  }
  return { park, retry, untracked, next: Object.fromEntries(next) };
}

/** The map as read from the store: entries of the wrong shape are dropped, the rest bounded. */
export function parseRefRejections(value: unknown): RefRejections | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const kept: Array<[string, RefRejection]> = [];
  for (const [ref, run] of Object.entries(value as Record<string, unknown>)) {
    if (kept.length >= MAX_TRACKED_REFS) break;
    if (run === null || typeof run !== 'object') continue;
    const { reason, count } = run as Record<string, unknown>;
    if (typeof reason !== 'string' || typeof count !== 'number' || !Number.isSafeInteger(count) || count < 1) continue;
    kept.push([ref, { reason: bounded(reason), count }]);
  }
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

export function isEmpty(rejections: RefRejections | undefined): boolean {
  return rejections === undefined || Object.keys(rejections).length === 0;
}

function bounded(reason: string): string {
  return reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS - 1)}…` : reason;
}
