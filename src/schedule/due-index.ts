import { Heap } from 'heap-js';
import type { ReplicationConfig } from '../config/types.js';
import { hostOf } from '../push/destination-host.js';
import { batchDue, fairGroupKey, floorOf, type Due, type UriSchedule } from './due-planner.js';
import type { CircuitGate } from './host-circuit.js';
import type { UriGroup } from './uri-groups.js';

/** How long a node that is not a URI's preferred node leaves it to that node. */
export interface Handoff {
  readonly ms: number;
  /** When this node first saw the URI's newest folder, our clock (UriGroup.seenAt). */
  readonly seenAt: number;
}

/** A waiting URI in the index; replaced whenever its group or its schedule changes. */
interface Entry extends Due {
  /** Not due before this, local clock: max(notBefore, recheckAt, the end of a handoff). */
  readonly floor: number;
  /** Oldest mtime + max(replicationDelay, distributionInterval) + jitter: store clock. */
  readonly batchDue: number;
  /** Ties between equal due times go to the URI indexed first. */
  readonly seq: number;
  /** Another node is preferred for it: this one takes it only after a handoff. */
  readonly handedOff: boolean;
  /** Its due time on our clock, fixed when it became due. */
  at: number;
  /** Where it is: waiting for its floor, then for its batch, then due in its group's host bucket. */
  stage: 'floor' | 'batch' | HostBucket;
}

/** The due URIs of one fair-share group and one host, oldest first. */
interface HostBucket {
  readonly group: DueGroup;
  readonly host: string;
  readonly heap: Heap<Entry>;
  /** Entries in the heap that are still current (replaced ones are dropped when they surface). */
  live: number;
}

/** The due URIs of one fair-share group (lane and remote), by host. */
export interface DueGroup {
  readonly key: string;
  readonly remote: string;
  readonly hosts: Map<string, HostBucket>;
}

const byAt = (a: Entry, b: Entry): number => a.at - b.at || a.seq - b.seq;

/**
 * This node's waiting URIs ordered by due time, updated per changed URI, so that a pass costs
 * what became due and what changed, not the backlog (DESIGN.md "Scheduling"). A URI waits first for
 * its floor (backoff, recheck: our clock), then for its batch (oldest task + batching window +
 * jitter: the store's clock, compared through the offset of the moment), then is due in its
 * fair-share group (lane and remote), in a bucket per destination host: an open circuit or a
 * paced host holds back its own bucket, and the others' oldest URIs stay one look away. Heaps
 * drop replaced entries when they surface (lazy deletion) and are rebuilt when those pile up.
 * URIs this node is pushing are not in the index.
 */
export class DueIndex {
  private readonly entries = new Map<string, Entry>();
  private readonly floors = new Heap<Entry>((a, b) => a.floor - b.floor || a.seq - b.seq);
  private readonly batches = new Heap<Entry>((a, b) => a.batchDue - b.batchDue || a.seq - b.seq);
  private readonly due = new Map<string, DueGroup>();
  private seq = 0;
  private stored = 0;

  get size(): number {
    return this.entries.size;
  }

  /** Entries held in the heaps, replaced ones not dropped yet included (for tests of the bound). */
  get storedEntries(): number {
    return this.stored;
  }

  /**
   * Indexes a URI's group under its schedule, replacing what was indexed for it. `handoff`: a URI
   * another node is preferred for, which this node takes only `ms` after its batch is due and
   * `ms` after `seenAt` (our clock), when this node first saw its newest folder (DESIGN.md "Preferred node").
   */
  set(group: UriGroup, schedule: UriSchedule | undefined, config: ReplicationConfig, handoff?: Handoff): void {
    const previous = this.entries.get(group.uriKey);
    if (previous !== undefined) this.retire(previous);
    const floor = floorOf(schedule);
    const entry: Entry = {
      group,
      host: schedule?.host ?? hostOf(group.uri),
      floor: handoff === undefined ? floor : Math.max(floor, handoff.seenAt + handoff.ms),
      batchDue: batchDue(group, schedule, config) + (handoff?.ms ?? 0),
      seq: previous?.seq ?? this.seq++,
      handedOff: handoff !== undefined,
      at: 0,
      stage: 'floor',
    };
    this.entries.set(group.uriKey, entry);
    this.push(this.floors, entry);
  }

  delete(uriKey: string): void {
    const entry = this.entries.get(uriKey);
    if (entry === undefined) return;
    this.retire(entry);
    this.entries.delete(uriKey);
  }

  clear(): void {
    this.entries.clear();
    this.floors.clear();
    this.batches.clear();
    this.due.clear();
    this.stored = 0;
  }

  /** Moves the URIs whose time has come into their groups' due buckets. */
  advance(now: number, offsetMs: number): void {
    for (let head = this.head(this.floors); head !== undefined && head.floor <= now; head = this.head(this.floors)) {
      this.pop(this.floors);
      head.stage = 'batch';
      this.push(this.batches, head);
    }
    for (let head = this.head(this.batches); head !== undefined && head.batchDue - offsetMs <= now; head = this.head(this.batches)) {
      this.pop(this.batches);
      head.at = Math.max(head.batchDue - offsetMs, head.floor);
      const bucket = this.bucketOf(head);
      head.stage = bucket;
      bucket.live++;
      this.push(bucket.heap, head);
    }
    if (this.stored > 2 * this.entries.size + 1024) this.rebuild();
  }

