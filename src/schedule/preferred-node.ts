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
