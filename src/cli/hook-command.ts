import { realpathSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { UsageError } from '../errors.js';
import { applyChange, hooksDirOf, planInstall, planUninstall, type HookChange, type HookKind } from '../intake/hook-installer.js';
import { hookScript } from '../intake/hook-script.js';
import { folderProblem } from '../intake/local-repository.js';
import { discoverProjects } from '../intake/project-discovery.js';
import { loadCliConfig } from './load-cli-config.js';
import { plural } from '../runtime/plural.js';

export interface HookArgs {
  config?: string | undefined;
  repos: string[];
  all: boolean;
  hooksPath?: string | undefined;
  kind: HookKind;
  dryRun: boolean;
}

const DESCRIPTION: Record<HookChange['action'], string> = {
  install: 'install',
  'chain-and-install': 'install (existing hook kept and run first)',
  update: 'update (it ran another refrelay, node or config)',
  'already-installed': 'already installed',
  uninstall: 'remove',
  'uninstall-and-restore': 'remove (the kept hook goes back)',
  'not-installed': 'not installed',
};

/** A missing folder is made by the install; a file standing there would fail every hook's read or write with ENOTDIR. */
function sharedHooksFolder(hooksPath: string): string {
  const dir = resolve(hooksPath);
  if (folderProblem(dir) === 'is not a folder') throw new UsageError(`hook: --hooks-path ${dir} is not a folder`);
  return dir;
}

async function targets(args: HookArgs, basePath: string | undefined): Promise<string[]> {
  const chosen = [args.repos.length > 0, args.all, args.hooksPath !== undefined].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError('hook: give --repo DIR (repeatable), --all, or --hooks-path DIR');
  if (args.hooksPath !== undefined) return [sharedHooksFolder(args.hooksPath)];
  if (args.all) {
    if (basePath === undefined) throw new UsageError('hook: --all needs replication.basePath');
    return (await discoverProjects(basePath)).map((project) => hooksDirOf(resolve(basePath, `${project}.git`)));
  }
  return args.repos.map((repo) => hooksDirOf(resolve(repo)));
}

/**
 * The refrelay the hooks run: this one, by its real path. Through `npm install -g`'s symlink in
 * `$(npm prefix -g)/bin` that is the installed package, which `npm ci` in a checkout never touches.
 */
function hookCommand(config: string): { node: string; script: string; config: string } {
  return { node: process.execPath, script: realpathSync(process.argv[1]!), config };
}

/** Said when the hooks will run a refrelay outside an installed package: they break with its checkout. */
function sourceCheckoutNote(script: string): string {
  if (script.includes(`${sep}node_modules${sep}`)) return '';
  return (
    'note: that is not an installed package: the hooks depend on this checkout, and fail to start (pushes still succeed) ' +
    'while `npm ci` or a build rewrites it; for production, install refrelay with `npm install -g` and run its `hook install`\n'
  );
}

/** `refrelay hook install|uninstall`: idempotent, keeps existing hooks, shows changes with --dry-run. */
export async function runHook(mode: 'install' | 'uninstall', args: HookArgs): Promise<number> {
  const config = loadCliConfig({ config: args.config });
  const dirs = await targets(args, config.basePath);
  const command = hookCommand(config.file);
  const text = hookScript(args.kind, command);
  if (mode === 'install') process.stdout.write(`hooks run the refrelay at ${command.script} (node ${command.node})\n${sourceCheckoutNote(command.script)}`);
  let changed = 0;
  for (const dir of dirs) {
    const change = mode === 'install' ? await planInstall(dir, args.kind, text) : await planUninstall(dir, args.kind);
    const noop = change.action === 'already-installed' || change.action === 'not-installed';
    process.stdout.write(`${args.dryRun && !noop ? 'would ' : ''}${DESCRIPTION[change.action]}: ${change.hookPath}\n`);
    if (noop) continue;
    changed++;
    if (!args.dryRun) await applyChange(change);
  }
  const hooks = plural(changed, 'hook');
  process.stdout.write(`${args.dryRun ? 'dry run: ' : ''}${hooks} ${args.dryRun ? 'would change' : 'changed'}, ${dirs.length - changed} unchanged\n`);
  return 0;
}
