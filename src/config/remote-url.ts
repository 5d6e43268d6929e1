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
      return basenameOnly(project);
  }
}

/**
 * Gerrit's `basenameOnly` is Guava's `Files.getNameWithoutExtension`: the last path segment, cut
 * at its LAST dot (`plugins/foo.bar` → `foo`, `x/v1.2-release` → `v1`, `a/b.c.d` → `b.c`). A
 * segment made only of leading dots and a suffix (`.b`, `..b`, `...b`) would come out empty, as `.`
 * or as `..`, a name that addresses the destination folder or its parent instead of a repository
 * in it; such a segment is kept whole.
 */
function basenameOnly(project: string): string {
  const segment = project.slice(project.lastIndexOf('/') + 1);
  const dot = segment.lastIndexOf('.');
  const name = dot < 0 ? segment : segment.slice(0, dot);
  return name === '' || name === '.' || name === '..' ? segment : name;
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
  // Gerrit (ReplicationConfigImpl.replaceName) replaces the first `${name}` only; a later one stays as written.
  return template.replace(NAME_VARIABLE, () => name);
}

/**
 * Whether `url` is what `template` expands to for some project, whatever the name style and
 * encoding: for telling which remote a bare URI (a retry state file) belongs to.
 */
export function urlFitsTemplate(template: string, url: string): boolean {
  const at = template.indexOf(NAME_VARIABLE);
  if (at < 0) return url === template;
  // Only the first `${name}` stands for the project (see expandUrl); the rest of the template is literal.
  const before = template.slice(0, at);
  const after = template.slice(at + NAME_VARIABLE.length);
  return url.length > before.length + after.length && url.startsWith(before) && url.endsWith(after);
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
