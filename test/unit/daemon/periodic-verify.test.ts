import { lutimesSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { PeriodicVerify } from '../../../src/daemon/periodic-verify.js';
import { readVerify } from '../../../src/observe/verify-summary.js';
import { FakeClock, SeededRandom } from '../../support/fake-clock.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

const HOUR = 3_600_000;

/** A store's verify/ folder and a periodic verify over no projects: a run writes a summary of 0 destinations. */
function setUp() {
  const root = tempDir('refrelay-verify');
  const verifyDir = join(root, 'store', 'verify');
  mkdirSync(verifyDir, { recursive: true });
  mkdirSync(join(root, 'repos'));
  const file = join(root, 'replication.config');
  writeFileSync(file, `[replication]\n\tstorePath = ${join(root, 'store')}\n\tbasePath = ${join(root, 'repos')}\n\tverifyInterval = 1h\n`);
  const config = loadConfig({ file, hostname: 'node-a' });
  const clock = new FakeClock();
  const lines: string[] = [];
  const log = {
    debug: () => undefined,
    info: (_: unknown, message: string) => lines.push(message),
    warn: (_: unknown, message: string) => lines.push(message),
    error: () => undefined,
  };
  const verify = new PeriodicVerify(
    verifyDir,
    () => config,
    clock,
    new SeededRandom(),
    log,
    () => 0,
  );
  const summary = () => JSON.parse(readFileSync(join(verifyDir, 'last.json'), 'utf8')) as { finishedAt: number; nodeId: string };
  return { verifyDir, clock, lines, verify, summary };
}

describe('periodic verify: the store summary it reads is untrusted', () => {
  it('runs when the last summary claims to finish further ahead than an interval, and replaces it', async () => {
    const { verifyDir, clock, lines, verify, summary } = setUp();
    writeFileSync(join(verifyDir, 'last.json'), JSON.stringify({ finishedAt: 9e15, nodeId: 'forged' }));
    await verify.runIfDue();
    expect(lines).toContain('periodic verify finished');
    expect(summary()).toMatchObject({ finishedAt: clock.now(), nodeId: 'node-a' });
  });

  it('does not run again within the interval of a real summary', async () => {
    const { clock, lines, verify } = setUp();
    await verify.runIfDue();
    clock.advance(HOUR - 1);
    await verify.runIfDue();
    expect(lines.filter((line) => line === 'periodic verify finished')).toHaveLength(1);
  });

  // The lock's own time (lutimes): a dangling link has no target to stat.
  it.each([
    ['a symlink planted as its run lock, old: judged as itself, never followed', (lock: string) => symlinkSync(join(lock, '..', 'nowhere'), lock), -1],
    ['a run lock whose time is further ahead than two intervals: a forged time does not hold verify off', (lock: string) => mkdirSync(lock), 1],
  ] as const)('breaks %s', async (_, plant, direction) => {
    const { verifyDir, clock, lines, verify } = setUp();
    const lock = join(verifyDir, 'run.lock');
    plant(lock);
    const at = (clock.now() + direction * (2 * HOUR + 1)) / 1000;
    lutimesSync(lock, at, at);
    await verify.runIfDue();
    expect(lines).toContain('breaking an abandoned verify lock');
    await verify.runIfDue();
    expect(lines).toContain('periodic verify finished');
  });

  it('status shows only checked fields of a hostile summary', async () => {
    const { verifyDir, clock } = setUp();
    const problem = { remote: 'dr', uri: 'ssh://bot:secret@h/p.git', state: 'drift', missing: 2, different: 'x', extra: -1 };
    writeFileSync(
      join(verifyDir, 'last.json'),
      `{"finishedAt": ${clock.now() - 5000}, "drifted": "3", "destinations": 4, "byRemote": {"dr": {"drifted": "…"}, "x": null, "__proto__": {"drifted": 1}}, "problems": [null, ${JSON.stringify(problem)}, {"remote": 1}]}`,
    );
    const shown = await readVerify(verifyDir, clock.now());
    expect(shown).toEqual({
      nodeId: 'unknown',
      finishedAgeMs: 5000,
      destinations: 4,
      drifted: 0,
      unreachable: 0,
      byRemote: JSON.parse('{"dr": {"destinations": 0, "drifted": 0, "unreachable": 0}, "__proto__": {"destinations": 0, "drifted": 1, "unreachable": 0}}'),
      problems: [{ remote: 'dr', uri: 'ssh://bot:***@h/p.git', state: 'drift', missing: 2, different: 0, extra: 0 }],
    });
    expect(Object.getPrototypeOf(shown!.byRemote)).toBe(Object.prototype);
  });
});
