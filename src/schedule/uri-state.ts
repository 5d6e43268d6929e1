/**
 * Retry state of one destination URI, persisted in `uri-state/<uriKey>.json` by the lock holder,
 * so backoff and max-retries hold across nodes and restarts.
 */
export interface UriState {
  readonly uri: string;
  readonly attempts: number;
  readonly lastError: string;
  /** Epoch ms before which no node pushes this URI. */
  readonly notBefore: number;
  readonly updatedAt: number;
  readonly nodeId: string;
}

export function parseUriState(value: unknown): UriState | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const fields = value as Record<string, unknown>;
  if (typeof fields.attempts !== 'number' || typeof fields.notBefore !== 'number') return undefined;
  return {
    uri: typeof fields.uri === 'string' ? fields.uri : '',
    attempts: fields.attempts,
    lastError: typeof fields.lastError === 'string' ? fields.lastError : '',
    notBefore: fields.notBefore,
    updatedAt: typeof fields.updatedAt === 'number' ? fields.updatedAt : 0,
    nodeId: typeof fields.nodeId === 'string' ? fields.nodeId : '',
  };
}
