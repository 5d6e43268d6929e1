// The hook path: `refrelay enqueue` runs inside every `git push` to the master, so this module
// imports only what it needs (no yargs, no logger) and parses its few options by hand.
import { readFileSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { assertProjectName, assertRefName } from '../task/names.js';
import { parseHookInput, projectFromGitDir } from '../intake/hook-input.js';
import { assertLocalRepository } from '../intake/local-repository.js';
import { planTasks } from '../intake/plan-tasks.js';
import { spoolDirFor, spoolTasks } from '../intake/spool.js';
import { systemTimers } from '../runtime/timers.js';
import { TaskStore } from '../store/task-store.js';
import { loadCliConfig, localSpoolPath } from './load-cli-config.js';
import { publishOrSpool, spooledWarning } from './publish-or-spool.js';

export interface EnqueueArgs {
  config?: string;
  nodeId?: string;
  project?: string;
  refs: string[];
  remotes: string[];
  stdin: boolean;
  quiet: boolean;
}

export function parseEnqueueArgs(argv: readonly string[]): EnqueueArgs {
  const args: EnqueueArgs = { refs: [], remotes: [], stdin: false, quiet: false };
  for (let index = 0; index < argv.length; index++) {
    const raw = argv[index]!;
    const eq = raw.startsWith('--') ? raw.indexOf('=') : -1;
    const flag = eq > 0 ? raw.slice(0, eq) : raw;
    const value = (): string => {
      if (eq > 0) return raw.slice(eq + 1);
      const next = argv[++index];
      if (next === undefined) throw new UsageError(`enqueue: ${flag} needs a value`);
      return next;
    };
    switch (flag) {
      case '--config': args.config = value(); break;
      case '--node-id': args.nodeId = value(); break;
      case '--project': args.project = value(); break;
      case '--ref': args.refs.push(value()); break;
      case '--remote': args.remotes.push(value()); break;
      case '--stdin': args.stdin = true; break;
      case '--quiet': case '-q': args.quiet = true; break;
      default: throw new UsageError(`enqueue: unknown argument ${JSON.stringify(raw)} (see refrelay enqueue --help)`);
    }
  }
  if (args.stdin && args.refs.length > 0) throw new UsageError('enqueue: use either --stdin or --ref, not both');
  if (!args.stdin && args.refs.length === 0) throw new UsageError('enqueue: give --ref at least once, or --stdin');
  if (!args.stdin && args.project === undefined) throw new UsageError('enqueue: --project is required with --ref');
  return args;
}

export async function runEnqueue(argv: readonly string[]): Promise<number> {
  const args = parseEnqueueArgs(argv);
  const config = loadCliConfig({ config: args.config, nodeId: args.nodeId });
  let project = args.project;
  let refs: string[];
  if (args.stdin) {
    // Refs outside refs/ (HEAD in reference-transaction) are never replicated by a refspec.
    refs = parseHookInput(readFileSync(0, 'utf8')).map((update) => update.ref).filter((ref) => ref.startsWith('refs/'));
    if (project === undefined) {
      if (config.basePath === undefined) throw new UsageError('enqueue: --project is required when replication.basePath is not set');
      project = projectFromGitDir(process.env.GIT_DIR ?? process.cwd(), config.basePath);
    }
  } else {
    refs = args.refs;
  }
  assertProjectName(project!);
  for (const ref of refs) assertRefName(ref, config.maxRefNameBytes);
  const unknown = args.remotes.filter((name) => !config.remotes.some((remote) => remote.name === name));
  if (unknown.length > 0) {
    const where = config.remotesDir === undefined ? config.file : `${config.remotesDir}/*.config`;
    throw new UsageError(`enqueue: no remote named ${unknown.map((n) => JSON.stringify(n)).join(', ')} in ${where}`);
  }
  // A project from GIT_DIR is the repository the hook runs in; one given by hand may be a typo.
  // Checked before the store or the spool: a spooled task for no repository is lost all the same.
  if (args.project !== undefined && config.basePath !== undefined) await assertLocalRepository(config.basePath, project!);

  const tasks = planTasks(config, project!, [...new Set(refs)], { remoteNames: args.remotes });
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
    process.stdout.write(
      `refrelay: queued ${tasks.length} task${tasks.length === 1 ? '' : 's'} for ${project}` +
        (already > 0 ? ` (${already} already queued)` : '') + '\n',
    );
  }
  return 0;
}
