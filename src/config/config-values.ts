import { resolve } from 'node:path';
import { lastValue, type Reporter, type SectionValues } from './collect-sections.js';
import { parseDuration, type BareDurationUnit } from './duration.js';

/** Parse result of one setting: the value, or the message to report for its key. */
export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = <T>(message: string): Parsed<T> => ({ ok: false, message });

/** git's boolean spellings; an empty value (`key =`) is false, as in git. */
export function parseBoolean(text: string): Parsed<boolean> {
  const lower = text.trim().toLowerCase();
  if (['true', 'yes', 'on', '1'].includes(lower)) return ok(true);
  if (['false', 'no', 'off', '0', ''].includes(lower)) return ok(false);
  return bad(`expected true or false (also yes/no, on/off, 1/0), got "${text}"`);
}

export function parseWholeNumber(text: string, min: number): Parsed<number> {
  const trimmed = text.trim();
  const value = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || !Number.isSafeInteger(value) || value < min) {
    return bad(`expected a whole number ≥ ${min}, got "${text}"`);
  }
  return ok(value);
}

/** A fair-share weight: 1–1000, as CouchDB's replicator shares. */
export function parseShares(text: string): Parsed<number> {
  const trimmed = text.trim();
  const value = Number(trimmed);
  if (!/^\d+$/.test(trimmed) || value < 1 || value > 1000) return bad(`expected a whole number from 1 to 1000, got "${text}"`);
  return ok(value);
}

export function parseDurationValue(text: string, bareUnit: BareDurationUnit, positive = false): Parsed<number> {
  const result = parseDuration(text, bareUnit);
  if (typeof result === 'string') return bad(result);
  if (positive && result === 0) return bad(`expected a duration greater than 0, got "${text}"`);
  return ok(result);
}

/** What a node id may be: it names the node's record file in nodes/. */
export const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** nodeId goes into file names under nodes/ and into temp names, so it must be a safe file name. */
export function parseNodeId(text: string): Parsed<string> {
  if (NODE_ID.test(text)) return ok(text);
  return bad(`expected letters, digits, ".", "_" or "-", starting with a letter or digit, got "${text}"`);
}

/** `host:port` (IPv6 in brackets) with port 0-65535, or `off`. */
export function parseHttpListen(text: string): Parsed<string> {
  const trimmed = text.trim();
  if (trimmed.toLowerCase() === 'off') return ok('off');
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):(\d{1,5})$/.exec(trimmed);
  if (match && Number(match[2]) <= 65535) return ok(trimmed);
  return bad(`expected host:port (port 0-65535) or off, got "${text}"`);
}

export function parsePath(text: string): Parsed<string> {
  if (text.trim() === '') return bad('expected a path, got ""');
  return ok(text);
}

/** A path setting; relative paths follow `dir` (the config file's folder), not the cwd of whoever started the node or hook. */
export function pathRelativeTo(dir: string): (text: string) => Parsed<string> {
  return (text) => {
    const parsed = parsePath(text);
    return parsed.ok ? ok(resolve(dir, parsed.value)) : parsed;
  };
}

/**
 * Reads a single-valued setting (last value wins), reporting a bad value under
 * `fullKey` and falling back to the default so validation can go on.
 */
export function readSetting<T>(values: SectionValues, key: string, fullKey: string, parse: (text: string) => Parsed<T>, fallback: T, report: Reporter): T {
  const text = lastValue(values, key);
  if (text === undefined) return fallback;
  const parsed = parse(text);
  if (parsed.ok) return parsed.value;
  report.problem(fullKey, parsed.message);
  return fallback;
}

/** `{ key: value }`, or nothing when the value is unset: optional config fields stay absent. */
export function optional<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
