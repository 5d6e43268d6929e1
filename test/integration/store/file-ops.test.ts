import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeStoreFs } from '../../../src/store/store-fs.js';
import { runFileOps } from '../../../src/store/task-moves.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const ctx = { fs: nodeStoreFs, concurrency: 8 };

function files(dir: string, count: number): string[] {
  mkdirSync(dir, { recursive: true });
  return Array.from({ length: count }, (_, i) => {
    const path = join(dir, `f${i}.json`);
    writeFileSync(path, `${i}\n`);
    return path;
  });
}

describe('runFileOps', () => {
  it('renames and unlinks every file of a batch larger than its concurrency, a result per op in order', async () => {
    const root = tempDir();
    const from = files(join(root, 'a'), 150);
    mkdirSync(join(root, 'b'));
    const moved = await runFileOps(
      ctx,
      from.map((path, i) => ({ op: 'rename' as const, from: path, to: join(root, 'b', `f${i}.json`) })),
    );
    expect(moved).toEqual(Array.from({ length: 150 }, () => undefined));
    expect(readdirSync(join(root, 'a'))).toEqual([]);
    expect(readdirSync(join(root, 'b'))).toHaveLength(150);
    const removed = await runFileOps(
      ctx,
      readdirSync(join(root, 'b')).map((name) => ({ op: 'unlink' as const, path: join(root, 'b', name) })),
    );
    expect(removed.every((result) => result === undefined)).toBe(true);
    expect(readdirSync(join(root, 'b'))).toEqual([]);
    expect(await runFileOps(ctx, [])).toEqual([]);
  });

  it('answers each op on its own: a missing file is ENOENT, the other ops of the batch still happen', async () => {
    const root = tempDir();
    const [first, second] = files(root, 2);
    const results = await runFileOps(ctx, [
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
});
