import { execFileSync, type ExecFileSyncOptions } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Hermetic git: no system or user config, fixed identity and dates, so runs are repeatable. */
export const gitEnv: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Test Author',
  GIT_AUTHOR_EMAIL: 'author@example.com',
  GIT_COMMITTER_NAME: 'Test Author',
  GIT_COMMITTER_EMAIL: 'author@example.com',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
  GIT_TERMINAL_PROMPT: '0',
};

export function git(cwd: string, args: string[], options: ExecFileSyncOptions = {}): string {
  return execFileSync('git', args, { cwd, env: { ...gitEnv, ...options.env }, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'], ...options }) as string;
}

export function initBare(path: string): string {
  mkdirSync(path, { recursive: true });
  git(path, ['init', '-q', '--bare', '-b', 'main']);
  return path;
}

/** A work tree with `commits` commits on main; returns its path. */
export function makeWorkTree(path: string, commits = 1): string {
  mkdirSync(path, { recursive: true });
  git(path, ['init', '-q', '-b', 'main']);
  for (let n = 1; n <= commits; n++) commitFile(path, `file${n}.txt`, `content ${n}\n`);
  return path;
}

export function commitFile(workTree: string, name: string, content: string): string {
  writeFileSync(join(workTree, name), content);
  git(workTree, ['add', name]);
  git(workTree, ['commit', '-q', '-m', `change ${name}`]);
  return git(workTree, ['rev-parse', 'HEAD']).trim();
}

/** `git for-each-ref` as a map ref → object id. */
export function refsOf(repo: string, pattern = 'refs/'): Map<string, string> {
  const out = git(repo, ['for-each-ref', '--format=%(refname) %(objectname)', pattern]);
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split(' ') as [string, string]),
  );
}

export function writeHook(repo: string, name: string, body: string): void {
  const path = join(repo, 'hooks', name);
  writeFileSync(path, body, { mode: 0o755 });
}

/**
 * A master's repository `<root>/base/app.git` with branches main and feature (one commit
 * behind), pushed from a work tree at `<root>/work`; the store path beside them.
 */
export function appSource(root: string): { store: string; base: string; source: string; work: string } {
  const base = join(root, 'base');
  const source = initBare(join(base, 'app.git'));
  const work = makeWorkTree(join(root, 'work'), 2);
  git(work, ['branch', 'feature', 'HEAD~1']);
  git(work, ['push', '-q', source, 'main', 'feature']);
  return { store: join(root, 'store'), base, source, work };
}
