import { envForDestination, type DestinationAccess } from '../push/destination-env.js';
import { gitReason, parseRefLines } from '../push/git-text.js';
import { redactText } from '../runtime/redact.js';
import { localRepositoryPath } from './local-repository.js';
import { runGit } from './run-git.js';
import type { WaitDestination } from './wait-destinations.js';

/** A ref's object id, null when the ref does not exist, or why it could not be read. */
export type RefValue = { readonly value: string | null } | { readonly error: string };

/** The master's current value of `ref` in `project` (one `rev-parse` on the local disk). */
export async function masterRefValue(basePath: string, project: string, ref: string, env: Record<string, string>): Promise<RefValue> {
  const repo = localRepositoryPath(basePath, project);
  const result = await runGit(['rev-parse', '--verify', '-q', ref], repo, env, 30_000);
  if (result.code === 0) return { value: result.stdout.trim() };
  if (result.code === 1) return { value: null };
  return { error: `${repo}: ${redactText(gitReason(result.stderr)) || `git exit ${result.code}`}` };
}

/**
 * The value of the destination's ref, by one `ls-remote` with the same transport rules, ssh
 * options and credentials as a push to it. `ls-remote` matches patterns by their last path
 * components: only the line naming the ref exactly counts.
 */
export async function destinationRefValue(
  destination: WaitDestination,
  env: Record<string, string>,
  timeoutMs: number,
  access: DestinationAccess,
): Promise<RefValue> {
  const toDestination = envForDestination(env, destination.uri, destination.remote, access);
  const listed = await runGit(['ls-remote', '--', destination.uri, destination.ref], undefined, toDestination, timeoutMs);
  if (listed.code !== 0) return { error: redactText(gitReason(listed.stderr)) || `git ls-remote exit ${listed.code}` };
  return { value: parseRefLines(listed.stdout, '\t').get(destination.ref) ?? null };
}
