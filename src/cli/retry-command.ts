import { urlFitsTemplate } from '../config/remote-url.js';
import type { RemoteConfig } from '../config/types.js';
import { UsageError } from '../errors.js';
import { redactUrl } from '../runtime/redact.js';
import { TaskStore } from '../store/task-store.js';
import { EXIT_OK } from './exit-codes.js';
import { emptyOptionProblem } from './failed-selector.js';
import { loadCliConfig } from './load-cli-config.js';
import { plural } from '../runtime/plural.js';

export interface RetryArgs {
  readonly config?: string;
  readonly all: boolean;
  readonly remote?: string;
  readonly uri?: string;
}

/**
 * `refrelay retry`: failed tasks of the matching URIs back to waiting/, and the retry state of
 * those URIs and of every other matching URI deleted — a URI in backoff has no failed task, and
 * its backoff (a damaged file's, say) is what the operator wants gone. Nodes see the state file
 * gone on their next pass. URIs are matched as they are; only what is printed is redacted.
 */
export async function runRetry(args: RetryArgs, write: (text: string) => void = (text) => process.stdout.write(text)): Promise<number> {
  if (!args.all && args.remote === undefined && args.uri === undefined) throw new UsageError('retry: give --all, --remote NAME or --uri SUBSTRING');
  const empty = emptyOptionProblem({ '--remote': args.remote, '--uri': args.uri });
  if (empty !== undefined) throw new UsageError(`retry: ${empty}`);
  const config = loadCliConfig({ config: args.config });
  const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
  const uriWanted = (uri: string): boolean => args.uri === undefined || uri.includes(args.uri);

  const toClear = new Map<string, string>();
  const moved = await store.retryFailed((failed) => {
    const wanted = (args.remote === undefined || failed.task.remote === args.remote) && uriWanted(failed.task.uri);
    if (wanted) toClear.set(failed.uriKey, failed.task.uri);
    return wanted;
  });

  const remote = args.remote === undefined ? undefined : config.remotes.find((candidate) => candidate.name === args.remote);
  for (const { uriKey, state } of (await store.listUriStates()).states) {
    if (toClear.has(uriKey)) continue;
    const uri = uriOf(state);
    // A state without a uri still holds its URI back (the key names it); only --all reaches it.
    if (uri === undefined) {
      if (args.all) toClear.set(uriKey, `uri-state/${uriKey}.json`);
      continue;
    }
    if (args.remote !== undefined && !ofRemote(remote, uri)) continue;
    if (uriWanted(uri)) toClear.set(uriKey, uri);
  }
  const cleared: string[] = [];
  for (const [uriKey, uri] of toClear) if (await store.deleteUriState(uriKey)) cleared.push(redactUrl(uri));

  const lines: string[] = [];
  if (moved > 0) lines.push(`moved ${plural(moved, 'failed task')} back to waiting`);
  if (cleared.length > 0) {
    lines.push(`cleared the backoff of ${plural(cleared.length, 'URI')}:`);
    for (const uri of cleared.sort()) lines.push(`  ${uri}`);
  }
  write(lines.length === 0 ? 'Nothing to retry\n' : `${lines.join('\n')}\n`);
  return EXIT_OK;
}

function uriOf(state: unknown): string | undefined {
  if (state === null || typeof state !== 'object') return undefined;
  const { uri } = state as Record<string, unknown>;
  return typeof uri === 'string' && uri !== '' ? uri : undefined;
}

/** A state file names its URI, not its remote: a URI is the remote's when one of its URL templates expands to it. */
function ofRemote(remote: RemoteConfig | undefined, uri: string): boolean {
  return remote !== undefined && remote.urls.some((template) => urlFitsTemplate(template, uri));
}
