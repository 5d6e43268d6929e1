import { parseProjectPattern } from '../config/project-pattern.js';
import { UsageError } from '../errors.js';
import { discoverProjects } from '../intake/project-discovery.js';
import { describeUnmatched, selectProjects } from '../intake/project-selection.js';
import { loadCredentials } from '../config/secure-config.js';
import { describeReport, fixTasks, verifyAll } from '../intake/verify.js';
import { destinationsOf, noRemoteNamed } from '../intake/plan-tasks.js';
import { loadCliConfig } from './load-cli-config.js';
import { describeRepair, queueRepairs, verifyExitCode } from './verify-fix.js';
import { reportFailedInSync } from './verify-failed-report.js';
import { plural } from '../runtime/plural.js';
import { operatorSshEnv } from '../push/push-env.js';

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
  const unknown = noRemoteNamed(config, args.remotes);
  if (unknown !== undefined) throw new UsageError(`verify: ${unknown}`);
  const matchers = args.patterns.map((text) => {
    const pattern = parseProjectPattern(text);
    if (typeof pattern === 'string') throw new UsageError(`verify: project pattern ${JSON.stringify(text)}: ${pattern}`);
    return pattern;
  });
  const { selected, unmatched } = selectProjects(await discoverProjects(config.basePath), matchers);
  if (unmatched.length > 0) {
    const projects = `projects are the <name>.git repositories under ${config.basePath}, replication.basePath in ${config.file}`;
    throw new UsageError(`verify: ${describeUnmatched(unmatched)} (${projects})`);
  }
  const destinations = destinationsOf(config, selected, args.remotes);
  const env = operatorSshEnv();
  // Failed tasks are judged only by a reading of their destination made after they failed; the
  // margin is the clock difference between machines the cluster tolerates (lockStale / 4).
  const readBefore = Date.now() - config.lockStaleMs / 4;
  const reports = await verifyAll(config, destinations, { parallel: args.parallel, timeoutMs: 60_000, env, credentials: loadCredentials(config) });
  const repair = args.fix ? await queueRepairs(config, fixTasks(reports, destinations)) : undefined;
  // When --fix could not write the store, its error says why; failed/ is not read a second time.
  const failedInSync = repair?.error === undefined ? await reportFailedInSync(config, destinations, reports, args.fix, readBefore) : { lines: [], json: [] };
  const drift = reports.filter((report) => report.state !== 'in-sync').length;
  if (args.json) {
    const queue = { queued: repair?.queued ?? 0, ...(repair?.error === undefined ? {} : { queueError: repair.error }) };
    process.stdout.write(`${JSON.stringify({ version: 1, destinations: reports, drifted: drift, ...queue, failedInSync: failedInSync.json }, null, 2)}\n`);
  } else {
    for (const report of reports) process.stdout.write(`${describeReport(report)}\n`);
    for (const line of failedInSync.lines) process.stdout.write(`${line}\n`);
    const count = (state: string): number => reports.filter((report) => report.state === state).length;
    process.stdout.write(
      `${plural(reports.length, 'destination')}: ${reports.length - drift} in sync, ` +
        `${count('drift')} drifted, ${count('unreachable')} unreachable` +
        (repair === undefined ? '' : describeRepair(repair)) +
        '\n',
    );
  }
  if (repair?.error !== undefined) process.stderr.write(`refrelay: verify --fix: ${repair.error}\n`);
  return verifyExitCode(
    reports.map((report) => report.state),
    repair,
  );
}
