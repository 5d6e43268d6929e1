import { join } from 'node:path';
import { mapRefThroughRefspecs, unmapRef } from '../config/refspec.js';
import { projectExclusion, refExclusion } from '../config/ref-exclusion.js';
import type { RemoteConfig, ReplicationConfig } from '../config/types.js';
import { redactText, redactUrl } from '../runtime/redact.js';
import { gitEnvironment } from '../push/push-env.js';
import { envForDestination, type DestinationAccess } from '../push/destination-env.js';
import { headTarget } from '../push/local-head.js';
import { gitReason, parseRefLines } from '../push/git-text.js';
import type { Credentials } from '../config/secure-config.js';
import { tasksWithinSize, type Task } from '../task/task.js';
import { runGit as run } from './run-git.js';
import type { Destination } from './plan-tasks.js';
import { mapBounded } from '../runtime/map-bounded.js';
import { plural } from '../runtime/plural.js';

/** Names shown per category; counts are always complete. */
const FIRST_FEW = 5;

export interface DriftReport {
  readonly project: string;
  readonly remote: string;
  /** Redacted. */
  readonly uri: string;
  readonly state: 'in-sync' | 'drift' | 'unreachable';
  readonly refs: number;
  readonly missing: readonly string[];
  readonly different: readonly string[];
  /** Destination refs with no local source inside the refspecs' namespaces; drift only with mirror. */
  readonly extra: readonly string[];
  /** The remote's `mirror`: only then would a push delete the extra refs, so only then are they drift. */
  readonly mirror: boolean;
  readonly error?: string;
  /** Local refs to queue so the destination converges (--fix). */
  readonly fixRefs: readonly string[];
}

/** Destination ref → the local ref it comes from, for the refs a remote's refspecs would push. */
function expectedRefs(remote: RemoteConfig, local: Map<string, string>): Map<string, { src: string; oid: string }> {
  const expected = new Map<string, { src: string; oid: string }>();
  for (const [ref, oid] of local) {
    if (refExclusion(remote, ref) !== undefined) continue;
    const dst = mapRefThroughRefspecs(remote.push, ref)?.dst;
    if (dst !== undefined && !expected.has(dst)) expected.set(dst, { src: ref, oid });
  }
  return expected;
}

type RefDiff = Pick<DriftReport, 'missing' | 'different' | 'extra' | 'fixRefs'>;
const NO_DIFF: RefDiff = { missing: [], different: [], extra: [], fixRefs: [] };

/**
 * Compares a destination's refs (`git ls-remote`) with what the remote's refspecs would push from
 * the local repository; the project's HEAD decides first whether the remote receives it at all.
 */
export async function verifyDestination(
  config: ReplicationConfig,
  destination: Destination,
  env: Record<string, string>,
  timeoutMs: number,
  access: DestinationAccess = {},
): Promise<DriftReport> {
  const { project, remote, uri } = destination;
  const report = (state: DriftReport['state'], found: Partial<DriftReport> = {}): DriftReport => {
    return { project, remote: remote.name, uri: redactUrl(uri), mirror: remote.mirror, state, refs: 0, ...NO_DIFF, ...found };
  };
  const localRepo = join(config.basePath ?? '', `${project}.git`);
  const local = await run(['for-each-ref', '--format=%(objectname) %(refname)'], localRepo, env, timeoutMs);
  if (local.code !== 0) {
    return report('unreachable', { error: `local repository: ${redactText(gitReason(local.stderr))}` });
  }
  if (!remote.replicatePermissions) {
    // A project this remote never receives (see projectExclusion) cannot drift: the push would send nothing.
    const head = await headTarget(localRepo, async () => {
      const result = await run(['symbolic-ref', '-q', 'HEAD'], localRepo, env, timeoutMs);
      return { exitCode: result.code, stdout: result.stdout };
    });
    if (projectExclusion(remote, head) !== undefined) return report('in-sync');
  }
  // The same transport rules, ssh options and credentials as a push to this destination.
  const toDestination = envForDestination(env, uri, remote, access);
  const listed = await run(['ls-remote', '--', uri], undefined, toDestination, timeoutMs);
  if (listed.code !== 0) {
    return report('unreachable', { error: redactText(gitReason(listed.stderr)) || `exit ${listed.code}` });
  }
  const expected = expectedRefs(remote, parseRefLines(local.stdout, ' '));
  const diff = compareRefs(remote, expected, parseRefLines(listed.stdout, '\t'));
  const drift = diff.missing.length > 0 || diff.different.length > 0 || (remote.mirror && diff.extra.length > 0);
  return report(drift ? 'drift' : 'in-sync', { refs: expected.size, ...diff });
}

