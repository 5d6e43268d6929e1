/** A `replication.webhookUrl` value: an http(s) URL, or why not. */
export function webhookUrlProblem(text: string): string | undefined {
  try {
    const { protocol } = new URL(text);
    return protocol === 'http:' || protocol === 'https:' ? undefined : `expected an http:// or https:// URL, got a ${protocol} URL`;
  } catch {
    return 'expected an http:// or https:// URL';
  }
}

/**
 * A webhook receiver as `config check`, logs and metrics name it: scheme, host and path. A user,
 * password or query (where receivers often carry a token) is never shown.
 */
export function webhookReceiverName(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'an unparsable URL';
  }
}
