// The hook path: `refrelay enqueue` runs inside every `git push` to the master, so this module
// imports only what it needs (no yargs, no logger) and parses its few options by hand
// (`enqueue-options.ts`).
import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { assertProjectName, assertRefName } from '../task/names.js';
import { parseHookInput, projectFromGitDir } from '../intake/hook-input.js';
import { assertLocalRepository } from '../intake/local-repository.js';
import { noRemoteNamed, planTasks } from '../intake/plan-tasks.js';
import { spoolDirFor, spoolTasks } from '../intake/spool.js';
import { systemTimers } from '../runtime/timers.js';
import { TaskStore } from '../store/task-store.js';
import { parseEnqueueArgs } from './enqueue-options.js';
import { loadCliConfig, localSpoolPath } from './load-cli-config.js';
import { publishOrSpool, spooledWarning } from './publish-or-spool.js';
import { plural } from '../runtime/plural.js';

export async function runEnqueue(argv: readonly string[]): Promise<number> {
  const args = parseEnqueueArgs(argv);
  const config = loadCliConfig({ config: args.config, nodeId: args['node-id'] });
  let project = args.project;
  let refs: string[];
  if (args.stdin) {
    // Refs outside refs/ (HEAD in reference-transaction) are never replicated by a refspec.
    refs = parseHookInput(readFileSync(0, 'utf8'))
      .map((update) => update.ref)
      .filter((ref) => ref.startsWith('refs/'));
    if (project === undefined) {
      if (config.basePath === undefined) throw new UsageError('enqueue: --project is required when replication.basePath is not set');
      project = projectFromGitDir(process.env.GIT_DIR ?? process.cwd(), config.basePath);
    }
  } else {
    refs = args.ref;
  }
  assertProjectName(project!);
  for (const ref of refs) assertRefName(ref, config.maxRefNameBytes);
  const unknown = noRemoteNamed(config, args.remote);
  if (unknown !== undefined) throw new UsageError(`enqueue: ${unknown} in ${config.remotesDir === undefined ? config.file : `${config.remotesDir}/*.config`}`);
  // A project from GIT_DIR is the repository the hook runs in; one given by hand may be a typo.
  // Checked before the store or the spool: a spooled task for no repository is lost all the same.
  if (args.project !== undefined && config.basePath !== undefined) await assertLocalRepository(config.basePath, project!);

  const tasks = planTasks(config, project!, [...new Set(refs)], { remoteNames: args.remote });
  const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
  const enqueuedAt = new Date();
  const spoolDir = spoolDirFor(localSpoolPath(config.spoolPath), config.storePath);
  const outcome = await publishOrSpool({
    storePath: config.storePath,
    publish: () => store.createMany(tasks),
    spool: async () => {
      await spoolTasks(spoolDir, config.storePath, tasks, enqueuedAt);
      return spoolDir;
    },
    spoolAfterMs: config.spoolAfterMs,
    timers: systemTimers,
  });
  if (outcome.kind === 'spooled') {
    process.stderr.write(spooledWarning(config.storePath, outcome.reason, outcome.spoolDir));
    return 0;
  }
  const created = outcome.result.filter((result) => result.created).length;
  if (!args.quiet) {
    const already = tasks.length - created;
    process.stdout.write(`refrelay: queued ${plural(tasks.length, 'task')} for ${project}` + (already > 0 ? ` (${already} already queued)` : '') + '\n');
  }
  return 0;
}
