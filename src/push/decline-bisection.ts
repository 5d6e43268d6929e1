/**
 * A `pre-receive` hook says yes or no to a push as a whole: when it refuses one ref, git reports
 * every ref of the push `[remote rejected] (pre-receive hook declined)`. To deliver the refs the
 * hook would accept, the declined refs are pushed again in halves until the refused ones are
 * isolated. This is the decision part only: which refs to push next, and what a push's answer
 * means. The pusher runs the pushes.
 *
 * Bisection: a set known to be declined is split in halves and only the first half is pushed. If
 * it lands, the refused refs are all in the second half, which is then known to be declined
 * without pushing it (a single ref left that way is isolated). If the first half is declined too,
 * the search goes on inside it, and the second half is set aside untested. Once nothing known to
 * be declined is left, everything set aside goes in one push; a decline there starts a search of
 * its own. So one refused ref among n costs at most ceil(log2 n) pushes to find plus one push for
 * what was set aside, and each further refused ref about as many again.
 */
export class DeclineBisection<T> {
  /** Sets git declined as a whole, each with at least one refused ref in it. */
  private readonly known: T[][] = [];
  private untested: T[] = [];
  private readonly refusedRefs: T[] = [];
  private probe: { readonly refs: readonly T[]; readonly sibling?: readonly T[] } | undefined;
  private probes = 0;

  /** `declined`: the refs of one push that git declined as a whole (two or more). */
  constructor(
    declined: readonly T[],
    private readonly maxProbes = 4 * declined.length,
  ) {
    this.known.push([...declined]);
  }

  /** The refs to push next, or undefined when every ref is settled. */
  next(): readonly T[] | undefined {
    if (this.probe !== undefined) throw new Error('the previous push has not been reported');
    for (;;) {
      const group = this.known.pop();
      if (group === undefined) break;
      if (group.length === 1) {
        this.refusedRefs.push(group[0]!);
        continue;
      }
      const half = Math.floor(group.length / 2);
      return this.start(group.slice(0, half), group.slice(half));
    }
    if (this.untested.length === 0) return undefined;
    const all = this.untested;
    this.untested = [];
    return this.start(all);
  }

  /**
   * What git said to the last push: the refs among it that were declined as a whole (the
   * others landed or got a final answer of their own). A ref that was the only one declined
   * in a push is refused on its own account.
   */
  report(declined: readonly T[]): void {
    const probe = this.probe;
    if (probe === undefined) throw new Error('no push is outstanding');
    this.probe = undefined;
    if (declined.length === 0) {
      // The first half landed: what the hook refuses is in the second half.
      if (probe.sibling !== undefined) this.known.push([...probe.sibling]);
      return;
    }
    if (declined.length === 1) this.refusedRefs.push(declined[0]!);
    else this.known.push([...declined]);
    if (probe.sibling !== undefined) this.untested.push(...probe.sibling);
  }

  /** Refs isolated as refused so far. */
  refused(): readonly T[] {
    return this.refusedRefs;
  }

  /**
   * Refs not yet settled. Non-empty only after `exhausted()`: a hook that answers differently
   * each time could keep the search going, so it stops after `maxProbes` pushes (4 per ref).
   */
  unsettled(): readonly T[] {
    return [...this.known.flat(), ...this.untested, ...(this.probe?.refs ?? []), ...(this.probe?.sibling ?? [])];
  }

  exhausted(): boolean {
    return this.probes >= this.maxProbes;
  }

  private start(refs: readonly T[], sibling?: readonly T[]): readonly T[] | undefined {
    if (this.exhausted()) {
      // Put back, so that unsettled() names them.
      this.known.push([...refs, ...(sibling ?? [])]);
      return undefined;
    }
    this.probes++;
    this.probe = sibling === undefined ? { refs } : { refs, sibling };
    return refs;
  }
}
