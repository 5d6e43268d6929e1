import { createHash } from 'node:crypto';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A task as Gerrit's replication plugin keeps it; `uri` is JGit's toASCIIString of the destination. */
export interface GerritTask {
  readonly project: string;
  readonly refs: readonly string[];
  readonly uri: string;
  readonly remote: string;
}

/** Whole seconds, so every filesystem keeps them exactly. */
export const GERRIT_MTIME = new Date('2026-03-01T10:00:00Z');

/**
 * The file text as the plugin writes it: Gson's `toJson` (keys in this order, `<>&='` escaped as
 * `\u00xx` since Gson is HTML-safe by default, other characters as UTF-8) and a newline.
 */
export function gerritJson(task: GerritTask): string {
  const json = JSON.stringify({ project: task.project, refs: task.refs, uri: task.uri, remote: task.remote });
  return `${json.replace(/[<>&='\u2028\u2029]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`;
}

/** The file name the plugin gives a task: sha1 of project, the ref set as Java prints it, uri and remote (ReplicateRefUpdate.sha1). */
export function gerritTaskName(task: GerritTask): string {
  return createHash('sha1')
    .update(`${task.project}\n[${task.refs.join(', ')}]\n${task.uri}\n${task.remote}`, 'utf8')
    .digest('hex');
}

/** The plugin's folders under its events directory, as it creates them. */
export function gerritEventsDir(eventsDirectory: string): { refUpdates: string; waiting: string; running: string; building: string } {
  const refUpdates = join(eventsDirectory, 'ref-updates');
  const folders = { refUpdates, waiting: join(refUpdates, 'waiting'), running: join(refUpdates, 'running'), building: join(refUpdates, 'building') };
  for (const folder of [folders.building, folders.running, folders.waiting]) mkdirSync(folder, { recursive: true });
  return folders;
}

/** Writes a task file into `folder` (waiting/ or running/) as the plugin does; returns its path. */
export function writeGerritTask(folder: string, task: GerritTask, mtime = GERRIT_MTIME): string {
  const path = join(folder, gerritTaskName(task));
  writeFileSync(path, gerritJson(task));
  utimesSync(path, mtime, mtime);
  return path;
}
