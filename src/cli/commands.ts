import yargs, { type Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { describeConfig, configToJson } from '../config/load-config.js';
import { loadCredentials } from '../config/secure-config.js';
import { measureStoreClockOffset } from '../cluster/clock-probe.js';
import { collectClusterStatus, FAILED_LISTED } from '../observe/cluster-status.js';
import { timesJson } from '../observe/json-times.js';
import { systemClock } from '../runtime/clock.js';
import { TaskStore } from '../store/task-store.js';
import { configOption } from './config-option.js';
import { ENQUEUE_OPTIONS } from './enqueue-options.js';
import { EXIT_OK } from './exit-codes.js';
import { FAILED_SHOWN, formatStatus } from './format-status.js';
import { loadCliConfig } from './load-cli-config.js';
import { checkGerritEventsDir } from './store-path-check.js';
import { VERSION } from './version.js';

const HOOK_INSTALL_EPILOGUE =
  'Hooks run this refrelay, by its real path. Installed from a source checkout, they depend on that checkout: while npm ci or a build rewrites it ' +
  'they fail to start (pushes still succeed, and the hook says so). For production, install refrelay with npm install -g and run its hook install; ' +
  'hooks installed earlier are rewritten for it. A push whose hook could not queue is queued by refrelay verify --fix once refrelay works again.';

/** How often `status --watch` refreshes. */
const STATUS_WATCH_MS = 2000;

/**
 * A usage error points at the help of the command it was made in (`refrelay config --help` for
 * `refrelay config` alone), where the options and subcommands it needs are listed. yargs scopes
 * a `fail` handler set in a command's builder to that command and its subcommands.
 */
function seeHelp(command: string): (message: string, error: Error | undefined) => never {
  return (message, error) => {
    if (error) throw error;
    throw new UsageError(`${message}\n(see refrelay ${command === '' ? '' : `${command} `}--help)`);
  };
}

export async function runCommands(argv: string[]): Promise<number> {
  let exitCode = EXIT_OK;
  const parser: Argv = yargs(argv)
    .scriptName('refrelay')
    .version(VERSION)
    .strict()
    .exitProcess(false)
    .demandCommand(1, 'name a command')
    .recommendCommands()
    .fail(seeHelp(''))
    .command('config', 'configuration commands', (config) =>
      config
        .fail(seeHelp('config'))
        .command(
          'check',
          "load replication.config and report every problem at once (exit 3 when invalid, or when storePath is Gerrit's replication events directory)",
          (y) => y.fail(seeHelp('config check')).options({ ...configOption, json: { type: 'boolean', default: false, describe: 'machine-readable output' } })
            .example('refrelay config check --config /etc/refrelay/replication.config', ''),
          async (args) => {
            const config = loadCliConfig({ config: args.config });
            for (const warning of config.warnings) process.stderr.write(`warning: ${warning.file}: ${warning.key}: ${warning.message}\n`);
            const gerritFiles = await checkGerritEventsDir(config);
            if (gerritFiles !== undefined) process.stderr.write(`warning: ${gerritFiles}\n`);
            // The secure file is checked too (permissions, syntax); only remote names are shown.
            const credentials = loadCredentials(config).remotes;
            if (args.json) process.stdout.write(`${JSON.stringify({ ...configToJson(config), credentialsFor: credentials }, null, 2)}\n`);
            else process.stdout.write(`${describeConfig(config)}credentials (secure.config): ${credentials.length === 0 ? 'none' : credentials.join(', ')}\n`);
          },
        )
        .demandCommand(1, 'name a config command')
        .example('refrelay config check --config /etc/refrelay/replication.config', ''),
    )
    .command(
      'enqueue',
      'queue a ref update durably in the shared store (used by git hooks)',
      (y) => y.fail(seeHelp('enqueue')).options(Object.fromEntries(ENQUEUE_OPTIONS.map(({ name, ...option }) => [name, option])))
        .example('refrelay enqueue --project team/app --ref refs/heads/main', '')
        .example('refrelay enqueue --stdin   # in a post-receive hook; project from GIT_DIR', '')
        .epilogue('When the store cannot be written (not mounted, full, read-only, I/O errors, no answer within replication.spoolAfter), the update is spooled in replication.spoolPath, exit 0 with a warning, and a daemon of the store on this machine forwards it. Exit 1 only when the spool fails too.'),
      async () => {
        // Reached only for --help (main.ts routes enqueue straight to its lean path).
      },
    )
    .command(
      'status',
      "show the whole cluster's queue, read from the shared store",
      (y) => y.fail(seeHelp('status')).options({
        ...configOption,
        json: { type: 'boolean', default: false, describe: 'stable JSON (see README), with each URI\'s recent history' },
        watch: { type: 'boolean', default: false, describe: 'refresh the table every 2 s until Ctrl-C' },
        all: { type: 'boolean', default: false, describe: `list every failed task (default: the newest ${FAILED_SHOWN} in the table, ${FAILED_LISTED} in --json)` },
      })
        .example('refrelay status --config /etc/refrelay/replication.config', '')
        .example('refrelay status --json', '')
        .example('refrelay status --all   # every failed task with its reason', ''),
      async (args) => {
        if (args.watch && args.json) throw new UsageError('status: --watch shows the table; use --json without --watch (or poll it)');
        const config = loadCliConfig({ config: args.config });
        const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId, ifUnmarked: 'refuse' });
        await store.open();
        const style = process.stdout.isTTY === true ? 'boxed' : 'plain';
        for (;;) {
          // Node liveness is judged on the store's clock; a read-only store cannot be probed.
          const storeClockOffsetMs = await measureStoreClockOffset(store.paths.nodes, `status-${process.pid}`, systemClock).catch(() => null);
          const status = await collectClusterStatus(config, store, systemClock, { storeClockOffsetMs, ...(args.all ? { failedLimit: Number.POSITIVE_INFINITY } : {}) });
          if (args.json) {
            process.stdout.write(timesJson(status));
            return;
          }
          // Clear the screen and home the cursor only on a terminal; in a pipe each refresh follows the last.
          const clear = args.watch && style === 'boxed' ? '\u001b[2J\u001b[H' : '';
          process.stdout.write(`${clear}${formatStatus(status, style, args.all ? { failedShown: Number.POSITIVE_INFINITY } : {})}`);
          if (!args.watch) return;
          process.stdout.write(`(every 2 s; Ctrl-C to stop) ${new Date().toISOString()}\n${style === 'plain' ? '\n' : ''}`);
          await new Promise((resolve) => setTimeout(resolve, STATUS_WATCH_MS));
        }
      },
    )
    .command(
      'init',
      'create the shared store at replication.storePath (once per cluster), or adopt one an earlier refrelay made',
      (y) => y.fail(seeHelp('init')).options({ ...configOption })
        .example('refrelay init --config /etc/refrelay/replication.config', ''),
      async (args) => {
        const config = loadCliConfig({ config: args.config });
        const store = new TaskStore({ root: config.storePath, nodeId: config.nodeId });
        const opening = await store.init();
        const said = { created: 'created the refrelay store at', adopted: "adopted the earlier refrelay store (wrote its marker) at", existing: 'already a refrelay store:' } as const;
        process.stdout.write(`${said[opening]} ${config.storePath}\n`);
      },
    )
    .command(
      'daemon',
      'run this node: distribute, lock and push queued tasks until SIGTERM/SIGINT',
      (y) => y.fail(seeHelp('daemon')).options({
        ...configOption,
        'node-id': { type: 'string', describe: 'override replication.nodeId' },
        drain: { type: 'boolean', default: false, describe: 'exit once nothing is left that this node may take (1 if tasks were moved to failed/)' },
        'log-level': { choices: ['debug', 'info', 'warn', 'error'] as const, default: 'info' as const, describe: 'log verbosity' },
        'log-format': { choices: ['json', 'pretty'] as const, describe: 'JSON lines, or lines for people (default: pretty on a terminal, else json)' },
      })
        .example('refrelay daemon --config /etc/refrelay/replication.config', '')
        .example('refrelay daemon --drain   # deliver what is queued, then exit', ''),
      async (args) => {
        const { runDaemon } = await import('./daemon-command.js');
        exitCode = await runDaemon({ config: args.config, nodeId: args['node-id'], drain: args.drain, logLevel: args['log-level'], logFormat: args['log-format'] });
      },
    )
    .command('hook', 'install or remove the git hook that queues updates', (hook) => {
      const hookOptions = {
        ...configOption,
        repo: { type: 'string', array: true, describe: 'repository (bare or work tree), repeatable' },
        all: { type: 'boolean', default: false, describe: 'every repository under basePath' },
        'hooks-path': { type: 'string', describe: 'a shared core.hooksPath folder' },
        kind: { choices: ['post-receive', 'reference-transaction'] as const, default: 'post-receive' as const, describe: 'which git hook' },
        'dry-run': { type: 'boolean', default: false, describe: 'show what would change' },
      } as const;
      const run = (mode: 'install' | 'uninstall') => async (args: Record<string, unknown>): Promise<void> => {
        const { runHook } = await import('./hook-command.js');
        exitCode = await runHook(mode, {
          config: args.config as string | undefined,
          repos: ((args.repo as unknown[] | undefined) ?? []).map(String),
          all: args.all === true,
          hooksPath: args['hooks-path'] as string | undefined,
          kind: args.kind as 'post-receive' | 'reference-transaction',
          dryRun: args['dry-run'] === true,
        });
      };
      return hook
        .fail(seeHelp('hook'))
        .command('install', 'install the hook (an existing hook is kept and chained)', (y: Argv) => y.fail(seeHelp('hook install')).options(hookOptions).example('refrelay hook install --all --dry-run', '').epilogue(HOOK_INSTALL_EPILOGUE), run('install'))
        .command('uninstall', 'remove the hook and restore a chained one', (y: Argv) => y.fail(seeHelp('hook uninstall')).options(hookOptions).example('refrelay hook uninstall --repo /srv/git/team/app.git', ''), run('uninstall'))
        .demandCommand(1, 'name a hook command')
        .example('refrelay hook install --all --dry-run', '')
        .example('refrelay hook install --hooks-path /srv/git-hooks --kind reference-transaction', '');
    })
    .command(
      'replicate [patterns..]',
      'queue a full sync of projects (exact, prefix/* or ^regex) to their destinations',
      (y) => y
        .fail(seeHelp('replicate'))
        .positional('patterns', { type: 'string', array: true, describe: 'project patterns' })
        .options({
          ...configOption,
          all: { type: 'boolean', default: false, describe: 'every project under basePath' },
          remote: { type: 'string', array: true, describe: 'only this remote, repeatable' },
          url: { type: 'string', describe: 'only destination URLs containing this text' },
          now: { type: 'boolean', default: false, describe: 'skip replicationDelay' },
          wait: { type: 'boolean', default: false, describe: 'wait until done, show progress and a result table; exit 1 if any failed' },
        })
        .example('refrelay replicate --all --now --wait', '')
        .example("refrelay replicate 'team/*' --remote dr", ''),
      async (args) => {
        const { runReplicate } = await import('./replicate-command.js');
        exitCode = await runReplicate({
          config: args.config,
          patterns: (args.patterns ?? []).map(String),
          all: args.all,
          remotes: (args.remote ?? []).map(String),
          url: args.url,
          now: args.now,
          wait: args.wait,
        });
      },
    )
    .command(
      'verify [patterns..]',
      "compare every destination's refs with the local refs through the refspecs (exit 1 on drift; --fix: 0 once the repairs are queued)",
      (y) => y
        .fail(seeHelp('verify'))
        .positional('patterns', { type: 'string', array: true, describe: 'project patterns (default: all)' })
        .options({
          ...configOption,
          remote: { type: 'string', array: true, describe: 'only this remote, repeatable' },
          json: { type: 'boolean', default: false, describe: 'machine-readable report' },
          fix: { type: 'boolean', default: false, describe: 'queue tasks for exactly the drifted refs (exit 0 once queued)' },
          parallel: { type: 'number', default: 8, describe: 'destinations checked at once' },
        })
        .example('refrelay verify --remote dr', '')
        .example('refrelay verify --fix && refrelay daemon --drain', '')
        .epilogue(
          'Exit codes: 0 every destination in sync, 1 drift or an unreachable destination, 2 a pattern that matches no project, 3 invalid configuration. ' +
            'With --fix: 0 in sync or every repair queued, 1 a repair could not be queued (the store could not be written), ' +
            '4 a destination was unreachable (the repairs for the others are queued).',
        ),
      async (args) => {
        const { runVerify } = await import('./verify-command.js');
        exitCode = await runVerify({
          config: args.config,
          patterns: (args.patterns ?? []).map(String),
          remotes: (args.remote ?? []).map(String),
          json: args.json,
          fix: args.fix,
          parallel: Math.max(1, Math.floor(args.parallel)),
        });
      },
    )
    .command(
      'retry',
      "move failed tasks back to waiting/ and clear the backoff (retry state) of their URIs and of every matching URI",
      (y) => y.fail(seeHelp('retry')).options({
        ...configOption,
        all: { type: 'boolean', default: false, describe: 'every failed task and every URI in backoff' },
        remote: { type: 'string', describe: 'only tasks and URIs of this remote' },
        uri: { type: 'string', describe: 'only tasks and URIs whose destination URI contains this text' },
      })
        .example('refrelay retry --remote dr', '')
        .example('refrelay retry --uri github.com/example/app', ''),
      async (args) => {
        const { runRetry } = await import('./retry-command.js');
        exitCode = await runRetry({ config: args.config, all: args.all, remote: args.remote, uri: args.uri });
      },
    )
    .command('failed', 'list failed tasks with their reasons, or drop them out of failed/', (failed) =>
      failed
        .fail(seeHelp('failed'))
        .command(
          'list',
          'every failed task, newest first: key, remote, URI, project, refs, since when, and why',
          (y: Argv) => y.fail(seeHelp('failed list')).options({ ...configOption, json: { type: 'boolean', default: false, describe: 'machine-readable list (see README)' } }).example('refrelay failed list', ''),
          async (args) => {
            const { runFailedList } = await import('./failed-command.js');
            exitCode = await runFailedList({ config: args.config as string | undefined, json: args.json === true });
          },
        )
        .command(
          'drop [keys..]',
          'move failed tasks to failed/dropped/ (kept for replication.retention, then deleted): neither retried nor listed any more',
          (y: Argv) => y
            .fail(seeHelp('failed drop'))
            .positional('keys', { type: 'string', array: true, describe: 'task keys, as failed list shows them' })
            .options({
              ...configOption,
              all: { type: 'boolean', default: false, describe: 'every failed task (alone)' },
              remote: { type: 'string', describe: 'only tasks of this remote' },
              uri: { type: 'string', describe: 'only tasks whose destination URI contains this text' },
              project: { type: 'string', describe: 'only tasks of these projects (exact, prefix/* or ^regex)' },
              'dry-run': { type: 'boolean', default: false, describe: 'show what would be dropped; move nothing' },
            })
            .example('refrelay failed drop --remote dr --dry-run', '')
            .example('refrelay failed drop 3f786850e387550fdab836ed7e6dc881de23001b', '')
            .epilogue('Selectors given together must all match. Exit codes: 0 done (also when nothing matched: "Nothing to drop"), 2 no selector, --all with another, or a malformed key or pattern.'),
          async (args) => {
            const { runFailedDrop } = await import('./failed-command.js');
            exitCode = await runFailedDrop({
              config: args.config as string | undefined,
              all: args.all === true,
              remote: args.remote as string | undefined,
              uri: args.uri as string | undefined,
              project: args.project as string | undefined,
              keys: ((args.keys as unknown[] | undefined) ?? []).map(String),
              dryRun: args['dry-run'] === true,
            });
          },
        )
        .demandCommand(1, 'name a failed command')
        .example('refrelay failed list', '')
        .example('refrelay failed drop --remote dr --dry-run', ''),
    )
    .command(
      'import-gerrit-queue <dir>',
      "take over the tasks persisted by Gerrit's replication plugin (its events directory, ref-updates/ or waiting/ folder)",
      (y) => y
        .fail(seeHelp('import-gerrit-queue'))
        .positional('dir', { type: 'string', demandOption: true, describe: "Gerrit's events directory, its ref-updates folder, or its waiting/ folder" })
        .options({
          ...configOption,
          'dry-run': { type: 'boolean', default: false, describe: 'report what would be imported and skipped; write nothing' },
          remove: { type: 'boolean', default: false, describe: 'delete each Gerrit file once its task is durable in the store' },
          'include-running': { type: 'boolean', default: false, describe: "import running/ too (pushes under way when Gerrit stopped): only after the plugin is stopped on every primary" },
        })
        .example('refrelay import-gerrit-queue /var/gerrit/data/replication/ref-updates --dry-run', '')
        .example('refrelay import-gerrit-queue /var/gerrit/data/replication/ref-updates --remove', '')
        .example('refrelay import-gerrit-queue /var/gerrit/data/replication/ref-updates --include-running --remove   # plugin stopped everywhere', '')
        .epilogue('Exit codes: 0 every task file imported, 1 some files skipped (reasons on stderr) or the store could not be written, 2 DIR missing or not a Gerrit queue folder, 3 invalid configuration.'),
      async (args) => {
        const { runImportGerritQueue } = await import('./import-gerrit-queue-command.js');
        exitCode = await runImportGerritQueue({ config: args.config, dir: args.dir, dryRun: args['dry-run'], remove: args.remove, includeRunning: args['include-running'] });
      },
    )
    .example('refrelay config check --config /etc/refrelay/replication.config', '')
    .example('refrelay daemon --config /etc/refrelay/replication.config', '')
    .example('refrelay status', '')
    .epilogue('Exit codes: 0 ok, 1 failed work, 2 usage error, 3 invalid configuration, 4 destinations unreachable (verify --fix), 5 refrelay could not start (a build file or dependency of its installation is missing).');
  await parser.parseAsync();
  return exitCode;
}
