/** An http(s) URL's user name with no password is a token on many hosts (`https://ghp_…@github.com/…`). */
const HTTP_SCHEME = /^https?:\/\/$/i;

/** Values of an http(s) URL's query: `?access_token=…` is a credential as much as a password. */
function withoutQueryValues(url: string): string {
  return url.replace(/^(https?:\/\/[^?#\s]*\?)([^#\s]*)/i, (_all, head: string, query: string) => `${head}${query.replace(/=[^&]*/g, '=***')}`);
}

function redactUserinfo(scheme: string, userinfo: string): string {
  const colon = userinfo.indexOf(':');
  if (colon >= 0) return `${scheme}${userinfo.slice(0, colon)}:***@`;
  return HTTP_SCHEME.test(scheme) ? `${scheme}***@` : `${scheme}${userinfo}@`;
}

/**
 * Remove credentials from a URL before it reaches a log line, an error, status output or a metric:
 * `https://user:secret@host/x` → `https://user:***@host/x`, an http user name alone (a token) →
 * `***`, http query values → `***`. scp-like and path URLs carry no password; an ssh user is no secret.
 */
export function redactUrl(url: string): string {
  const redacted = url.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/@\s]*)@/, (_all, scheme: string, userinfo: string) => redactUserinfo(scheme, userinfo));
  return withoutQueryValues(redacted);
}

/**
 * Redact every URL-looking credential inside free text (git stderr, error messages), as redactUrl
 * does. The user name may be empty: `https://:token@host` carries a token all the same.
 */
export function redactText(text: string): string {
  return text
    .replace(/([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^/@\s'"]*)@/g, (_all, scheme: string, userinfo: string) => redactUserinfo(scheme, userinfo))
    .replace(/https?:\/\/[^\s'"]*/gi, withoutQueryValues);
}
