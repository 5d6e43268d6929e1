/**
 * New waiting folders another live node is preferred for (schedule/preferred-node.ts): the rule
 * the distributor hands the listing, which needs only the uriKey in a folder's name.
 */
export interface PreferredTurn {
  /**
   * How long this node leaves a new folder of this URI unread, for the URI's preferred node to
   * claim it first; undefined when this node is the preferred one.
   */
  turnMs(uriKey: string): number | undefined;
}

/**
 * The new folders this node leaves to their preferred node, with when it first listed each and
 * when their turn ends (our clock; DESIGN.md "Waiting folders", Learn). Most are claimed by that
 * node within its turn and leave waiting/ before this node ever reads them; what is left after the
 * turn is learned, and its handoff counts from when it was first listed, so the wait is not served twice.
 */
export class LeftToPreferred {
  private readonly waiting = new Map<string, { readonly seenAt: number; readonly until: number }>();

  get size(): number {
    return this.waiting.size;
  }

  has(name: string): boolean {
    return this.waiting.has(name);
  }

  leave(name: string, seenAt: number, turnMs: number): void {
    this.waiting.set(name, { seenAt, until: seenAt + turnMs });
  }

  delete(name: string): boolean {
    return this.waiting.delete(name);
  }

  /** Drops the names a listing no longer shows: claimed by their preferred node, most of them. */
  keepOnly(present: ReadonlySet<string>): void {
    for (const name of this.waiting.keys()) if (!present.has(name)) this.waiting.delete(name);
  }

  /**
   * Up to `limit` folders whose turn is over, with when each was first listed; all of them when
   * `alone` (no other live node now). A node that leaves the cluster hands its share to the others
   * when its turns end.
   */
  *ended(now: number, alone: boolean, limit: number): Generator<[string, number]> {
    let given = 0;
    for (const [name, { seenAt, until }] of this.waiting) {
      if (given >= limit) return;
      if (!alone && now < until) continue;
      given++;
      yield [name, seenAt];
    }
  }
}
