/** Small readers of git's text output, and the progress sink guard, kept apart from the push orchestration. */
import { redactText } from '../runtime/redact.js';

/** A line of GIT_TRACE_CURL: `12:34:56.789012 http.c:664 <= Recv header: …`. */
export const CURL_TRACE_LINE = /^\d{2}:\d{2}:\d{2}\.\d+ \S+:\d+\s/;

/** Retry-After as seconds or an HTTP date; undefined when it is neither. */
export function parseRetryAfter(value: string, now = Date.now()): number | undefined {
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** git's own stderr without curl's trace lines, and the Retry-After the server sent, if any. */
export function withoutCurlTrace(stderr: string): { stderr: string; retryAfterMs?: number } {
  const kept: string[] = [];
  let retryAfterMs: number | undefined;
  for (const line of stderr.split('\n')) {
    if (!CURL_TRACE_LINE.test(line)) {
      kept.push(line);
      continue;
    }
    const retryAfter = /Recv header: Retry-After:\s*(.+?)\s*$/i.exec(line)?.[1];
    if (retryAfter !== undefined) retryAfterMs = parseRetryAfter(retryAfter) ?? retryAfterMs;
  }
  return { stderr: kept.join('\n'), ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

/** A throwing progress sink is the caller's bug; it must not take the push (or the process) down. */
export function reportProgress(sink: (line: string) => void, line: string): void {
  try {
    sink(redactText(line));
  } catch {
    // ignored on purpose
  }
}

/** git's own reason for a failure: its first `fatal:` line (what follows is advice), else its last line. */
export function gitReason(stderr: string): string {
  const lines = stderr.trim().split('\n').filter(Boolean);
  return lines.find((line) => line.startsWith('fatal: ')) ?? lines.at(-1) ?? '';
}

/** `<oid><separator><ref>` lines (for-each-ref, ls-remote) as ref → object id. */
export function parseRefLines(stdout: string, separator: string): Map<string, string> {
  const refs = new Map<string, string>();
  for (const line of stdout.split('\n')) {
    const at = line.indexOf(separator);
    if (at > 0) refs.set(line.slice(at + 1).trim(), line.slice(0, at));
  }
  return refs;
}