  /** The earliest time a URI not due yet may become due (a floor can be passed before its batch is due). */
  nextDueAt(offsetMs: number): number | undefined {
    const floor = this.head(this.floors)?.floor;
    const batch = this.head(this.batches);
    const batchAt = batch === undefined ? undefined : Math.max(batch.batchDue - offsetMs, batch.floor);
    if (floor === undefined) return batchAt;
    return batchAt === undefined ? floor : Math.min(floor, batchAt);
  }

  /**
   * Up to `limit` URIs past their floor whose batch comes due by `until` (our clock) but is not
   * due yet, and that no other node is preferred for, in no particular order: a walk of the batch
   * heap that leaves a branch at its first later entry, so it costs the entries due by `until`
   * (replaced ones not dropped yet included), not the backlog.
   */
  dueBy(until: number, offsetMs: number, limit: number): string[] {
    const found: string[] = [];
    const heap = this.batches.heapArray;
    const stack = [0];
    for (let i = stack.pop(); i !== undefined && found.length < limit; i = stack.pop()) {
      const entry = heap[i];
      if (entry === undefined || entry.batchDue - offsetMs > until) continue;
      if (entry.stage === 'batch' && !entry.handedOff && this.entries.get(entry.group.uriKey) === entry) found.push(entry.group.uriKey);
      stack.push(2 * i + 2, 2 * i + 1);
    }
    return found;
  }

  /** The fair-share groups with due URIs, in the order they first had some. */
  groups(): Iterable<DueGroup> {
    return this.due.values();
  }

  /**
   * A group's oldest due URI on a host whose circuit lets it start and that `accept`s (any, without
   * it). Within one host bucket the oldest is the one to look at: what holds a URI back (the
   * host's circuit and pacing, room for its remote and lane, being due long enough to be taken
   * ahead) holds back every younger one of the bucket too.
   */
  oldest(group: DueGroup, gate: ((host: string) => CircuitGate) | undefined, accept?: (entry: Due) => boolean): Due | undefined {
    let oldest: Entry | undefined;
    for (const [host, bucket] of group.hosts) {
      if (gate?.(host) === 'blocked') continue;
      const head = this.head(bucket.heap);
      if (head === undefined) continue;
      if ((oldest === undefined || byAt(head, oldest) < 0) && (accept === undefined || accept(head))) oldest = head;
    }
    return oldest;
  }

  /** How many URIs are due per remote, leaving out hosts whose circuit is open. */
  dueByRemote(gate: ((host: string) => CircuitGate) | undefined): Map<string, number> {
    const counts = new Map<string, number>();
    for (const group of this.due.values()) {
      for (const [host, bucket] of group.hosts) {
        if (gate?.(host) !== 'blocked') counts.set(group.remote, (counts.get(group.remote) ?? 0) + bucket.live);
      }
    }
    return counts;
  }

  /** Every indexed URI with its due time (for the status view: a walk over the whole index). */
  *waiting(offsetMs: number): Iterable<Due> {
    for (const entry of this.entries.values()) {
      const at = typeof entry.stage === 'object' ? entry.at : Math.max(entry.batchDue - offsetMs, entry.floor);
      yield { group: entry.group, at, host: entry.host };
    }
  }

  private bucketOf(entry: Entry): HostBucket {
    const key = fairGroupKey(entry.group);
    let group = this.due.get(key);
    if (group === undefined) this.due.set(key, (group = { key, remote: entry.group.remote.name, hosts: new Map() }));
    let bucket = group.hosts.get(entry.host);
    if (bucket === undefined) group.hosts.set(entry.host, (bucket = { group, host: entry.host, heap: new Heap(byAt), live: 0 }));
    return bucket;
  }

  /** Takes a replaced or deleted entry out of its due bucket's count; its heap drops it later. */
  private retire(entry: Entry): void {
    if (typeof entry.stage !== 'object') return;
    const bucket = entry.stage;
    bucket.live--;
    if (bucket.live > 0) return;
    // An empty bucket (and group) goes at once: a pass looks only at groups and hosts with work.
    this.stored -= bucket.heap.size();
    bucket.group.hosts.delete(bucket.host);
    if (bucket.group.hosts.size === 0) this.due.delete(bucket.group.key);
  }

  /** A heap's first current entry, dropping replaced ones on the way. */
  private head(heap: Heap<Entry>): Entry | undefined {
    for (let top = heap.peek(); top !== undefined; top = heap.peek()) {
      const current =
        this.entries.get(top.group.uriKey) === top &&
        (heap === this.floors ? top.stage === 'floor' : heap === this.batches ? top.stage === 'batch' : typeof top.stage === 'object');
      if (current) return top;
      this.pop(heap);
    }
    return undefined;
  }

  private push(heap: Heap<Entry>, entry: Entry): void {
    heap.push(entry);
    this.stored++;
  }

  private pop(heap: Heap<Entry>): void {
    heap.pop();
    this.stored--;
  }

  /** Every heap anew from the current entries: what replaced entries cost is bounded. */
  private rebuild(): void {
    const heaps = [this.floors, this.batches, ...[...this.due.values()].flatMap((group) => [...group.hosts.values()].map((bucket) => bucket.heap))];
    for (const heap of heaps) heap.clear();
    this.stored = 0;
    for (const entry of this.entries.values()) {
      const heap = entry.stage === 'floor' ? this.floors : entry.stage === 'batch' ? this.batches : entry.stage.heap;
      this.push(heap, entry);
    }
  }
}
