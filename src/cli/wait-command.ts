import { loadCredentials } from '../config/secure-config.js';
import type { ReplicationConfig } from '../config/types.js';
import { UsageError } from '../errors.js';
import { folderProblem, localRepositoryPath } from '../intake/local-repository.js';
import { destinationRefValue, masterRefValue } from '../intake/ref-values.js';
import { waitDestinations, type WaitDestination } from '../intake/wait-destinations.js';
import { applyConfirmation, beginConfirmation, followDestination, needsConfirmation, observe, verdict, type FollowedDestination } from '../observe/ref-wait.js';
import { readStoreProgress } from '../observe/wait-progress.js';
import type { DestinationAccess } from '../push/destination-env.js';
import { gitEnvironment, operatorSshEnv } from '../push/push-env.js';
import { systemClock } from '../runtime/clock.js';
import { TaskStore } from '../store/task-store.js';
import { projectNameProblem, quoteUntrusted, refNameProblem } from '../task/names.js';
import { changeLines, progressLine, waitReport } from './format-wait.js';
import { loadCliConfig } from './load-cli-config.js';

export interface WaitArgs {
  readonly config?: string | undefined;
  readonly project: string;
  readonly ref: string;
  readonly value?: string | undefined;
  readonly remotes: readonly string[];
  readonly timeoutMs: number;
  readonly json: boolean;
}

/** How often the store is read while waiting: names and small records only (wait-progress.ts). */
const STORE_READ_EVERY_MS = 1000;
/** One `ls-remote` may take this long before the destination counts as unreachable. */
const CONFIRM_TIMEOUT_MS = 30_000;

function checkNames(args: WaitArgs): void {
  const projectProblem = projectNameProblem(args.project);
  if (projectProblem !== undefined) throw new UsageError(`wait: project ${quoteUntrusted(args.project)} ${projectProblem}`);
  const refProblem = refNameProblem(args.ref);
  if (refProblem !== undefined) throw new UsageError(`wait: ref ${quoteUntrusted(args.ref)} ${refProblem} (name it in full, e.g. refs/heads/main)`);
}

/** --value as given (a full object id), or the master's current value of the ref. */
async function wantedValue(config: ReplicationConfig, args: WaitArgs, env: Record<string, string>): Promise<string> {
  if (args.value !== undefined) {
    if (!/^([0-9a-f]{40}|[0-9a-f]{64})$/i.test(args.value))
      throw new UsageError(`wait: --value ${quoteUntrusted(args.value)} is not a full object id (40 or 64 hex digits)`);
    return args.value.toLowerCase();
  }
  if (config.basePath === undefined) throw new UsageError(`wait: replication.basePath is not set in ${config.file}: name the value with --value`);
  // Said before git runs there: git in a folder that does not exist reports only "spawn git ENOENT".
  const repository = localRepositoryPath(config.basePath, args.project);
  const missing = folderProblem(repository);
  if (missing !== undefined)
    throw new UsageError(`wait: project ${quoteUntrusted(args.project)} has no repository: ${repository} ${missing} (replication.basePath)`);
  const found = await masterRefValue(config.basePath, args.project, args.ref, env);
  if ('error' in found) throw new UsageError(`wait: cannot read ${args.ref} of ${args.project}: ${found.error}`);
  if (found.value === null) throw new UsageError(`wait: ${repository} has no ${args.ref}: name the value to wait for with --value`);
  return found.value;
}

async function masterHolds(config: ReplicationConfig, args: WaitArgs, value: string, env: Record<string, string>): Promise<boolean> {
  if (config.basePath === undefined) return true;
  const found = await masterRefValue(config.basePath, args.project, args.ref, env);
  return !('error' in found) && found.value === value;
}

/**
 * `refrelay wait`: until every destination holds the ref at the value, following the store
 * and asking each destination only when the store says its work is done (observe/ref-wait.ts).
 */
export async function runWait(args: WaitArgs): Promise<number> {
  checkNames(args);
  const config = loadCliConfig({ config: args.config });
  const destinations = waitDestinations(config, args.project, args.ref, args.remotes);
  if (typeof destinations === 'string') throw new UsageError(`wait: ${destinations}`);
  const env = gitEnvironment(process.env, operatorSshEnv());
  const value = await wantedValue(config, args, env);
  const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
  const access = { credentials: loadCredentials(config), operatorSshCommand: process.env.GIT_SSH_COMMAND };
  const followed = destinations.map(() => followDestination());
  const uriKeys = destinations.map((destination) => destination.uriKey);
  const startedAt = systemClock.monotonic();
  // A terminal gets one redrawn line; a CI log one line per change of a destination's state.
  const onTerminal = process.stderr.isTTY === true;
  const shown: string[] = [];
  let code: 0 | 1 | 4 | undefined;
  for (;;) {
    const timedOut = systemClock.monotonic() - startedAt >= args.timeoutMs;
    const progress = await readStoreProgress(store, config.storePath, { uriKeys, project: args.project, ref: args.ref }, systemClock.now());
    destinations.forEach((destination, i) => observe(followed[i]!, progress.get(destination.uriKey)!));
    await confirm(destinations, followed, value, env, access);
    const stuck = followed.some((item) => item.phase === 'lagging' && item.progress?.failed !== undefined);
    code = verdict(followed, { timedOut, masterHasValue: stuck && (await masterHolds(config, args, value, env)) });
    if (code !== undefined) break;
    const left = args.timeoutMs - (systemClock.monotonic() - startedAt);
    if (onTerminal) process.stderr.write(`\r${progressLine(destinations, followed, args.ref, left)}\x1b[K`);
    else for (const line of changeLines(destinations, followed, shown)) process.stderr.write(`${line}\n`);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(STORE_READ_EVERY_MS, left))));
  }
  if (onTerminal) process.stderr.write('\r\x1b[K');
  const elapsedMs = systemClock.monotonic() - startedAt;
  process.stdout.write(waitReport({ project: args.project, ref: args.ref, value, destinations, followed, code, elapsedMs, json: args.json }));
  return code;
}

/** One `ls-remote` for each destination the store says is done since it was last asked, at once. */
async function confirm(
  destinations: readonly WaitDestination[],
  followed: readonly FollowedDestination[],
  value: string,
  env: Record<string, string>,
  access: DestinationAccess,
): Promise<void> {
  await Promise.all(
    destinations.map(async (destination, i) => {
      const item = followed[i]!;
      if (!needsConfirmation(item)) return;
      beginConfirmation(item);
      applyConfirmation(item, await destinationRefValue(destination, env, CONFIRM_TIMEOUT_MS, access), value);
    }),
  );
}
