import { join } from 'node:path';
import { readBoundedText, STORE_REPORT_MAX_BYTES } from '../runtime/bounded-read.js';
import { asJsonObject as record, parseJsonObject } from '../runtime/json-object.js';
import { redactUrl } from '../runtime/redact.js';

/** The writer keeps the first 50 problems (daemon/periodic-verify.ts); a longer list is cut. */
const PROBLEMS_KEPT = 50;
/** Remotes shown, each a label of `/metrics`: more than any configuration has. */
const REMOTES_KEPT = 256;

interface VerifyCounts {
  destinations: number;
  drifted: number;
  unreachable: number;
}

export interface VerifyStatus extends VerifyCounts {
  nodeId: string;
  finishedAgeMs: number;
  byRemote: Record<string, VerifyCounts>;
  problems: Array<{ remote: string; uri: string; state: string; missing: number; different: number; extra: number; error?: string }>;
}

/** `verify/last.json` with only its checked fields: any node, tool or person may have written it. */
export type VerifySummaryRead = Omit<VerifyStatus, 'finishedAgeMs'> & { finishedAt: number };

const count = (value: unknown): number => (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : 0);
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function counts(value: Record<string, unknown>): VerifyCounts {
  return { destinations: count(value.destinations), drifted: count(value.drifted), unreachable: count(value.unreachable) };
}

function problem(value: unknown): VerifyStatus['problems'][number] | undefined {
  const fields = record(value);
  const [remote, uri, state] = [text(fields?.remote), text(fields?.uri), text(fields?.state)];
  if (fields === undefined || remote === undefined || uri === undefined || state === undefined) return undefined;
  const error = text(fields.error);
  const found = { missing: count(fields.missing), different: count(fields.different), extra: count(fields.extra) };
  return { remote, uri: redactUrl(uri), state, ...(error === undefined ? {} : { error }), ...found };
}

/** The last periodic verify's summary; undefined when it is missing, unreadable or has no finish time. */
export async function readVerifySummary(verifyDir: string): Promise<VerifySummaryRead | undefined> {
  const fields = parseJsonObject(await readBoundedText(join(verifyDir, 'last.json'), STORE_REPORT_MAX_BYTES).catch(() => ''));
  if (fields === undefined || typeof fields.finishedAt !== 'number' || !Number.isFinite(fields.finishedAt)) return undefined;
  const byRemote = Object.entries(record(fields.byRemote) ?? {})
    .slice(0, REMOTES_KEPT)
    .flatMap(([remote, value]) => {
      const entry = record(value);
      return entry === undefined ? [] : [[remote, counts(entry)] as const];
    });
  const problems = Array.isArray(fields.problems) ? fields.problems.slice(0, PROBLEMS_KEPT).map(problem) : [];
  return {
    nodeId: text(fields.nodeId) ?? 'unknown',
    finishedAt: fields.finishedAt,
    ...counts(fields),
    // fromEntries: a remote named `__proto__` is a key like any other.
    byRemote: Object.fromEntries(byRemote),
    problems: problems.filter((entry) => entry !== undefined),
  };
}

/** `verify/last.json` as `status` shows it; null when there is none to show. */
export async function readVerify(verifyDir: string, storeNow: number): Promise<VerifyStatus | null> {
  const summary = await readVerifySummary(verifyDir);
  if (summary === undefined) return null;
  const { finishedAt, ...shown } = summary;
  return { ...shown, finishedAgeMs: Math.max(0, storeNow - finishedAt) };
}
