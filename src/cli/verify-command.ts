import { parseProjectPattern } from '../config/project-pattern.js';
import { UsageError } from '../errors.js';
import { discoverProjects } from '../intake/project-discovery.js';
import { describeUnmatched, selectProjects } from '../intake/project-selection.js';
import { loadCredentials } from '../config/secure-config.js';
import { describeReport, destinationsOf, fixTasks, verifyAll } from '../intake/verify.js';
import { TaskStore } from '../store/task-store.js';
import { EXIT_FAILED, EXIT_OK } from './exit-codes.js';
import { loadCliConfig } from './load-cli-config.js';

export interface VerifyArgs {
  config?: string | undefined;
  patterns: string[];
  remotes: string[];
  json: boolean;
  fix: boolean;
  parallel: number;
}

/** `refrelay verify`: prove the destinations hold what the refspecs say they should. */
export async function runVerify(args: VerifyArgs): Promise<number> {
  const config = loadCliConfig({ config: args.config });
  if (config.basePath === undefined) throw new UsageError(`verify: replication.basePath is not set in ${config.file}`);
  const unknown = args.remotes.filter((name) => !config.remotes.some((remote) => remote.name === name));
  if (unknown.length > 0) throw new UsageError(`verify: no remote named ${unknown.map((name) => JSON.stringify(name)).join(', ')}`);
  const matchers = args.patterns.map((text) => {
    const pattern = parseProjectPattern(text);
    if (typeof pattern === 'string') throw new UsageError(`verify: project pattern ${JSON.stringify(text)}: ${pattern}`);
    return pattern;
  });
  const { selected, unmatched } = selectProjects(await discoverProjects(config.basePath), matchers);
  if (unmatched.length > 0) {
    throw new UsageError(`verify: ${describeUnmatched(unmatched)} (projects are the <name>.git repositories under ${config.basePath}, replication.basePath in ${config.file})`);
  }
  const destinations = destinationsOf(config, selected, args.remotes);
  const env: Record<string, string> = process.env.GIT_SSH_COMMAND ? { GIT_SSH_COMMAND: process.env.GIT_SSH_COMMAND } : {};
  const reports = await verifyAll(config, destinations, { parallel: args.parallel, timeoutMs: 60_000, env, credentials: loadCredentials(config) });
  let queued = 0;
  if (args.fix) {
    const tasks = fixTasks(reports, destinations);
    const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
    queued = (await store.createMany(tasks)).length;
  }
  const drift = reports.filter((report) => report.state !== 'in-sync').length;
  if (args.json) {
    process.stdout.write(`${JSON.stringify({ version: 1, destinations: reports, drifted: drift, queued }, null, 2)}\n`);
  } else {
    for (const report of reports) process.stdout.write(`${describeReport(report)}\n`);
    process.stdout.write(
      `${reports.length} destination${reports.length === 1 ? '' : 's'}: ${reports.length - drift} in sync, ${reports.filter((r) => r.state === 'drift').length} drifted, ${reports.filter((r) => r.state === 'unreachable').length} unreachable` +
        (args.fix ? `; queued ${queued} task${queued === 1 ? '' : 's'} to repair the drift` : '') + '\n',
    );
  }
  return drift > 0 ? EXIT_FAILED : EXIT_OK;
}
