import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { overlapsSeen } from '../../support/destination.js';
import { storeDir } from '../../support/refrelay-node.js';
import { namesIn, waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { useCluster } from '../cluster/cluster-fixture.js';

/**
 * DESIGN.md invariant 8 against real daemons: what a person, another tool or an attacker can
 * leave in the shared store costs only itself. Each case ends with every real update delivered,
 * both nodes alive, the planted entries in corrupt/, and nothing outside the store touched or
 * echoed.
 */
const { cluster } = useCluster();
const tempDir = useTempDirs();
const SECRET = 'root:$6$never-in-any-output:19000:0:99999:7:::';
const taskName = (digit: string): string => `${digit.repeat(40)}.json`;

/** Reason records of corrupt/, as text. */
function corruptReasons(store: string): string {
  const dir = storeDir(store, 'corrupt');
  return namesIn(dir)
    .filter((name) => name.endsWith('.reason'))
    .map((name) => readFileSync(join(dir, name), 'utf8'))
    .join('\n');
}

function sparseFile(path: string, bytes: number): void {
  closeSync(openSync(path, 'w'));
  execFileSync('truncate', ['-s', String(bytes), path]);
}

describe('a store with entries refrelay never wrote', () => {
  it('a 3 GB sparse file, FIFOs in waiting/ and nodes/, a symlink to a secret: both nodes deliver, stay up, and echo nothing; status answers', async () => {
    const c = cluster({ label: 'refrelay-hostile-files' });
    await c.update('app', 'main');
    const outside = tempDir('refrelay-outside');
    const secretFile = join(outside, 'shadow');
    writeFileSync(secretFile, SECRET);
    const waiting = storeDir(c.store, 'waiting');
    sparseFile(join(waiting, taskName('1')), 3 * 1024 ** 3);
    execFileSync('mkfifo', [join(waiting, taskName('2'))]);
    symlinkSync(secretFile, join(waiting, taskName('3')));
    mkdirSync(join(c.store, 'nodes'), { recursive: true });
    execFileSync('mkfifo', [join(c.store, 'nodes', 'intruder.json')]);

    const a = c.start('node-a');
    const b = c.start('node-b');
    await c.waitDelivered();
    await waitUntil('every planted task-like entry moved to corrupt/', () => namesIn(waiting).length === 0);

    await c.update('app', 'later');
    await c.waitDelivered();
    // status reads every node's record: the FIFO there is moved aside unopened, not waited on.
    const status = runCli(['status', '--config', c.config]);
    expect(status.status, status.stderr).toBe(0);
    expect(status.stdout).toContain('node-a');
    expect(status.stdout).not.toContain('never-in-any-output');
    expect(namesIn(join(c.store, 'nodes')).filter((name) => name.endsWith('.json'))).toEqual(['node-a.json', 'node-b.json']);

    const reasons = corruptReasons(c.store);
    expect(reasons).toContain('3221225472 bytes, over the 1048576-byte limit');
    expect(reasons).toContain('a FIFO where a file is expected');
    expect(reasons).toContain('a symbolic link where a file is expected');
    for (const node of [a, b]) {
      expect(node.child.exitCode, node.nodeId).toBeNull();
      expect(node.problems(), node.nodeId).toEqual([]);
      expect(JSON.stringify(node.logs()) + node.stderr).not.toContain('never-in-any-output');
    }
    expect(reasons).not.toContain('never-in-any-output');
    expect(readFileSync(secretFile, 'utf8')).toBe(SECRET);
    expect(overlapsSeen(c.dest())).toBe(0);
  });

  it('a directory named owner.json in a lock and a lock folder that is a symlink: both URIs are taken over and delivered, no pass fails, the folder outside is intact', async () => {
    const c = cluster({ label: 'refrelay-hostile-locks', projects: ['app', 'lib'], lockStale: '1s' });
    await c.update('app', 'main');
    await c.update('lib', 'main');
    const running = storeDir(c.store, 'running');
    mkdirSync(join(running, c.lockName('app'), 'node-x.lease1', 'owner.json'), { recursive: true });
    const victim = tempDir('refrelay-victim');
    writeFileSync(join(victim, 'owner.json'), '{"nodeId":"x","leaseId":"y","counter":1}');
    writeFileSync(join(victim, taskName('4')), '{"project":"lib","refs":["refs/heads/victim"],"uri":"u","remote":"mirror"}');
    writeFileSync(join(victim, 'keep.tmp'), 'keep');
    mkdirSync(join(victim, 'node-y.lease2'));
    const victimBefore = readdirSync(victim).sort();
    symlinkSync(victim, join(running, c.lockName('lib')));

    const a = c.start('node-a');
    const b = c.start('node-b');
    await c.waitDelivered();

    expect(readdirSync(victim).sort()).toEqual(victimBefore);
    expect(readFileSync(join(victim, 'keep.tmp'), 'utf8')).toBe('keep');
    const reasons = corruptReasons(c.store);
    expect(reasons).toContain('a directory named \\"owner.json\\" in a lock folder');
    expect(reasons).toContain('a symbolic link where a lock folder is expected');
    for (const node of [a, b]) {
      expect(node.child.exitCode, node.nodeId).toBeNull();
      expect(node.problems(), node.nodeId).toEqual([]);
      expect(
        node.logs().filter((line) => line.msg === 'distributor pass failed'),
        node.nodeId,
      ).toEqual([]);
    }
    for (const project of c.projects) expect(overlapsSeen(c.dest(project)), project).toBe(0);
  });
  it('waiting folders: a symlink and a file named like URI folders, a FIFO and tasks of another URI inside a real one: the young task moves to its own folder and is delivered, the old one is parked, the rest in corrupt/, nothing outside touched', async () => {
    const c = cluster({ label: 'refrelay-hostile-folders', projects: ['app', 'lib'] });
    await c.update('app', 'main');
    const waiting = storeDir(c.store, 'waiting');
    const appFolder = join(waiting, c.lockName('app'));
    execFileSync('mkfifo', [join(appFolder, taskName('5'))]);
    // Well-formed tasks of a real URL, but in the folder of another URI: one just written, one an hour old.
    writeFileSync(join(appFolder, taskName('6')), `${JSON.stringify({ project: 'lib', refs: ['refs/heads/main'], uri: c.uri('lib'), remote: 'mirror' })}\n`);
    const old = join(appFolder, taskName('8'));
    writeFileSync(old, `${JSON.stringify({ project: 'lib', refs: ['refs/heads/old'], uri: c.uri('lib'), remote: 'mirror', note: SECRET })}\n`);
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(old, anHourAgo, anHourAgo);
    const victim = tempDir('refrelay-victim');
    writeFileSync(join(victim, taskName('7')), JSON.stringify({ project: 'app', refs: ['refs/heads/victim'], uri: c.uri('app'), remote: 'mirror' }));
    const victimBefore = readdirSync(victim).sort();
    symlinkSync(victim, join(waiting, 'a'.repeat(40)));
    writeFileSync(join(waiting, `${'b'.repeat(40)}.bulk`), 'not a folder');

    const a = c.start('node-a');
    const b = c.start('node-b');
    // lib's main arrives only through the task found in app's folder.
    await c.waitDelivered();
    // failed/ is by the URI a task names.
    const failedLib = join(storeDir(c.store, 'failed'), c.lockName('lib'));
    await waitUntil('the old foreign task parked in failed/', () => namesIn(failedLib).includes(taskName('8')));

    expect(readdirSync(victim).sort()).toEqual(victimBefore);
    expect(namesIn(waiting)).toEqual([]);
    const reasons = corruptReasons(c.store);
    expect(reasons).toContain('a FIFO where a file is expected');
    expect(reasons).toContain('a symbolic link where a waiting folder is expected');
    expect(reasons).toContain('a regular file where a waiting folder is expected');
    expect(readFileSync(join(failedLib, `${taskName('8')}.reason.json`), 'utf8')).toContain('in the waiting folder of another URI');
    const refusals = [a, b].flatMap((node) => node.logs().filter((line) => line.msg === 'task refused: parked in failed/ without pushing'));
    expect(refusals).toHaveLength(1);
    for (const node of [a, b]) {
      expect(node.child.exitCode, node.nodeId).toBeNull();
      expect(
        node.problems().filter((line) => !line.endsWith('task refused: parked in failed/ without pushing')),
        node.nodeId,
      ).toEqual([]);
      expect(JSON.stringify(node.logs()) + node.stderr).not.toContain('never-in-any-output');
    }
    for (const project of c.projects) expect(overlapsSeen(c.dest(project)), project).toBe(0);
  });
});
