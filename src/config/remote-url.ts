import type { RemoteNameStyle } from './types.js';

export const NAME_VARIABLE = '${name}';

export const REMOTE_NAME_STYLES: readonly RemoteNameStyle[] = ['slash', 'dash', 'underscore', 'basenameOnly'];

/** How a URL reaches its destination; decides whether `${name}` needs percent-encoding. */
export type UrlKind = 'ssh' | 'scp' | 'git' | 'http' | 'file' | 'path' | 'other';

/** URL kinds whose `%XX` escapes git decodes itself (connect.c). */
const GIT_DECODES: ReadonlySet<UrlKind> = new Set(['ssh', 'git', 'file']);

export function urlHasNameVariable(template: string): boolean {
  return template.includes(NAME_VARIABLE);
}

/** The project name as the remote spells it (Gerrit's `remoteNameStyle`). */
export function styleProjectName(project: string, style: RemoteNameStyle): string {
  switch (style) {
    case 'slash':
      return project;
    case 'dash':
      return project.replaceAll('/', '-');
    case 'underscore':
      return project.replaceAll('/', '_');
    case 'basenameOnly':
      return project.slice(project.lastIndexOf('/') + 1);
  }
}

/**
 * Expands a URL template for one project. For http(s) the name is
 * percent-encoded (keeping `/`), as Gerrit does, so a space or `#` in a project
 * name cannot break the URL. git percent-decodes ssh://, git:// and file://
 * URLs before using their path, so there only `%` is escaped: a project named
 * `..%2Fx` must not reach `<folder>/../x`. scp-like URLs and plain paths take
 * the name as is, since git passes those through verbatim.
 */
export function expandUrl(template: string, project: string, style: RemoteNameStyle): string {
  const styled = styleProjectName(project, style);
  const kind = urlKind(template);
  const name = kind === 'http' ? encodePath(styled) : GIT_DECODES.has(kind) ? styled.replaceAll('%', '%25') : styled;
  return template.replaceAll(NAME_VARIABLE, () => name);
}

/**
 * Whether `url` is what `template` expands to for some project, whatever the name style and
 * encoding: for telling which remote a bare URI (a retry state file) belongs to.
 */
export function urlFitsTemplate(template: string, url: string): boolean {
  const parts = template.split(NAME_VARIABLE).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  if (parts.length === 1) return url === template;
  // Every `${name}` of one template stands for the same project.
  const pattern = parts.reduce((joined, part, index) => `${joined}${index === 1 ? '(.+)' : '\\1'}${part}`);
  return new RegExp(`^${pattern}$`, 's').test(url);
}

export function urlKind(url: string): UrlKind {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== undefined) {
    if (scheme === 'ssh' || scheme === 'git+ssh' || scheme === 'ssh+git') return 'ssh';
    if (scheme === 'http' || scheme === 'https') return 'http';
    if (scheme === 'git') return 'git';
    if (scheme === 'file') return 'file';
    return 'other';
  }
  // git's rule: a colon before any slash makes `host:path` scp-like syntax.
  const colon = url.indexOf(':');
  const slash = url.indexOf('/');
  if (colon > 0 && (slash < 0 || colon < slash)) return 'scp';
  return 'path';
}

/**
 * A lone surrogate (possible in a task file's JSON) has no UTF-8 form, and
 * encodeURIComponent throws on it; it becomes U+FFFD, as Node writes it to argv and files.
 */
function encodePath(name: string): string {
  const wellFormed = name.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
  return wellFormed.split('/').map(encodeURIComponent).join('/');
}

/**
 * `https://user:secret@host/x` → `https://user:***@host/x`, for `config check`
 * output. Same rule as observe/redact.ts, kept here because config sits below
 * observe and must not import it.
 */
export function redactUrlCredentials(url: string): string {
  return url.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/@\s]*)@/, (_all, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return colon < 0 ? `${scheme}${userinfo}@` : `${scheme}${userinfo.slice(0, colon)}:***@`;
  });
}
