import type { Membership } from '../cluster/live-nodes.js';
import type { ReplicationConfig } from '../config/types.js';
import type { PreferredTurn } from '../store/preferred-turn.js';
import { soonestBatchMs } from './due-planner.js';

/**
 * The node a URI is offered to first: rendezvous (highest random weight) hashing of the URI key
 * over the live nodes. Every node computes the same answer from the same list without asking
 * anyone, and a node that joins or leaves moves only its own share of the URIs. The others take
 * a URI only one distributionInterval after it came due (DESIGN.md "Scheduling"), so twenty
 * nodes do not all reach for each new URI at once, and a URI whose preferred node is busy or
 * gone is still pushed.
 */
export function preferredNode(uriKey: string, nodeIds: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const nodeId of nodeIds) {
    const score = fnv1a(`${nodeId}\u0000${uriKey}`);
    if (score > bestScore || (score === bestScore && best !== undefined && nodeId < best)) {
      best = nodeId;
      bestScore = score;
    }
  }
  return best;
}

/**
 * 32-bit FNV-1a with murmur3's final mix, as an unsigned number: node ids that differ in one
 * character still get independent scores, at no cost next to a store operation.
 */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

/** Whether another live node than this one is a URI's preferred node (none when this node is alone). */
export function preferredElsewhere(uriKey: string, membership: Membership | undefined): boolean {
  return membership !== undefined && membership.live.length >= 2 && preferredNode(uriKey, membership.live) !== membership.self;
}

/** How long a node that is not a URI's preferred node leaves it to that node: one pass of every node (each draws its own jitter). */
export function handoffMs(config: Pick<ReplicationConfig, 'distributionIntervalMs' | 'randomDelayMs'>): number {
  return config.distributionIntervalMs + config.randomDelayMs;
}

/** What this node knows of a URI that decides how long it leaves a new folder of it to another node. */
export interface KnownHere {
  /** Due already, by what this node learned of it. */
  isDue(uriKey: string): boolean;
  /** Recovered by this node from a dead holder: it goes first (UriTracker.expedite). */
  isExpedited(uriKey: string): boolean;
}

/**
 * What a listing leaves unread for another node's turn: a new folder of a URI another live node
 * is preferred for, for as long as this node would leave the URI to that node anyway (DESIGN.md
 * "Waiting folders", Learn). For a URI this node knows to be due already, that is the handoff,
 * one pass of every node; for any other, the preferred node must also list the folder and let its
 * batch come due: the soonest batching window of any remote besides. Nothing for a node alone,
 * nor for a URI this node recovered.
 */
export function preferredTurn(membership: Membership | undefined, config: ReplicationConfig, here: KnownHere): PreferredTurn | undefined {
  const soonest = soonestBatchMs(config);
  if (membership === undefined || membership.live.length < 2 || !Number.isFinite(soonest)) return undefined;
  const handoff = handoffMs(config);
  return {
    turnMs: (uriKey) => {
      if (here.isExpedited(uriKey) || !preferredElsewhere(uriKey, membership)) return undefined;
      return here.isDue(uriKey) ? handoff : soonest + handoff;
    },
  };
}
