import { StoreError } from '../errors.js';
import { mapBounded } from '../runtime/map-bounded.js';
import { encodeTask, taskKey, type Task } from '../task/task.js';
import { fsyncDirectory, tempPath, writeDurable } from './publish.js';
import type { StoreContext } from './store-context.js';
import { removeQuietly } from './store-fs.js';
import type { CreateOutcome, CreateResult } from './store-types.js';
import { intoWaitingFolder, waitingFolderOf } from './waiting-folder.js';

/**
 * Publishes `text` as `waiting/<folder>/<name>` only if nothing is there yet (temp + `link`);
 * false when it was already queued. With `mtime`, the file carries it from the moment it appears.
 */
export async function publishWaiting(
  ctx: StoreContext,
  folder: string,
  name: string,
  text: string,
  options: { stem: string; operation: string; mtime?: Date; made?: (folder: string) => void },
): Promise<boolean> {
  const temp = tempPath(ctx, options.stem);
  await writeDurable(ctx, temp, text, options.operation, options.mtime);
  try {
    const outcome = await intoWaitingFolder(ctx, temp, folder, name, 'link', options.operation, options.made);
    if (outcome === 'source-gone') throw new StoreError(`${options.operation}: its temp ${temp} vanished before it was published`);
    return outcome === 'moved';
  } finally {
    await removeQuietly(ctx.fs, temp);
  }
}

/** Tasks published side by side by one `publishTasks`. */
const CREATE_CONCURRENCY = 8;

/** One distinct task of a batch, ready to publish. */
interface Publication {
  readonly key: string;
  readonly text: string;
  readonly folder: string;
  readonly mtime: Date | undefined;
}

type PublishOptions = { mtimeOf?: (task: Task) => Date | undefined };

/**
 * Publishes each task in its waiting folder (TaskStore.createMany); results in the order of
 * `tasks`, once every new file is durable (its folder fsynced, and waiting/ when a folder was
 * made). The first failure stops the batch and rejects.
 */
export async function publishTasks(ctx: StoreContext, tasks: readonly Task[], options: PublishOptions = {}): Promise<CreateResult[]> {
  return (await publishOutcomes(ctx, tasks, options, 'stop-at-first-failure')).map((outcome) => {
    if ('error' in outcome) throw outcome.error;
    return outcome;
  });
}

/**
 * As publishTasks, but each task on its own (TaskStore.createEach): one that fails is reported
 * in its place with its error, and the others are still published and made durable.
 */
export function publishEachTask(ctx: StoreContext, tasks: readonly Task[], options: PublishOptions = {}): Promise<CreateOutcome[]> {
  return publishOutcomes(ctx, tasks, options, 'each-on-its-own');
}

async function publishOutcomes(
  ctx: StoreContext,
  tasks: readonly Task[],
  options: PublishOptions,
  failures: 'stop-at-first-failure' | 'each-on-its-own',
): Promise<CreateOutcome[]> {
  // The same task twice in one batch is published once: the first occurrence reports it.
  const pending = new Map<string, Publication>();
  const keys = tasks.map((task) => {
    const key = taskKey(task);
    if (!pending.has(key)) pending.set(key, { key, text: encodeTask(task), folder: waitingFolderOf(task), mtime: options.mtimeOf?.(task) });
    return key;
  });
  const unique = [...pending.values()];
  const madeFolders = new Set<string>();
  const publish = (entry: Publication): Promise<boolean> =>
    publishWaiting(ctx, entry.folder, `${entry.key}.json`, entry.text, {
      stem: entry.key,
      operation: 'create task',
      mtime: entry.mtime,
      made: (made) => madeFolders.add(made),
    });
  const published = await mapBounded<Publication, boolean | { error: unknown }>(
    unique,
    CREATE_CONCURRENCY,
    failures === 'each-on-its-own' ? (entry) => publish(entry).catch((error: unknown) => ({ error })) : publish,
  );
  const created = unique.filter((_, i) => published[i] === true);
  const unsynced = await syncPublished(ctx, created, madeFolders);
  const outcomes = new Map<string, CreateOutcome>();
  unique.forEach((entry, i) => {
    const outcome = published[i];
    const error = typeof outcome === 'object' ? outcome.error : outcome ? unsynced.get(entry.folder) : undefined;
    outcomes.set(entry.key, error === undefined ? { key: entry.key, created: outcome === true } : { key: entry.key, error });
  });
  return keys.map((key) => {
    const outcome = outcomes.get(key) as CreateOutcome;
    // Later occurrences of a task the batch created report it as already queued.
    if ('created' in outcome) outcomes.set(key, { key, created: false });
    return outcome;
  });
}

/**
 * Fsyncs the folders that got new entries, and waiting/ when folders were made; the folders
 * whose new entries are not known to be durable, each with its error (a failed waiting/ fsync
 * counts against every folder made).
 */
async function syncPublished(ctx: StoreContext, created: readonly Publication[], madeFolders: ReadonlySet<string>): Promise<Map<string, unknown>> {
  const unsynced = new Map<string, unknown>();
  if (created.length === 0) return unsynced;
  const touched = new Set(created.map(({ folder }) => folder));
  // A folder a claimer moved or removed meanwhile took the new entries into its claim. A batch
  // for many URIs touches as many folders: their fsyncs go side by side (one after another,
  // a spool of 1,000 updates for 1,000 repositories took seconds on a local disk).
  await mapBounded([...touched], ctx.concurrency, (folder) =>
    fsyncDirectory(ctx, ctx.paths.waitingFolder(folder), 'create task', { goneIsFine: true }).catch((error: unknown) => void unsynced.set(folder, error)),
  );
  if (madeFolders.size > 0) {
    await fsyncDirectory(ctx, ctx.paths.waiting, 'create task').catch((error: unknown) => {
      for (const folder of madeFolders) if (!unsynced.has(folder)) unsynced.set(folder, error);
    });
  }
  return unsynced;
}
