import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeLockFs, replaceRecord } from '../../../src/lock/lock-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

describe('replaceRecord', () => {
  it('replaces a file through a new temp, and leaves no temp when a step fails', async () => {
    const root = tempDir();
    const target = join(root, 'owner.json');
    writeFileSync(target, 'old\n');
    await replaceRecord(nodeLockFs, join(root, '.owner.1.tmp'), target, 'new\n');
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(readdirSync(root)).toEqual(['owner.json']);

    // The rename fails (a folder with files in it is in the way): our temp goes.
    mkdirSync(join(root, 'busy'));
    writeFileSync(join(root, 'busy', 'x'), '');
    await expect(replaceRecord(nodeLockFs, join(root, '.owner.3.tmp'), join(root, 'busy'), 'x\n')).rejects.toMatchObject({ syscall: 'rename' });
    expect(existsSync(join(root, '.owner.3.tmp'))).toBe(false);

    // The folder is gone (a lock taken over): ENOENT, nothing written.
    await expect(replaceRecord(nodeLockFs, join(root, 'gone', '.owner.4.tmp'), join(root, 'gone', 'owner.json'), 'x\n')).rejects.toMatchObject({
      code: 'ENOENT',
    });
    expect(readFileSync(target, 'utf8')).toBe('new\n');
  });
});
