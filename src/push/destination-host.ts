/**
 * The host (and port) a destination URL talks to; local paths and `file://` are all "local".
 * Credentials in the URL never reach the key.
 */
export function hostOf(uri: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(uri);
  if (scheme !== null) {
    if (scheme[1]!.toLowerCase() === 'file') return 'local';
    try {
      const url = new URL(uri);
      return `${scheme[1]!.toLowerCase()}://${url.host.toLowerCase()}`;
    } catch {
      const authority = uri.slice(scheme[0].length).split('/')[0]!;
      return `${scheme[1]!.toLowerCase()}://${authority.slice(authority.lastIndexOf('@') + 1).toLowerCase()}`;
    }
  }
  // scp-like `[user@]host:path` (a ':' before any '/'), as git reads it.
  const colon = uri.indexOf(':');
  const slash = uri.indexOf('/');
  if (colon > 0 && (slash < 0 || colon < slash)) return `ssh://${uri.slice(0, colon).replace(/^.*@/, '').toLowerCase()}`;
  return 'local';
}
