import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { applyChange, hooksDirOf, planInstall, planUninstall, type HookChange, type HookKind } from '../intake/hook-installer.js';
import { discoverProjects } from '../intake/project-discovery.js';
import { loadCliConfig } from './load-cli-config.js';

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
  'already-installed': 'already installed',
  uninstall: 'remove',
  'uninstall-and-restore': 'remove (the kept hook goes back)',
  'not-installed': 'not installed',
};

async function targets(args: HookArgs, basePath: string | undefined): Promise<string[]> {
  const chosen = [args.repos.length > 0, args.all, args.hooksPath !== undefined].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError('hook: give --repo DIR (repeatable), --all, or --hooks-path DIR');
  if (args.hooksPath !== undefined) return [resolve(args.hooksPath)];
  if (args.all) {
    if (basePath === undefined) throw new UsageError('hook: --all needs replication.basePath');
    return (await discoverProjects(basePath)).map((project) => hooksDirOf(resolve(basePath, `${project}.git`)));
  }
  return args.repos.map((repo) => hooksDirOf(resolve(repo)));
}

/** `refrelay hook install|uninstall`: idempotent, keeps existing hooks, shows changes with --dry-run. */
export async function runHook(mode: 'install' | 'uninstall', args: HookArgs): Promise<number> {
  const config = loadCliConfig({ config: args.config });
  const dirs = await targets(args, config.basePath);
  const command = { node: process.execPath, script: resolve(process.argv[1]!), config: config.file };
  let changed = 0;
  for (const dir of dirs) {
    const change = mode === 'install' ? await planInstall(dir, args.kind) : await planUninstall(dir, args.kind);
    const noop = change.action === 'already-installed' || change.action === 'not-installed';
    process.stdout.write(`${args.dryRun && !noop ? 'would ' : ''}${DESCRIPTION[change.action]}: ${change.hookPath}\n`);
    if (noop) continue;
    changed++;
    if (!args.dryRun) await applyChange(change, args.kind, command);
  }
  process.stdout.write(`${args.dryRun ? 'dry run: ' : ''}${changed} hook${changed === 1 ? '' : 's'} ${args.dryRun ? 'would change' : 'changed'}, ${dirs.length - changed} unchanged\n`);
  return 0;
}
