/**
 * `Promise.all(items.map(fn))` with at most `limit` calls in flight: network
 * filesystems serve a handful of parallel requests well and thousands badly.
 * On the first failure no new call starts; the in-flight ones settle, then it throws.
 */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const run = new BoundedRun(items, fn);
  const lanes: Array<Promise<void>> = [];
  for (let lane = Math.max(1, Math.floor(Math.min(limit, items.length))); lane > 0; lane--) lanes.push(run.drain());
  await Promise.all(lanes);
  if (run.failure !== undefined) throw run.failure.error;
  return run.results;
}

/**
 * One `mapBounded` call's shared state, its lanes a method: a closure made per call would have its
 * optimized code dropped by V8 at every full collection and be optimized again on the next calls.
 */
class BoundedRun<T, R> {
  readonly results: R[];
  failure: { error: unknown } | undefined;
  private next = 0;

  constructor(
    private readonly items: readonly T[],
    private readonly fn: (item: T, index: number) => Promise<R>,
  ) {
    this.results = new Array<R>(items.length);
  }

  async drain(): Promise<void> {
    const { fn } = this; // called as a plain function, not as a method of this run
    while (this.failure === undefined && this.next < this.items.length) {
      const index = this.next++;
      try {
        this.results[index] = await fn(this.items[index] as T, index);
      } catch (error) {
        this.failure ??= { error };
      }
    }
  }
}
