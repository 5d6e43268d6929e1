import { createHash } from 'node:crypto';
import { encodeTask } from './task-codec.js';
import type { Task } from './task-model.js';

/** File name stem of a task: equal tasks from any node collide on purpose (dedup by `link`). */
export function taskKey(task: Task): string {
  return sha1Hex(encodeTask(task));
}

/** Names the URI lock and the per-URI state, whatever characters the URI holds. */
export function uriKey(uri: string): string {
  return sha1Hex(uri);
}

function sha1Hex(text: string): string {
  return createHash('sha1').update(text, 'utf8').digest('hex');
}
