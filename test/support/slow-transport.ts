import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const TICK_MS = 100;

/**
 * Copies stdin to stdout at `bytes per tick`, holding at most one tick's worth: once git has
 * written its last byte, the destination has it within about a tick (plus the pipes), so the
 * transfer ends when git's progress says it does.
 */
const THROTTLE = `
const perTick = Number(process.argv[2]);
const queue = [];
let queued = 0;
let ended = false;
process.stdin.on('data', (chunk) => {
  queue.push(chunk);
  queued += chunk.length;
  if (queued >= perTick) process.stdin.pause();
});
process.stdin.on('end', () => { ended = true; });
const timer = setInterval(() => {
  let budget = perTick;
  while (budget > 0 && queue.length > 0) {
    const chunk = queue[0];
    const part = chunk.subarray(0, budget);
    process.stdout.write(part);
    budget -= part.length;
    queued -= part.length;
    if (part.length === chunk.length) queue.shift();
    else queue[0] = chunk.subarray(part.length);
  }
  if (queued < perTick) process.stdin.resume();
  if (ended && queue.length === 0) {
    clearInterval(timer);
    process.stdout.end();
  }
}, ${TICK_MS});
`;

/**
 * A stand-in for ssh, for GIT_SSH_COMMAND: it runs the remote command (`git-receive-pack '<path>'`)
 * on this machine, with what git sends slowed to `bytesPerSecond`. git's real ssh transport code
 * runs, without sshd or root, and a push takes as long as its pack needs at that rate. The script
 * is called `ssh` so that git passes it OpenSSH's options; it ignores them, and the host.
 */
export function slowSsh(dir: string, bytesPerSecond: number): string {
  mkdirSync(dir, { recursive: true });
  const throttle = join(dir, 'throttle.mjs');
  writeFileSync(throttle, THROTTLE);
  const ssh = join(dir, 'ssh');
  const perTick = Math.max(1, Math.round((bytesPerSecond * TICK_MS) / 1000));
  writeFileSync(
    ssh,
    [
      '#!/bin/sh',
      '# The remote command is the last argument.',
      'for command; do :; done',
      `'${process.execPath}' '${throttle}' ${perTick} | sh -c "$command"`,
      '',
    ].join('\n'),
  );
  chmodSync(ssh, 0o755);
  return ssh;
}
