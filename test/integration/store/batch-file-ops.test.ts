import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchFileOps } from '../../../src/store/batch-fs.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const batches: BatchFileOps[] = [];
afterEach(() => {
  for (const batch of batches.splice(0)) batch.close();
});

function files(dir: string, count: number): string[] {
  mkdirSync(dir, { recursive: true });
  return Array.from({ length: count }, (_, i) => {
    const path = join(dir, `f${i}.json`);
    writeFileSync(path, `${i}\n`);
    return path;
  });
}

describe('BatchFileOps', () => {
  it('renames and unlinks every file of a batch larger than one chunk, in order of the ops', async () => {
    const root = tempDir();
    const from = files(join(root, 'a'), 150);
    mkdirSync(join(root, 'b'));
    const batch = new BatchFileOps();
    batches.push(batch);
    const moved = await batch.run(from.map((path, i) => ({ op: 'rename' as const, from: path, to: join(root, 'b', `f${i}.json`) })));
    expect(moved).toEqual(Array.from({ length: 150 }, () => undefined));
    expect(readdirSync(join(root, 'a'))).toEqual([]);
    expect(readdirSync(join(root, 'b'))).toHaveLength(150);
    const removed = await batch.run(readdirSync(join(root, 'b')).map((name) => ({ op: 'unlink' as const, path: join(root, 'b', name) })));
    expect(removed.every((result) => result === undefined)).toBe(true);
    expect(readdirSync(join(root, 'b'))).toEqual([]);
  });

  it('answers each op on its own: a missing file is ENOENT, the other ops of the batch still happen', async () => {
    const root = tempDir();
    const [first, second] = files(root, 2);
    const batch = new BatchFileOps();
    batches.push(batch);
    const results = await batch.run([
      { op: 'unlink', path: first! },
      { op: 'unlink', path: join(root, 'absent.json') },
      { op: 'rename', from: second!, to: join(root, 'no-such-folder', 'x.json') },
      { op: 'unlink', path: second! },
    ]);
    expect(results[0]).toBeUndefined();
    expect(results[1]).toMatchObject({ code: 'ENOENT', syscall: 'unlink', path: join(root, 'absent.json') });
    expect(results[1]).toBeInstanceOf(Error);
    expect(results[2]).toMatchObject({ code: 'ENOENT', syscall: 'rename' });
    expect(results[3]).toBeUndefined();
    expect(existsSync(first!)).toBe(false);
    expect(existsSync(second!)).toBe(false);
  });

  it('starts new workers after close, and an empty batch needs none', async () => {
    const root = tempDir();
    const batch = new BatchFileOps();
    batches.push(batch);
    expect(await batch.run([])).toEqual([]);
    const [one, two] = files(root, 2);
    expect(await batch.run([{ op: 'unlink', path: one! }])).toEqual([undefined]);
    batch.close();
    expect(await batch.run([{ op: 'unlink', path: two! }])).toEqual([undefined]);
    expect(readdirSync(root)).toEqual([]);
  });

  it('replaces a file through a new temp in one step, and leaves no temp when a step fails', async () => {
    const root = tempDir();
    const batch = new BatchFileOps();
    batches.push(batch);
    const target = join(root, 'owner.json');
    writeFileSync(target, 'old\n');
    await batch.replaceFile(join(root, '.owner.1.tmp'), target, 'new\n');
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(readdirSync(root)).toEqual(['owner.json']);

    // Another writer's temp by that name: refused, and left alone.
    writeFileSync(join(root, '.owner.2.tmp'), 'theirs\n');
    await expect(batch.replaceFile(join(root, '.owner.2.tmp'), target, 'lost\n')).rejects.toMatchObject({ code: 'EEXIST' });
    expect(readFileSync(join(root, '.owner.2.tmp'), 'utf8')).toBe('theirs\n');

    // The rename fails (a folder with files in it is in the way): our temp goes.
    mkdirSync(join(root, 'busy'));
    writeFileSync(join(root, 'busy', 'x'), '');
    await expect(batch.replaceFile(join(root, '.owner.3.tmp'), join(root, 'busy'), 'x\n')).rejects.toMatchObject({ syscall: 'rename' });
    expect(existsSync(join(root, '.owner.3.tmp'))).toBe(false);

    // The folder is gone (a lock taken over): ENOENT, nothing written.
    await expect(batch.replaceFile(join(root, 'gone', '.owner.4.tmp'), join(root, 'gone', 'owner.json'), 'x\n')).rejects.toMatchObject({ code: 'ENOENT' });
    expect(readFileSync(target, 'utf8')).toBe('new\n');
  });
});
