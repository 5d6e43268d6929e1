import { spawnSync } from 'node:child_process';
import { chmod, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { CHAINED_SUFFIX, HOOK_MARKER, type HookKind } from './hook-script.js';
import { folderProblem } from './local-repository.js';
import { errnoName } from '../runtime/errno.js';

export type { HookCommand, HookKind } from './hook-script.js';

export type HookAction =
  | 'install'
  | 'chain-and-install' // an existing hook is kept, renamed, and run first
  | 'update' // refrelay's hook, written for another refrelay path, node, config or an older text
  | 'already-installed'
  | 'uninstall'
  | 'uninstall-and-restore' // the chained hook goes back to its name
  | 'not-installed';

export interface HookChange {
  readonly hooksDir: string;
  readonly hookPath: string;
  readonly action: HookAction;
  /** The hook's text, for the actions that write it. */
  readonly text?: string;
}

/** The hooks folder git uses for a repository (honours core.hooksPath). */
export function hooksDirOf(repo: string): string {
  const result = spawnSync('git', ['rev-parse', '--git-path', 'hooks'], { cwd: repo, encoding: 'utf8' });
  // git did not start: its working folder is missing or a file (spawn reports either as ENOENT), or git itself is.
  if (result.error !== undefined) {
    const problem = folderProblem(repo);
    throw new UsageError(problem === undefined ? `hook: cannot run git in ${repo}: ${result.error.message}` : `hook: ${repo} ${problem}`, {
      cause: result.error,
    });
  }
  if (result.status !== 0) throw new UsageError(`hook: ${repo} is not a git repository: ${result.stderr.trim()}`);
  const path = result.stdout.trim();
  return isAbsolute(path) ? path : resolve(repo, path);
}

async function readText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if (errnoName(error) === 'ENOENT') return undefined;
    throw error;
  }
}

/** `text`: the hook as it should be (`hookScript`); a refrelay hook with any other text is rewritten. */
export async function planInstall(hooksDir: string, kind: HookKind, text: string): Promise<HookChange> {
  const hookPath = join(hooksDir, kind);
  const existing = await readText(hookPath);
  let action: HookAction = 'chain-and-install';
  if (existing === undefined) action = 'install';
  else if (existing === text) action = 'already-installed';
  else if (existing.includes(HOOK_MARKER)) action = 'update';
  return { hooksDir, hookPath, action, text };
}

export async function planUninstall(hooksDir: string, kind: HookKind): Promise<HookChange> {
  const hookPath = join(hooksDir, kind);
  const existing = await readText(hookPath);
  if (existing === undefined || !existing.includes(HOOK_MARKER)) return { hooksDir, hookPath, action: 'not-installed' };
  const chained = await readText(`${hookPath}${CHAINED_SUFFIX}`);
  return { hooksDir, hookPath, action: chained === undefined ? 'uninstall' : 'uninstall-and-restore' };
}

export async function applyChange(change: HookChange): Promise<void> {
  const { hookPath } = change;
  switch (change.action) {
    case 'install':
    case 'chain-and-install':
    case 'update': {
      if (change.text === undefined) throw new Error(`hook: no text to write to ${hookPath}`);
      await mkdir(change.hooksDir, { recursive: true });
      if (change.action === 'chain-and-install') {
        if ((await readText(`${hookPath}${CHAINED_SUFFIX}`)) !== undefined) {
          throw new UsageError(`hook: ${hookPath}${CHAINED_SUFFIX} already exists; refusing to overwrite a kept hook`);
        }
        await rename(hookPath, `${hookPath}${CHAINED_SUFFIX}`);
      }
      // temp + rename: a push running the hook meanwhile sees the old text or the new, never half.
      const temp = `${hookPath}.refrelay-tmp`;
      await writeFile(temp, change.text, { mode: 0o755 });
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
