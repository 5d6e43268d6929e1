import { dirname } from 'node:path';

/**
 * ssh never prompts (BatchMode), gives up connecting after 15 s, and notices
 * a dead peer within ~45 s even when the push deadline is off.
 */
export const SSH_OPTIONS = '-o BatchMode=yes -o ConnectTimeout=15 -o ServerAliveInterval=15 -o ServerAliveCountMax=3';

/** A push replaces it with its remote's command (destination-env.ts), which carries the same options. */
export const DEFAULT_SSH_COMMAND = `ssh ${SSH_OPTIONS}`;

/** The operator's own GIT_SSH_COMMAND: the one ambient setting refrelay's git runs start from (remotes without `sshCommand`). */
export function operatorSshEnv(ambient: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return ambient.GIT_SSH_COMMAND ? { GIT_SSH_COMMAND: ambient.GIT_SSH_COMMAND } : {};
}

/**
 * The whole environment git runs with. Built from scratch, not inherited: a
 * stray GIT_DIR, GIT_ASKPASS or locale from the daemon's own environment must
 * not change what a push does or how its output reads (we parse English).
 */
export function gitEnvironment(ambient: NodeJS.ProcessEnv, extra: Readonly<Record<string, string>> = {}): Record<string, string> {
  const env: Record<string, string> = { PATH: ambient.PATH ?? '/usr/local/bin:/usr/bin:/bin', LANG: 'C', GIT_TERMINAL_PROMPT: '0' };
  // git prefers GIT_SSH_COMMAND over GIT_SSH: a caller's GIT_SSH must not be shadowed by our default.
  if (extra.GIT_SSH === undefined) env.GIT_SSH_COMMAND = DEFAULT_SSH_COMMAND;
  if (ambient.HOME !== undefined) env.HOME = ambient.HOME;
  if (ambient.SSH_AUTH_SOCK !== undefined) env.SSH_AUTH_SOCK = ambient.SSH_AUTH_SOCK;
  return { ...env, ...extra };
}

/**
 * Stops git's repository discovery at the local repository itself: a path
 * that exists but is not a repository must fail, not silently resolve to an
 * enclosing one.
 */
export function localRepoEnvironment(env: Readonly<Record<string, string>>, localRepo: string): Record<string, string> {
  return { ...env, GIT_CEILING_DIRECTORIES: dirname(localRepo) };
}
