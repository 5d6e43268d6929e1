import { resolve as resolvePath } from 'node:path';
import { urlKind } from '../config/remote-url.js';

/** Where and how a missing destination repository can be created. */
export type CreateTarget =
  | { readonly kind: 'local'; readonly path: string }
  | { readonly kind: 'ssh'; readonly destination: string; readonly port?: string; readonly path: string }
  | { readonly kind: 'impossible'; readonly message: string };

const SSH_URL = /^(?:ssh|git\+ssh|ssh\+git):\/\/(?:([^@/]*)@)?(\[[^\]]*\]|[^:/]*)(?::(\d*))?(\/.*)$/i;

/**
 * Reads a destination URI the way git does for the transports where we can
 * create a repository ourselves: a local path or file://, and ssh (both the
 * URL and the scp-like form). `base` resolves relative paths, as git resolves
 * them against its working directory (the local repository).
 */
export function createTarget(uri: string, base: string): CreateTarget {
  switch (urlKind(uri)) {
    case 'path':
      return { kind: 'local', path: resolvePath(base, uri) };
    case 'file': {
      const match = /^file:\/\/([^/]*)(\/.*)$/i.exec(uri);
      if (match === null || (match[1] !== '' && match[1]?.toLowerCase() !== 'localhost')) {
        return { kind: 'impossible', message: 'destination repository missing and a file:// URL with a host cannot be created' };
      }
      return { kind: 'local', path: gitUrlDecode(match[2] ?? '/') };
    }
    case 'ssh': {
      const match = SSH_URL.exec(uri);
      if (match === null) return { kind: 'impossible', message: 'destination repository missing and its ssh URL cannot be parsed' };
      const [, user, rawHost = '', port, rawPath = '/'] = match;
      // git reads `ssh://host/~user/x` as `~user/x`, relative to a home directory.
      const decoded = gitUrlDecode(rawPath);
      const path = decoded.startsWith('/~') ? decoded.slice(1) : decoded;
      return sshTarget(user, rawHost.replace(/^\[(.*)\]$/, '$1'), port, path);
    }
    case 'scp': {
      const colon = uri.indexOf(':');
      const at = uri.lastIndexOf('@', colon);
      const user = at >= 0 ? uri.slice(0, at) : undefined;
      return sshTarget(user, uri.slice(at + 1, colon).replace(/^\[(.*)\]$/, '$1'), undefined, uri.slice(colon + 1));
    }
    case 'git':
      return { kind: 'impossible', message: 'destination repository missing and git:// cannot create repositories' };
    case 'http':
      return { kind: 'impossible', message: 'destination repository missing and http(s) cannot create repositories' };
    case 'other':
      return { kind: 'impossible', message: 'destination repository missing and its transport cannot create repositories' };
  }
}

/**
 * git percent-decodes a URL with a scheme before it uses the path (connect.c, url_decode), so
 * `file:///srv/a%20b.git` is the folder `a b.git`: the repository is created where git will look.
 * A `%` not followed by two hex digits stays as it is, as in git.
 */
function gitUrlDecode(text: string): string {
  if (!text.includes('%')) return text;
  const raw = Buffer.from(text, 'utf8');
  const out: number[] = [];
  const isHex = (byte: number | undefined): boolean => byte !== undefined && /^[0-9a-fA-F]$/.test(String.fromCharCode(byte));
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0x25 && isHex(raw[i + 1]) && isHex(raw[i + 2])) {
      out.push(Number.parseInt(String.fromCharCode(raw[i + 1]!, raw[i + 2]!), 16));
      i += 2;
    } else {
      out.push(raw[i]!);
    }
  }
  return Buffer.from(out).toString('utf8');
}

function sshTarget(user: string | undefined, host: string, port: string | undefined, path: string): CreateTarget {
  // A host or user starting with "-" would reach ssh as an option (git refuses these too).
  if (host === '' || host.startsWith('-') || user?.startsWith('-') || path === '') {
    return { kind: 'impossible', message: 'destination repository missing and its ssh address is not usable' };
  }
  const destination = user === undefined || user === '' ? host : `${user}@${host}`;
  return { kind: 'ssh', destination, ...(port ? { port } : {}), path };
}

/**
 * The remote shell command creating a bare repository (leading directories
 * included). The path is single-quoted for the remote shell; a leading `~/` or
 * `~user/` stays outside the quotes so the remote shell still expands it.
 */
export function remoteInitCommand(path: string): string {
  const tilde = /^(~[^/]*)(\/.*)?$/.exec(path);
  const home = tilde?.[1];
  const rest = tilde === null ? path : (tilde[2] ?? '/').slice(1);
  return `git init --bare -q ${home === undefined ? '' : `${home}/`}${rest === '' ? '' : shellQuote(rest)}`;
}

/**
 * argv running GIT_SSH_COMMAND the way git itself runs it (`sh -c '<cmd> "$@"'`),
 * so the user's ssh program, key and options apply to the create command too.
 */
export function sshCreateArgv(sshCommand: string, target: { destination: string; port?: string; path: string }): string[] {
  const portArgs = target.port === undefined ? [] : ['-p', target.port];
  return ['-c', `${sshCommand} "$@"`, 'ssh', ...portArgs, target.destination, remoteInitCommand(target.path)];
}

export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** What git would run for ssh: GIT_SSH_COMMAND (a shell snippet) wins over GIT_SSH (a program path). */
export function sshProgram(env: Readonly<Record<string, string>>): string {
  return env.GIT_SSH_COMMAND ?? (env.GIT_SSH === undefined ? 'ssh' : shellQuote(env.GIT_SSH));
}
