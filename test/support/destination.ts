import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { initBare, writeHook } from './git.js';

/**
 * A bare destination repository that records every push it receives (post-receive) and any
 * push that overlaps another one to the same repository (pre-receive marker folder).
 */
export function makeRecordingDestination(path: string, options: { sleepSeconds?: number } = {}): string {
  initBare(path);
  const sleep = options.sleepSeconds ?? 0;
  writeHook(
    path,
    'pre-receive',
    [
      '#!/bin/sh',
      'if mkdir "$GIT_DIR/push-in-progress" 2>/dev/null; then mine=1; else mine=0; echo overlap >> "$GIT_DIR/overlaps.log"; fi',
      sleep > 0 ? `sleep ${sleep}` : ':',
      'cat > /dev/null',
      '[ "$mine" = 1 ] && rmdir "$GIT_DIR/push-in-progress"',
      'exit 0',
      '',
    ].join('\n'),
  );
  writeHook(path, 'post-receive', '#!/bin/sh\nrefs=$(wc -l)\necho "push $refs" >> "$GIT_DIR/pushes.log"\n');
  return path;
}

/** How many pushes reached this destination (one line per push in pushes.log). */
export function pushesReceived(path: string): number {
  const log = join(path, 'pushes.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
}

export function overlapsSeen(path: string): number {
  const log = join(path, 'overlaps.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).length : 0;
}
