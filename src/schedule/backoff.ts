import type { Random } from '../runtime/random.js';

export const DEFAULT_BACKOFF_CAP_MS = 60 * 60 * 1000;

/**
 * Delay before retry number `attempts` (1 = first retry): min(cap, base·2^(attempts-1)),
 * scaled by uniform(0.75, 1) so nodes and URIs that failed together do not retry in step.
 */
export function retryDelayMs(baseMs: number, attempts: number, random: Random, capMs = DEFAULT_BACKOFF_CAP_MS): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 40);
  const nominal = Math.min(capMs, baseMs * 2 ** exponent);
  return Math.round(nominal * (0.75 + 0.25 * random.next()));
}
