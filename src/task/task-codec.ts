import { TaskFormatError } from '../errors.js';
import { canonicalTask, type Task } from './task-model.js';

/** The format this code writes; files with a higher version are refused, not guessed at. */
export const TASK_FORMAT_VERSION = 1;

/**
 * The exact bytes of a task file. The key order is fixed because the key is the hash
 * of these bytes, and every node must produce the same ones for the same task.
 */
export function encodeTask(task: Task): string {
  const t = canonicalTask(task);
  // Refuse to write what no reader would accept: it would only end up in corrupt/.
  checkString(t.project, 'project');
  checkRefs(t.refs, 'refs');
  checkString(t.uri, 'uri');
  checkString(t.remote, 'remote');
  return `${JSON.stringify({ version: TASK_FORMAT_VERSION, project: t.project, refs: t.refs, uri: t.uri, remote: t.remote })}\n`;
}

/**
 * Reads a task file written by any refrelay version up to ours, or by Gerrit's
 * replication plugin (no version, possibly the legacy single `ref`). Unknown fields
 * are ignored so that a rolling upgrade adding a field does not strand tasks.
 * Every refusal says precisely what is wrong, because it ends up in a quarantine record.
 */
export function decodeTask(text: string): Task {
  if (text.trim() === '') throw new TaskFormatError('empty file');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // V8's message quotes the text around the error: a quarantine reason or a log line must
    // never carry a file's content (it may be anything a symlink or a person put there).
    const at = /at position (\d+)/.exec(error instanceof Error ? error.message : '')?.[1];
    throw new TaskFormatError(`invalid JSON (truncated or damaged)${at === undefined ? '' : ` at byte ${at}`}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TaskFormatError(`expected a JSON object, got ${describe(value)}`);
  }
  const record = value as Record<string, unknown>;
  // The version comes first: a newer format may have changed what the other fields mean.
  checkVersion(record.version);
  const project = checkString(record.project, 'project');
  const refs = readRefs(record);
  const uri = checkString(record.uri, 'uri');
  const remote = checkString(record.remote, 'remote');
  return canonicalTask({ project, refs, uri, remote });
}

function checkVersion(version: unknown): void {
  if (version === undefined) return; // Gerrit's unversioned form.
  if (typeof version !== 'number' || !Number.isInteger(version) || version < 1) {
    throw new TaskFormatError(`field "version" must be a positive integer, got ${describe(version)}`);
  }
  if (version > TASK_FORMAT_VERSION) {
    throw new TaskFormatError(`written by a newer refrelay (version ${version}); this node reads up to version ${TASK_FORMAT_VERSION}`);
  }
}

function readRefs(record: Record<string, unknown>): readonly string[] {
  if (record.refs !== undefined) return checkRefs(record.refs, 'refs');
  if (record.ref !== undefined) return [checkString(record.ref, 'ref')]; // Gerrit before 2022.
  throw new TaskFormatError('missing field "refs"');
}

function checkString(value: unknown, field: string): string {
  if (value === undefined) throw new TaskFormatError(`missing field "${field}"`);
  if (typeof value !== 'string' || value === '') {
    throw new TaskFormatError(`field "${field}" must be a non-empty string, got ${describe(value)}`);
  }
  return value;
}

function checkRefs(value: unknown, field: string): readonly string[] {
  if (value === undefined) throw new TaskFormatError(`missing field "${field}"`);
  if (!Array.isArray(value) || value.length === 0) {
    throw new TaskFormatError(`field "${field}" must be a non-empty array of strings, got ${describe(value)}`);
  }
  value.forEach((ref: unknown, i) => {
    if (typeof ref !== 'string' || ref === '') {
      throw new TaskFormatError(`field "${field}" must be a non-empty array of strings, but ${field}[${i}] is ${describe(ref)}`);
    }
  });
  return value as string[];
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  if (value === '') return 'an empty string';
  return typeof value;
}
