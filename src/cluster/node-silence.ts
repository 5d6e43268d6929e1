/** Node id → mtime (its last beat), as one look at `nodes/` found them (`live-nodes.ts` `nodeBeats`). */
export type NodeBeats = ReadonlyMap<string, number>;

/**
 * Whether any node works for a command that waits on the store (`replicate --wait`), judged
 * without comparing clocks: a running node replaces its record every `distributionInterval`, so
 * a wait that saw no record new or replaced for `silentMs` of its own time has none.
 */
export class NodeSilence {
  private seen: NodeBeats | undefined;
  private since = 0;
  private said = false;

  constructor(
    private readonly look: () => Promise<NodeBeats>,
    private readonly monotonic: () => number,
    private readonly silentMs: number,
  ) {}

  /** True once, the first time no node has beaten for `silentMs`. */
  async silentNow(): Promise<boolean> {
    const now = this.monotonic();
    const beats = await this.look();
    if (this.seen === undefined || beatSince(this.seen, beats)) {
      this.seen = beats;
      this.since = now;
      return false;
    }
    if (this.said || now - this.since < this.silentMs) return false;
    this.said = true;
    return true;
  }
}

/** A record that appeared or was replaced between two looks. */
function beatSince(before: NodeBeats, after: NodeBeats): boolean {
  for (const [name, mtimeMs] of after) if (before.get(name) !== mtimeMs) return true;
  return false;
}