/** What the destination lacks, has at another object, or has besides; and the local refs whose push would fix it. */
function compareRefs(remote: RemoteConfig, expected: ReadonlyMap<string, { src: string; oid: string }>, actual: ReadonlyMap<string, string>): RefDiff {
  const missing: string[] = [];
  const different: string[] = [];
  const extra: string[] = [];
  const fix = new Set<string>();
  for (const [dst, { src, oid }] of expected) {
    const there = actual.get(dst);
    if (there === undefined) {
      missing.push(dst);
      fix.add(src);
    } else if (there !== oid) {
      different.push(dst);
      fix.add(src);
    }
  }
  for (const dst of actual.keys()) {
    if (expected.has(dst) || !dst.startsWith('refs/') || dst.endsWith('^{}')) continue;
    const src = unmapRef(remote.push, dst);
    // Outside what this remote replicates; an excluded ref is never pushed nor deleted, so not drift.
    if (src === undefined || refExclusion(remote, src) !== undefined) continue;
    extra.push(dst);
    if (remote.mirror) fix.add(src);
  }
  return { missing, different, extra, fixRefs: [...fix].sort() };
}

export async function verifyAll(
  config: ReplicationConfig,
  destinations: readonly Destination[],
  options: { parallel: number; timeoutMs: number; env?: Record<string, string>; credentials?: Credentials },
): Promise<DriftReport[]> {
  const env = gitEnvironment(process.env, options.env ?? {});
  const access = { credentials: options.credentials, operatorSshCommand: options.env?.GIT_SSH_COMMAND };
  return mapBounded(destinations, options.parallel, (destination) => verifyDestination(config, destination, env, options.timeoutMs, access));
}

export function fixTasks(reports: readonly DriftReport[], destinations: readonly Destination[]): Task[] {
  return reports.flatMap((report, i) =>
    report.state === 'drift' && report.fixRefs.length > 0
      ? tasksWithinSize({ project: report.project, refs: report.fixRefs, uri: destinations[i]!.uri, remote: report.remote })
      : [],
  );
}

export function describeReport(report: DriftReport): string {
  const where = `${report.remote} ${report.uri}`;
  if (report.state === 'unreachable') return `UNREACHABLE  ${where}: ${report.error ?? ''}`;
  // Extra refs a push would leave alone are reported in the same words whatever else is wrong.
  const kept =
    !report.mirror && report.extra.length > 0 ? `; ${report.extra.length} extra kept at the destination (mirror off): ${firstFew(report.extra)}` : '';
  if (report.state === 'in-sync') return `in sync      ${where} (${plural(report.refs, 'ref')})${kept}`;
  const parts: string[] = [];
  if (report.missing.length > 0) parts.push(`${report.missing.length} missing (${firstFew(report.missing)})`);
  if (report.different.length > 0) parts.push(`${report.different.length} different (${firstFew(report.different)})`);
  if (report.mirror && report.extra.length > 0) parts.push(`${report.extra.length} extra (${firstFew(report.extra)})`);
  return `DRIFT        ${where}: ${parts.join(', ')}${kept}`;
}

function firstFew(names: readonly string[]): string {
  return `${names.slice(0, FIRST_FEW).join(', ')}${names.length > FIRST_FEW ? ', …' : ''}`;
}
