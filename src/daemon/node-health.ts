import type { ReplicationConfig } from '../config/types.js';
import type { Health } from '../observe/http-server.js';
import type { StoreFailureView } from '../schedule/store-outage.js';
import { storeHealthReason } from './store-failure-reports.js';

/** What a running node knows about itself when asked for its health (GET /healthz). */
export interface NodeHealthFacts {
  readonly config: ReplicationConfig;
  readonly stopping: boolean;
  /** Monotonic time now, and of the last completed distributor pass. */
  readonly now: number;
  readonly lastPassAt: number | undefined;
  readonly storeOutage: StoreFailureView | undefined;
  readonly heartbeatError: string | undefined;
  /** Store clock minus local clock (ms), undefined before the first measurement. */
  readonly clockOffsetMs: number | undefined;
  readonly spoolProblem: string | undefined;
}

/**
 * Healthy: the distributor loop runs, the store took the last heartbeat write, and this
 * node's clock is within lockStale / 4 of the store's.
 */
export function nodeHealth(facts: NodeHealthFacts): Health {
  const { config } = facts;
  const reasons: string[] = [];
  const passEvery = Math.min(config.distributionIntervalMs, config.lockStaleMs / 6);
  const sincePass = facts.lastPassAt === undefined ? undefined : facts.now - facts.lastPassAt;
  if (facts.stopping) reasons.push('the node is stopping');
  if (sincePass === undefined) reasons.push('the node is starting: no distributor pass yet');
  else if (sincePass > 3 * passEvery + 5000) reasons.push(`the distributor loop has not completed a pass for ${Math.round(sincePass / 1000)} s`);
  const storeReason = storeHealthReason(facts.storeOutage);
  if (storeReason !== undefined) reasons.push(storeReason);
  else if (facts.heartbeatError !== undefined) reasons.push(`the node heartbeat could not be written: ${facts.heartbeatError}`);
  const offset = facts.clockOffsetMs;
  if (offset !== undefined && Math.abs(offset) > config.lockStaleMs / 4) {
    reasons.push(`this node's clock is ${Math.round(offset / 1000)} s off the store's clock (limit ${Math.round(config.lockStaleMs / 4000)} s): run NTP`);
  }
  if (facts.spoolProblem !== undefined) reasons.push(facts.spoolProblem);
  return { ok: reasons.length === 0, reasons };
}
