import { createCipheriv } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, initBare, refsOf, writeHook } from '../../support/git.js';
import { slowSsh } from '../../support/slow-transport.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { groupAlive, hermeticPusher, makeSource, pick, remoteConfig, waitForProcess } from './push-fixtures.js';

const tempDir = useTempDirs();
const MiB = 1024 * 1024;

/** Bytes that do not compress, the same on every run: AES-CTR over zeros with a fixed key. */
function incompressible(size: number): Buffer {
  const cipher = createCipheriv('aes-128-ctr', Buffer.alloc(16, 7), Buffer.alloc(16, 0));
  return Buffer.concat([cipher.update(Buffer.alloc(size)), cipher.final()]);
}

function setup() {
  const root = tempDir('refrelay-limits');
  const source = makeSource(root);
  const dst = initBare(join(root, 'dst.git'));
  return { root, source, dst };
}

/** A pre-receive hook that writes a line every 0.2 s for `seconds`, then accepts. */
function chattyHook(seconds: number): string {
  return `#!/bin/sh\ncat > /dev/null\ni=0\nwhile [ $i -lt ${seconds * 5} ]; do echo "checking $i"; sleep 0.2; i=$((i + 1)); done\nexit 0\n`;
}

// The idle limits below leave git at least a second of slack over its own cadence (a progress line
// about once a second while the pack moves, a hook line every 0.2 s), so a busy machine does not stop
// a push that is working; every push that must succeed runs for about three times its limit.
describe('GitPusher limits: remote.NAME.timeout is an idle limit, pushDeadline bounds the whole push', () => {
  it('lets a push whose pack crawls over a slow transport run for three times the timeout, since git reports progress', async () => {
    const { root, source, dst } = setup();
    writeFileSync(join(source.work, 'big.bin'), incompressible(9 * MiB));
    git(source.work, ['add', 'big.bin']);
    git(source.work, ['commit', '-q', '-m', 'big']);
    source.publish();
    // 1 MiB/s: the 9 MiB pack cannot arrive in less than 9 s.
    const ssh = slowSsh(join(root, 'slow'), MiB);
    const pusher = hermeticPusher({ GIT_SSH_COMMAND: ssh });
    const started = performance.now();
    const outcome = await pusher.push({
      remote: remoteConfig({ timeoutMs: 3000 }),
      uri: `ssh://slow.invalid${dst}`,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    const elapsed = performance.now() - started;

    expect(outcome.failure).toBeUndefined();
    expect(outcome.result).toBe('ok');
    expect(refsOf(dst)).toEqual(pick(source.refs(), ['refs/heads/main']));
    expect(elapsed).toBeGreaterThan(8000);
    // Asked for although nobody reads the lines: without it git prints no progress into a pipe.
    expect(outcome.argv).toContain('--progress');
  });

  it('lets a push run on while the destination keeps writing (a pre-receive hook talking for three times the timeout)', async () => {
    const { source, dst } = setup();
    writeHook(dst, 'pre-receive', chattyHook(6));
    const started = performance.now();
    const outcome = await hermeticPusher().push({
      remote: remoteConfig({ timeoutMs: 2000 }),
      uri: `file://${dst}`,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });

    expect(outcome.failure).toBeUndefined();
    expect(outcome.result).toBe('ok');
    expect(refsOf(dst)).toEqual(pick(source.refs(), ['refs/heads/main']));
    expect(performance.now() - started).toBeGreaterThan(6000);
  });

  it('stops a destination that goes silent after the timeout, as a retryable failure, and kills everything git started', async () => {
    const { dst, source } = setup();
    writeHook(dst, 'pre-receive', '#!/bin/sh\nsleep 600\n');
    const started = performance.now();
    const pending = hermeticPusher().push({
      remote: remoteConfig({ name: 'quiet', timeoutMs: 2000 }),
      uri: `file://${dst}`,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    const pushing = await waitForProcess((p) => p.args.startsWith('git push --porcelain') && p.args.includes(dst));
    await waitForProcess((p) => p.pgid === pushing.pgid && /^sleep 600/.test(p.args));
    const outcome = await pending;
    const elapsed = performance.now() - started;

    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'timeout', retryable: true } });
    expect(outcome.failure?.message).toBe('no progress for 2 s (remote.quiet.timeout); git and the processes it started (ssh) were stopped');
    expect(elapsed).toBeGreaterThanOrEqual(2000);
    expect(elapsed).toBeLessThan(10_000);
    expect(groupAlive(pushing.pgid)).toBe(false);
    expect(refsOf(dst).size).toBe(0);
  });

  it('stops a push at pushDeadline even while it makes progress, naming that key', async () => {
    const { dst, source } = setup();
    writeHook(dst, 'pre-receive', chattyHook(600));
    const started = performance.now();
    const pending = hermeticPusher().push({
      remote: remoteConfig({ name: 'slow', timeoutMs: 2000, pushDeadlineMs: 3000 }),
      uri: `file://${dst}`,
      localRepo: source.bare,
      refs: ['refs/heads/main'],
    });
    const pushing = await waitForProcess((p) => p.args.startsWith('git push --porcelain') && p.args.includes(dst));
    const outcome = await pending;
    const elapsed = performance.now() - started;

    expect(outcome).toMatchObject({ result: 'failed', failure: { kind: 'timeout', retryable: true } });
    expect(outcome.failure?.message).toBe('push did not finish within 3 s (remote.slow.pushDeadline); git and the processes it started (ssh) were stopped');
    expect(outcome.failure?.stderrTail).toMatch(/remote: checking \d+/);
    expect(elapsed).toBeGreaterThanOrEqual(3000);
    expect(groupAlive(pushing.pgid)).toBe(false);
    expect(refsOf(dst).size).toBe(0);
  });
});
