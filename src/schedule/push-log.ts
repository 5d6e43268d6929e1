import { redactText, redactUrl } from '../runtime/redact.js';
import type { PushOutcome } from '../push/push-types.js';
import type { SchedulerDeps } from './ports.js';
import type { UriGroup } from './uri-groups.js';

/** One line per git push, with an id (lease and push number) that the history and metrics share. */
export function logPush(
  deps: SchedulerDeps,
  group: UriGroup,
  pushId: string,
  project: string,
  remote: string,
  refs: readonly string[],
  outcome: PushOutcome,
  oldestQueuedAtMs: number,
): void {
  const counts: Record<string, number> = {};
  for (const ref of outcome.refs) counts[ref.status] = (counts[ref.status] ?? 0) + 1;
  const uri = redactUrl(group.uri);
  const failure = outcome.failure === undefined ? undefined : redactText(outcome.failure.message);
  const fields = {
    pushId,
    remote,
    uri,
    project,
    refs: refs.length,
    outcomes: counts,
    durationMs: Math.round(outcome.durationMs),
    result: outcome.result,
    failure,
  };
  if (outcome.result === 'failed') deps.log.warn(fields, 'push failed');
  else deps.log.info(fields, 'pushed');
  // A push stopped by this node's own shutdown is not an outcome of the destination.
  if (outcome.failure?.kind === 'aborted') return;
  deps.events?.({
    type: 'pushed',
    pushId,
    remote,
    uri,
    uriKey: group.uriKey,
    project,
    refs,
    refResults: outcome.refs.map(({ ref, status, detail }) => ({
      ref,
      status,
      ...(detail === undefined ? {} : { detail: redactText(detail.split('\n')[0]!) }),
    })),
    outcomes: counts,
    durationMs: outcome.durationMs,
    result: outcome.result,
    ...(outcome.failure === undefined ? {} : { failure, failureKind: outcome.failure.kind }),
    oldestQueuedAtMs,
  });
}
