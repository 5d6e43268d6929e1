import { redactText } from '../runtime/redact.js';
import { FAILURE_POLICY, type FailureKind } from './failure-policy.js';
import type { PushFailure } from './push-types.js';

/** `message`: one redacted line, the stderr line that decided the class or the best summary git gave. */
export type FailureClass = { readonly kind: FailureKind; readonly message: string };

interface Rule {
  readonly kind: 'transient' | 'missing-repository' | 'auth' | 'permanent';
  readonly pattern: RegExp;
}

/**
 * Checked in this order, first hit wins: auth and missing-repository come
 * before transient because their messages are often followed by a generic
 * "remote end hung up" that would otherwise win.
 */
const RULES: readonly Rule[] = [
  { kind: 'auth', pattern: /Permission denied \((publickey|password|keyboard-interactive)|Authentication failed|HTTP Basic: Access denied/i },
  { kind: 'auth', pattern: /could not read (Username|Password) for|Host key verification failed|\bDENIED by\b/i },
  { kind: 'missing-repository', pattern: /does not appear to be a git repository|no such repository|Repository not found|Project not found/i },
  { kind: 'missing-repository', pattern: /repository '[^']*' not found|access denied or repository not exported/i },
  { kind: 'transient', pattern: /Connection (refused|reset|closed by)|timed out|kex_exchange_identification|Network is unreachable|No route to host/i },
  { kind: 'transient', pattern: /Could not resolve host|unable to look up|Temporary failure in name resolution/i },
  { kind: 'transient', pattern: /remote end hung up|early EOF|unexpected disconnect|RPC failed|failed to lock|cannot lock ref|failed to update ref/i },
  // receive-pack's answer when the repository was deleted while the pack came in: gone now, maybe back (or created) later.
  { kind: 'transient', pattern: /unable to migrate objects to permanent storage/i },
  { kind: 'permanent', pattern: /transport '[^']*' not allowed|unable to find remote helper|remote-\S+' is not a git command|src refspec .* does not match/i },
  // Last: the server closed without a word. Auth and missing-repository messages end with it too, so they must win first.
  { kind: 'transient', pattern: /Could not read from remote repository/i },
];

// curl's wording (`returned error: 503`), and git's own in `RPC failed` lines, old (`HTTP code = 502`) and new (`HTTP 500`).
const HTTP_STATUS = /(?:returned error: |RPC failed; HTTP |HTTP code = )(\d{3})/i;

/** A transient failure whose deciding line says the host could not be reached at all (for the per-host circuit breaker). */
const CONNECTION_LEVEL =
  /Connection (refused|reset|closed by)|Connection timed out|connect(ion)? to host .* timed out|Network is unreachable|No route to host|Could not resolve host|unable to look up|Temporary failure in name resolution|unable to connect to/i;

/**
 * The destination is up but refuses more work for now: HTTP 429 or 503 from smart-http, or an
 * ssh connection dropped during key exchange (how sshd's MaxStartups turns connections away).
 */
export function isOverload(stderr: string): boolean {
  return /(?:returned error: |RPC failed; HTTP |HTTP code = )(?:429|503)\b|kex_exchange_identification/i.test(stderr);
}

export function classifyPushFailure(exitCode: number | null, stderr: string): FailureClass {
  const found = coarseClass(exitCode, stderr);
  if (found.kind !== 'transient') return found;
  if (isOverload(stderr)) return { ...found, kind: 'overloaded' };
  return CONNECTION_LEVEL.test(found.message) ? { ...found, kind: 'unreachable' } : found;
}

function coarseClass(exitCode: number | null, stderr: string): FailureClass {
  const lines = stderr
    .split(/\r?\n|\r/)
    .map((line) => line.trim())
    .filter((line) => line !== '');
  const http = httpClass(lines);
  if (http !== undefined) return http;
  for (const rule of RULES) {
    const line = lines.find((l) => rule.pattern.test(l));
    if (line !== undefined) return { kind: rule.kind, message: oneLine(line) };
  }
  return { kind: 'permanent', message: oneLine(summaryLine(lines) ?? `git exited with code ${exitCode ?? 'none'} and printed no error`) };
}

/** curl's status code is more precise than any wording around it. */
function httpClass(lines: readonly string[]): FailureClass | undefined {
  for (const line of lines) {
    const status = Number(HTTP_STATUS.exec(line)?.[1]);
    if (!Number.isInteger(status)) continue;
    const message = oneLine(line);
    if (status === 401 || status === 403) return { kind: 'auth', message };
    if (status === 404) return { kind: 'missing-repository', message };
    if (status === 429 || (status >= 500 && status <= 599)) return { kind: 'transient', message };
    return { kind: 'permanent', message };
  }
  return undefined;
}

/** The first `fatal:` line, else the first `error:` line, else the last line. */
function summaryLine(lines: readonly string[]): string | undefined {
  return lines.find((l) => l.startsWith('fatal:')) ?? lines.find((l) => l.startsWith('error:')) ?? lines.at(-1);
}

const MAX_MESSAGE = 400;

/** Redacted, single line, bounded: safe for a log line, a status page and a task file. */
export function oneLine(text: string): string {
  const flat = redactText(text).replace(/\s+/g, ' ').trim();
  return flat.length > MAX_MESSAGE ? `${flat.slice(0, MAX_MESSAGE - 1)}…` : flat;
}

const STDERR_TAIL_LINES = 20;

/** The last lines of stderr as a person would see them: progress redraws (\r) collapsed, redacted. */
export function stderrTail(stderr: string, lines = STDERR_TAIL_LINES): string {
  const visible = stderr
    .split('\n')
    .map(
      (line) =>
        line
          .split('\r')
          .filter((part) => part.trim() !== '')
          .at(-1) ?? '',
    )
    .map((line) => line.trimEnd())
    .filter((line) => line !== '');
  return redactText(visible.slice(-lines).join('\n'));
}

/** A push failure as the pusher reports it: one line, with the signal that ended git if one did. */
export function pushFailure(kind: FailureKind, message: string, stderrTail: string, exitSignal?: string): PushFailure {
  const text = exitSignal === undefined ? message : `${message} (git ended by ${exitSignal})`;
  return { kind, message: oneLine(text), stderrTail, retryable: FAILURE_POLICY[kind].retryable };
}
