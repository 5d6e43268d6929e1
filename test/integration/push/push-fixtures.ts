import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { RemoteConfig } from '../../../src/config/types.js';
import { parseRefspec } from '../../../src/config/refspec.js';
import { GitPusher, type GitPusherOptions } from '../../../src/push/git-pusher.js';
import { git, makeWorkTree, refsOf } from '../../support/git.js';

/** A remote as config/ would build it, with the knobs these tests turn. */
export function remoteConfig(overrides: Partial<Omit<RemoteConfig, 'push'>> & { push?: string[] } = {}): RemoteConfig {
  const { push = ['+refs/heads/*:refs/heads/*', '+refs/tags/*:refs/tags/*'], ...rest } = overrides;
  return {
    name: 'dest',
    urls: [],
    push: push.map((text) => {
      const spec = parseRefspec(text);
      if (typeof spec === 'string') throw new Error(spec);
      return spec;
    }),
    projects: [],
    excludeProjects: [],
    threads: 1,
    replicationDelayMs: 0,
    rescheduleDelayMs: 3000,
    replicationRetryMs: 60_000,
    replicationMaxRetries: 0,
    timeoutMs: 30_000,
    pushDeadlineMs: 0,
    mirror: false,
    createMissingRepositories: false,
    excludedRefsPatterns: [],
    replicatePermissions: true,
    replicateNoteDbMetaRefs: true,
    remoteNameStyle: 'slash',
    sshStrictHostKeyChecking: 'yes',
    shares: 100,
    ...rest,
  };
}

/** GitPusher with git's system and user config out of the way, like every git in tests. */
export function hermeticPusher(env: Record<string, string> = {}, options: Omit<GitPusherOptions, 'env'> = {}): GitPusher {
  return new GitPusher({ ...options, env: { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', ...env } });
}

/** A bare "master" repository (what refrelay reads) fed from a work tree (where tests commit). */
export interface Source {
  readonly work: string;
  readonly bare: string;
  /** Make the bare repository's refs exactly the work tree's branches and tags. */
  publish(): void;
  refs(): Map<string, string>;
}

export function makeSource(root: string, branches: string[] = []): Source {
  const work = makeWorkTree(join(root, 'work'), 1);
  for (const branch of branches) git(work, ['branch', branch]);
  const bare = join(root, 'source.git');
  git(root, ['clone', '-q', '--bare', work, bare]);
  const source: Source = { work, bare, publish: () => void git(work, ['push', '-q', '--mirror', bare]), refs: () => refsOf(bare) };
  source.publish();
  return source;
}

/** The destination's refs under `refs/`, read over its own transport (ls-remote), HEAD and peeled tags left out. */
export function lsRemote(url: string, env: Record<string, string> = {}): Map<string, string> {
  const out = git('/', ['ls-remote', '--refs', '--', url], { env });
  return new Map(
    out
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t').reverse() as [string, string]),
  );
}

export function pick(refs: Map<string, string>, names: string[]): Map<string, string> {
  return new Map(names.filter((name) => refs.has(name)).map((name) => [name, refs.get(name) as string]));
}

export interface ProcessInfo {
  readonly pid: number;
  readonly pgid: number;
  /** `ps` state; starts with Z for a zombie (exited, not yet reaped). */
  readonly stat: string;
  readonly args: string;
}

/** Every process but zombies: they have exited, only their parent has not collected them yet. */
export function processes(): ProcessInfo[] {
  const out = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  return out.split('\n').flatMap((line) => {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (match === null || match[3]?.startsWith('Z')) return [];
    return [{ pid: Number(match[1]), pgid: Number(match[2]), stat: match[3] ?? '', args: match[4] ?? '' }];
  });
}

/** Polls `ps` until a process matches; the push under test runs meanwhile. */
export async function waitForProcess(matches: (p: ProcessInfo) => boolean, timeoutMs = 10_000): Promise<ProcessInfo> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = processes().find(matches);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error('no matching process appeared');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * True while a live process of the group exists. Signal 0 answers ESRCH once
 * the group is gone; it still succeeds for zombies, which linger on machines
 * whose PID 1 reaps orphans late (this sandbox's init does), so a group that
 * only has zombies left is checked with ps.
 */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
  return processes().some((p) => p.pgid === pgid);
}
