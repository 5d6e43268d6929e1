/** Why a push was stopped before git finished. */
export type StopReason = 'timeout' | 'aborted';

export interface StopSignal {
  /** Aborts when the deadline passes or the caller aborts, whichever comes first. */
  readonly signal: AbortSignal;
  reason(): StopReason | undefined;
  dispose(): void;
}

/**
 * One signal for a whole push (local reads, ls-remote, creation, every chunk):
 * `timeoutMs` is a wall-clock deadline, not an inactivity timer, because an
 * ssh server that trickles bytes would otherwise hold the URI lock forever.
 */
export function stopSignal(timeoutMs: number, outer?: AbortSignal): StopSignal {
  const controller = new AbortController();
  let reason: StopReason | undefined;
  const stop = (why: StopReason): void => {
    reason ??= why;
    controller.abort();
  };
  const onOuterAbort = (): void => stop('aborted');
  const timer = timeoutMs > 0 ? setTimeout(() => stop('timeout'), timeoutMs) : undefined;
  if (outer?.aborted) stop('aborted');
  else outer?.addEventListener('abort', onOuterAbort, { once: true });
  return {
    signal: controller.signal,
    reason: () => reason,
    dispose: () => {
      if (timer !== undefined) clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    },
  };
}
