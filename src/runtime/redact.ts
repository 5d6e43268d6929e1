/**
 * Remove credentials from a URL before it reaches a log line, an error, status output or a metric:
 * `https://user:secret@host/x` → `https://user:***@host/x`. scp-like and path URLs carry no password.
 */
export function redactUrl(url: string): string {
  return url.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/@\s]*)@/, (_all, scheme: string, userinfo: string) => {
    const colon = userinfo.indexOf(':');
    return colon < 0 ? `${scheme}${userinfo}@` : `${scheme}${userinfo.slice(0, colon)}:***@`;
  });
}

/**
 * Redact every URL-looking credential inside free text (git stderr, error messages).
 * The user name may be empty: `https://:token@host` carries a token all the same.
 */
export function redactText(text: string): string {
  return text.replace(/([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/@\s:]*):([^/@\s]*)@/g, '$1$2:***@');
}
