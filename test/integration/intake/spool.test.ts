import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimedNames, claimSpool, realSpoolFiles, removeSpooled, spoolDirFor, spoolTasks, spooledNames, type SpoolFiles } from '../../../src/intake/spool.js';
import { encodeTask, taskKey, type Task } from '../../../src/task/task.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const task = (ref: string, uri = '/dest/app.git'): Task => ({ project: 'app', refs: [ref], uri, remote: 'mirror' });

describe('the local spool', () => {
  it('keeps one folder per resolved store path, with store.txt naming the store', async () => {
    const root = tempDir('refrelay-spool');
    const dir = spoolDirFor(root, '/mnt/store/');
    expect(spoolDirFor(root, '/mnt/store')).toBe(dir);
    expect(spoolDirFor(root, '/mnt/other')).not.toBe(dir);
    await spoolTasks(dir, '/mnt/store/', [task('refs/heads/main')], new Date());
    expect(readFileSync(join(dir, 'store.txt'), 'utf8')).toBe('/mnt/store\n');
  });

  it('writes each task in the store format as <taskKey>.json, with the enqueue time as its mtime and no temps left', async () => {
    const dir = join(tempDir('refrelay-spool'), 'a', 'b');
    const at = new Date('2026-01-02T03:04:05Z');
    const tasks = [task('refs/heads/main'), task('refs/heads/main', '/dest2/app.git'), task('refs/heads/main')];
    await spoolTasks(dir, '/store', tasks, at);
    const names = [taskKey(tasks[0]!), taskKey(tasks[1]!)].map((key) => `${key}.json`).sort();
    expect(readdirSync(dir).sort()).toEqual([...names, 'store.txt'].sort());
    expect(readFileSync(join(dir, `${taskKey(tasks[0]!)}.json`), 'utf8')).toBe(encodeTask(tasks[0]!));
    expect(statSync(join(dir, names[0]!)).mtimeMs).toBe(at.getTime());

    const reading = await claimSpool(dir);
    expect(reading.quarantined).toEqual([]);
    expect(reading.tasks.map((spooled) => [spooled.task.uri, spooled.enqueuedAtMs]).sort()).toEqual([
      ['/dest/app.git', at.getTime()],
      ['/dest2/app.git', at.getTime()],
    ]);
  });

  it('keeps the first file and its older enqueue time when the same task is spooled again', async () => {
    const dir = tempDir('refrelay-spool');
    await spoolTasks(dir, '/store', [task('refs/heads/main')], new Date(1_000_000));
    await spoolTasks(dir, '/store', [task('refs/heads/main')], new Date(2_000_000));
    const [only] = (await claimSpool(dir)).tasks;
    expect(only?.enqueuedAtMs).toBe(1_000_000);
  });

  it('moves a damaged file, a symlink and a folder under a task name to corrupt/ with a reason, and reads the rest', async () => {
    const dir = tempDir('refrelay-spool');
    await spoolTasks(dir, '/store', [task('refs/heads/main')], new Date());
    const secret = join(tempDir('refrelay-secret'), 'secret');
    writeFileSync(secret, encodeTask(task('refs/heads/secret')));
    writeFileSync(join(dir, `${'a'.repeat(40)}.json`), '{"version":1,"proj');
    symlinkSync(secret, join(dir, `${'b'.repeat(40)}.json`));
    mkdirSync(join(dir, `${'c'.repeat(40)}.json`));
    writeFileSync(join(dir, 'notes.txt'), 'not ours: ignored');

    const reading = await claimSpool(dir);
    expect(reading.tasks.map((spooled) => spooled.task.refs)).toEqual([['refs/heads/main']]);
    expect(reading.quarantined.map((bad) => `${bad.name.slice(0, 1)}: ${bad.reason}`).sort()).toEqual([
      'a: invalid JSON (truncated or damaged) at byte 18',
      'b: a symbolic link where a file is expected',
      'c: a directory where a file is expected',
    ]);
    const corrupt = readdirSync(join(dir, 'corrupt'));
    expect(corrupt.filter((name) => !name.endsWith('.reason'))).toHaveLength(3);
    expect(corrupt.filter((name) => name.endsWith('.reason'))).toHaveLength(3);
    expect(existsSync(join(dir, 'notes.txt'))).toBe(true);
    expect(await spooledNames(dir)).toEqual([]);
    expect((await claimedNames(dir)).map((name) => name.slice(0, -13))).toEqual([`${taskKey(task('refs/heads/main'))}.json`]);
  });

  it('never moves a refused file through a corrupt/ that is a symlink: it stays claimed, skipped with why, and nothing lands outside the spool', async () => {
    const dir = tempDir('refrelay-spool');
    await spoolTasks(dir, '/store', [task('refs/heads/main')], new Date());
    const bad = `${'d'.repeat(40)}.json`;
    writeFileSync(join(dir, bad), 'not json');
    const outside = tempDir('refrelay-outside');
    symlinkSync(outside, join(dir, 'corrupt'));

    const reading = await claimSpool(dir);

    expect(reading.tasks.map((spooled) => spooled.task.refs)).toEqual([['refs/heads/main']]);
    expect(reading.quarantined).toEqual([]);
    expect(reading.skipped).toEqual([
      { name: bad, reason: 'invalid JSON (truncated or damaged); could not be moved to corrupt/: corrupt/ is a symbolic link, not a folder' },
    ]);
    expect(readdirSync(outside)).toEqual([]);
    expect((await claimedNames(dir)).map((name) => name.slice(0, -13)).sort()).toEqual([bad, `${taskKey(task('refs/heads/main'))}.json`].sort());
  });

  it('refuses to call an update spooled when a link or a folder stands where its file goes', async () => {
    const dir = tempDir('refrelay-spool');
    const name = `${taskKey(task('refs/heads/main'))}.json`;
    symlinkSync(join(dir, 'nowhere'), join(dir, name));
    await expect(spoolTasks(dir, '/store', [task('refs/heads/main')], new Date())).rejects.toThrow(
      `could not spool ${join(dir, name)}: a symbolic link stands there`,
    );
  });

  it('reads an absent spool as empty, and a file another node removed first as not there', async () => {
    const dir = join(tempDir('refrelay-spool'), 'never-made');
    expect(await claimSpool(dir)).toEqual({ tasks: [], quarantined: [], skipped: [], claims: 'none-to-make' });
    await spoolTasks(dir, '/store', [task('refs/heads/main')], new Date());
    const [spooled] = (await claimSpool(dir)).tasks;
    expect(await removeSpooled(spooled!)).toBe('removed');
    expect(await removeSpooled(spooled!)).toBe('gone');
    expect(await spooledNames(dir)).toEqual([]);
  });

  it('quarantines a file it may not read (EACCES, EPERM, EISDIR), skips one it can neither read nor move or that fails with EIO, and reads the rest', async () => {
    const dir = tempDir('refrelay-spool');
    const refs = ['refs/heads/a', 'refs/heads/b', 'refs/heads/c', 'refs/heads/d', 'refs/heads/e', 'refs/heads/f'];
    await spoolTasks(
      dir,
      '/store',
      refs.map((ref) => task(ref)),
      new Date(),
    );
    const nameOf = (ref: string): string => `${taskKey(task(ref))}.json`;
    const fault = (code: string): Error => Object.assign(new Error(code), { code });
    // As root no file mode refuses a read, so the errors are injected.
    const readErrors = new Map([
      [nameOf('refs/heads/a'), 'EACCES'],
      [nameOf('refs/heads/b'), 'EPERM'],
      [nameOf('refs/heads/c'), 'EISDIR'],
      [nameOf('refs/heads/d'), 'EIO'],
      [nameOf('refs/heads/e'), 'EACCES'],
    ]);
    const files: SpoolFiles = {
      ...realSpoolFiles,
      read: (path) => {
        const code = [...readErrors].find(([name]) => path.includes(name))?.[1];
        return code === undefined ? realSpoolFiles.read(path) : Promise.reject(fault(code));
      },
      rename: (from, to) => (from.endsWith(nameOf('refs/heads/e')) ? Promise.reject(fault('EACCES')) : realSpoolFiles.rename(from, to)),
    };

    const reading = await claimSpool(dir, files);
    expect(reading.tasks.map((spooled) => spooled.task.refs[0])).toEqual(['refs/heads/f']);
    expect(reading.quarantined.map((bad) => [bad.name, bad.reason]).sort()).toEqual(
      [
        [nameOf('refs/heads/a'), 'could not be read: EACCES'],
        [nameOf('refs/heads/b'), 'could not be read: EPERM'],
        [nameOf('refs/heads/c'), 'could not be read: EISDIR'],
      ].sort(),
    );
    expect(reading.skipped.map((bad) => [bad.name, bad.reason]).sort()).toEqual(
      [
        [nameOf('refs/heads/d'), 'could not be read: EIO'],
        [nameOf('refs/heads/e'), 'could not be read: EACCES; could not be moved to corrupt/: EACCES'],
      ].sort(),
    );
    // e's claim was refused too, so it stays where enqueue put it; d and f stay claimed, for the forwarder to finish.
    expect(await spooledNames(dir)).toEqual([nameOf('refs/heads/e')]);
    expect((await claimedNames(dir)).map((name) => name.slice(0, -13)).sort()).toEqual([nameOf('refs/heads/d'), nameOf('refs/heads/f')].sort());
    expect(readdirSync(join(dir, 'corrupt')).filter((name) => name.endsWith('.reason'))).toHaveLength(3);
  });
});
