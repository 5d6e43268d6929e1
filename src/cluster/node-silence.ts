import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { NODE_ID } from '../config/config-values.js';

/** Node record name → mtime (its last beat), as one look at `nodes/` found them. */
export type NodeBeats = ReadonlyMap<string, number>;

/** One look at `nodes/`: each node record's mtime, by `lstat` (records are untrusted, never read); none when it cannot be listed. */
export async function lookAtNodes(nodesDir: string): Promise<NodeBeats> {
  const beats = new Map<string, number>();
  const names = await readdir(nodesDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.endsWith('.json') || !NODE_ID.test(name.slice(0, -'.json'.length))) continue;
    const stats = await lstat(join(nodesDir, name)).catch(() => undefined);
    if (stats?.isFile() === true) beats.set(name, stats.mtimeMs);
  }
  return beats;
}

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
