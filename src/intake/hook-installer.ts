import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';

export type HookKind = 'post-receive' | 'reference-transaction';

/** The first line after the shebang: how refrelay recognises its own hook. */
export const HOOK_MARKER = '# refrelay hook: installed by `refrelay hook install`, removed by `refrelay hook uninstall`';
const CHAINED_SUFFIX = '.refrelay-chained';

export type HookAction =
  | 'install'
  | 'chain-and-install' // an existing hook is kept, renamed, and run first
  | 'already-installed'
  | 'uninstall'
  | 'uninstall-and-restore' // the chained hook goes back to its name
  | 'not-installed';

export interface HookChange {
  readonly hooksDir: string;
  readonly hookPath: string;
  readonly action: HookAction;
}

export interface HookCommand {
  /** Absolute node binary and refrelay script, so the hook works without PATH. */
  readonly node: string;
  readonly script: string;
  readonly config: string;
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * The hook never fails a user's push because refrelay could not queue: it says so loudly on the
 * pusher's terminal and in its exit-0 path; `refrelay verify --fix` repairs the miss later. A
 * chained (pre-existing) hook runs first with the same input, and its exit status is the hook's.
 */
export function hookScript(kind: HookKind, command: HookCommand): string {
  const enqueue = `${quote(command.node)} ${quote(command.script)} enqueue --stdin --config ${quote(command.config)}`;
  const onlyCommitted = kind === 'reference-transaction' ? 'if [ "$1" = committed ]; then\n' : 'if true; then\n';
  return [
    '#!/bin/sh',
    HOOK_MARKER,
    'input=$(cat)',
    'status=0',
    `if [ -x "$0${CHAINED_SUFFIX}" ]; then`,
    `  printf '%s\\n' "$input" | "$0${CHAINED_SUFFIX}" "$@" || status=$?`,
    'fi',
    `${onlyCommitted}  if ! printf '%s\\n' "$input" | ${enqueue}; then`,
    `    echo "refrelay: ENQUEUE FAILED in $(pwd): this update is not queued for replication; run 'refrelay verify --fix'" >&2`,
    '  fi',
    'fi',
    'exit $status',
    '',
  ].join('\n');
}

/** The hooks folder git uses for a repository (honours core.hooksPath). */
export function hooksDirOf(repo: string): string {
  const result = spawnSync('git', ['rev-parse', '--git-path', 'hooks'], { cwd: repo, encoding: 'utf8' });
  if (result.status !== 0) throw new UsageError(`hook: ${repo} is not a git repository: ${result.stderr.trim()}`);
  const path = result.stdout.trim();
  return isAbsolute(path) ? path : resolve(repo, path);
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export async function planInstall(hooksDir: string, kind: HookKind): Promise<HookChange> {
  const hookPath = join(hooksDir, kind);
  const existing = await readText(hookPath);
  const action: HookAction = existing === undefined ? 'install' : existing.includes(HOOK_MARKER) ? 'already-installed' : 'chain-and-install';
  return { hooksDir, hookPath, action };
}

export async function planUninstall(hooksDir: string, kind: HookKind): Promise<HookChange> {
  const hookPath = join(hooksDir, kind);
  const existing = await readText(hookPath);
  if (existing === undefined || !existing.includes(HOOK_MARKER)) return { hooksDir, hookPath, action: 'not-installed' };
  const chained = await readText(`${hookPath}${CHAINED_SUFFIX}`);
  return { hooksDir, hookPath, action: chained === undefined ? 'uninstall' : 'uninstall-and-restore' };
}

export async function applyChange(change: HookChange, kind: HookKind, command: HookCommand): Promise<void> {
  const { hookPath } = change;
  switch (change.action) {
    case 'install':
    case 'chain-and-install': {
      await mkdir(change.hooksDir, { recursive: true });
      if (change.action === 'chain-and-install') {
        if ((await readText(`${hookPath}${CHAINED_SUFFIX}`)) !== undefined) {
          throw new UsageError(`hook: ${hookPath}${CHAINED_SUFFIX} already exists; refusing to overwrite a kept hook`);
        }
        await rename(hookPath, `${hookPath}${CHAINED_SUFFIX}`);
      }
      const temp = `${hookPath}.refrelay-tmp`;
      await writeFile(temp, hookScript(kind, command), { mode: 0o755 });
      await chmod(temp, 0o755);
      await rename(temp, hookPath);
      return;
    }
    case 'uninstall':
      await unlink(hookPath);
      return;
    case 'uninstall-and-restore':
      await rename(`${hookPath}${CHAINED_SUFFIX}`, hookPath);
      return;
    default:
      return;
  }
}
