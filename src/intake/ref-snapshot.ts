import { parseRefLines } from '../push/git-text.js';
import { runProcess } from '../push/run-process.js';

/** Ref name → object id, as `git for-each-ref` printed them: what the ref watcher compares. */
export type RefSnapshot = Map<string, string>;

/** `git for-each-ref` of one repository; undefined when it cannot be read (moved, half-created). */
export async function readRefSnapshot(repo: string): Promise<RefSnapshot | undefined> {
  // The node's own environment: the repositories are local, as for the hook that would run here.
  const result = await runProcess('git', ['for-each-ref', '--format=%(objectname) %(refname)'], {
    cwd: repo,
    env: process.env as Record<string, string>,
    killGraceMs: 0,
  });
  return result.exitCode === 0 ? parseRefLines(result.stdout, ' ') : undefined;
}

/** Refs added, changed or deleted between two snapshots. */
export function changedRefs(before: RefSnapshot, after: RefSnapshot): string[] {
  const changed: string[] = [];
  for (const [ref, oid] of after) if (before.get(ref) !== oid) changed.push(ref);
  for (const ref of before.keys()) if (!after.has(ref)) changed.push(ref);
  return changed.sort();
}
