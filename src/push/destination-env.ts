import { fileURLToPath } from 'node:url';
import { urlKind } from '../config/remote-url.js';
import type { RemoteConfig } from '../config/types.js';
import type { Credentials, RemoteCredentials } from '../config/secure-config.js';
import { shellQuote } from './create-repository.js';
import { SSH_OPTIONS } from './push-env.js';

/** The askpass program shipped with refrelay: it answers git's prompts from its environment. */
export const ASKPASS_PROGRAM = fileURLToPath(new URL('../../bin/refrelay-askpass', import.meta.url));

/**
 * git's transport for a destination URL, as GIT_ALLOW_PROTOCOL names it. Exactly this one is
 * allowed for the push, so a URL can never make git run a command (`ext::`) or fall back to a
 * transport nobody configured.
 */
export function allowedProtocol(uri: string): string {
  // `<transport>::<address>` runs the remote helper git-remote-<transport> (ext:: runs a command).
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(uri)) return 'none';
  switch (urlKind(uri)) {
    case 'ssh':
    case 'scp':
      return 'ssh';
    case 'http':
      return /^https:/i.test(uri) ? 'https' : 'http';
    case 'git':
      return 'git';
    case 'file':
    case 'path':
      return 'file';
    default:
      // An unknown scheme: nothing is allowed, git refuses it and the push fails permanently.
      return 'none';
  }
}

/**
 * The ssh command of a remote: its `sshCommand` (or the operator's GIT_SSH_COMMAND, or `ssh`),
 * then refrelay's options, the host-key policy and the remote's key. OpenSSH takes the first value
 * it sees for an option, so what the remote's own command sets wins over what is appended here.
 */
export function sshCommandFor(
  remote: Pick<RemoteConfig, 'sshCommand' | 'sshIdentity' | 'sshStrictHostKeyChecking'>,
  operatorCommand: string | undefined,
): string {
  const base = remote.sshCommand ?? operatorCommand ?? 'ssh';
  const identity = remote.sshIdentity === undefined ? '' : ` -i ${shellQuote(remote.sshIdentity)} -o IdentitiesOnly=yes`;
  return `${base} ${SSH_OPTIONS} -o StrictHostKeyChecking=${remote.sshStrictHostKeyChecking}${identity}`;
}

/**
 * What a push to `uri` adds to git's environment: the allowed protocol, the remote's ssh command,
 * and for http(s) with credentials from secure.config the askpass program and the secret it
 * hands out. The secret is in the environment of git and the askpass program only — never in
 * argv (visible in `ps`) nor in a URL — and credential helpers are switched off for this push,
 * so none of them stores it.
 */
export function destinationEnv(
  uri: string,
  remote: Pick<RemoteConfig, 'sshCommand' | 'sshIdentity' | 'sshStrictHostKeyChecking'>,
  options: { operatorSshCommand: string | undefined; usesGitSsh: boolean; credentials: RemoteCredentials | undefined },
): Record<string, string> {
  const protocol = allowedProtocol(uri);
  const env: Record<string, string> = { GIT_ALLOW_PROTOCOL: protocol };
  if (protocol === 'ssh' && !options.usesGitSsh) env.GIT_SSH_COMMAND = sshCommandFor(remote, options.operatorSshCommand);
  const credentials = options.credentials;
  if (
    (protocol === 'http' || protocol === 'https') &&
    credentials !== undefined &&
    (credentials.username !== undefined || credentials.password !== undefined)
  ) {
    Object.assign(env, {
      GIT_ASKPASS: ASKPASS_PROGRAM,
      REFRELAY_ASKPASS_USERNAME: credentials.username ?? '',
      REFRELAY_ASKPASS_PASSWORD: credentials.password ?? '',
      // An empty credential.helper resets the list: no helper sees, stores or overrides the secret.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'credential.helper',
      GIT_CONFIG_VALUE_0: '',
    });
  }
  return env;
}

/** Who reaches a destination outside a push (`verify`, `wait`): secure.config's credentials, the operator's ssh command. */
export interface DestinationAccess {
  readonly credentials?: Credentials | undefined;
  readonly operatorSshCommand?: string | undefined;
}

/** `env` (a git environment) with what a push to `uri` would add: a check reaches a destination exactly as a push does. */
export function envForDestination(env: Record<string, string>, uri: string, remote: RemoteConfig, access: DestinationAccess): Record<string, string> {
  return {
    ...env,
    ...destinationEnv(uri, remote, {
      operatorSshCommand: access.operatorSshCommand,
      usesGitSsh: env.GIT_SSH !== undefined,
      credentials: access.credentials?.for(remote.name),
    }),
  };
}
