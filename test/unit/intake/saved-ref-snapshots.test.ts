import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SavedRefSnapshots } from '../../../src/intake/saved-ref-snapshots.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const A = 'a'.repeat(40);
const B = 'b'.repeat(64);

describe("the ref watcher's saved snapshots", () => {
  it('reads back what it saved, replaces it whole, leaves no temp, and knows no snapshot of a repository never saved', async () => {
    const dir = join(tempDir('refrelay-snapshots'), 'ref-snapshots');
    const saved = new SavedRefSnapshots(dir);
    expect(await saved.open()).toEqual({ earlier: false });
    expect(await saved.load('team/app')).toEqual({ kind: 'none' });
    await saved.save('team/app', new Map([['refs/heads/main', A]]));
    await saved.save(
      'team/app',
      new Map([
        ['refs/heads/main', A],
        ['refs/tags/v1', B],
      ]),
    );
    expect(await saved.load('team/app')).toEqual({
      kind: 'saved',
      refs: new Map([
        ['refs/heads/main', A],
        ['refs/tags/v1', B],
      ]),
    });
    await saved.save('empty', new Map());
    expect(await saved.load('empty')).toEqual({ kind: 'saved', refs: new Map() });
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(await new SavedRefSnapshots(dir).open()).toEqual({ earlier: true });
  });

  it('refuses a folder that is a link or a file, making none through it', async () => {
    const root = tempDir('refrelay-snapshots');
    const elsewhere = tempDir('refrelay-elsewhere');
    symlinkSync(elsewhere, join(root, 'linked'));
    writeFileSync(join(root, 'file'), '');
    expect(await new SavedRefSnapshots(join(root, 'linked')).open()).toEqual({ unusable: `${join(root, 'linked')} is a symbolic link, not a folder` });
    expect(await new SavedRefSnapshots(join(root, 'file')).open()).toEqual({ unusable: `${join(root, 'file')} is a regular file, not a folder` });
    expect(readdirSync(elsewhere)).toEqual([]);

    // Made a link after the start: each save looks again.
    const later = new SavedRefSnapshots(join(root, 'later'));
    expect(await later.open()).toEqual({ earlier: false });
    rmSync(join(root, 'later'), { recursive: true });
    symlinkSync(elsewhere, join(root, 'later'));
    await expect(later.save('p', new Map([['refs/heads/main', A]]))).rejects.toThrow(`${join(root, 'later')} is a symbolic link, not a folder`);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it('does not trust a file cut short, one with a line that is no ref, a link or a folder, and never quotes what it holds', async () => {
    const dir = tempDir('refrelay-snapshots');
    const saved = new SavedRefSnapshots(dir);
    expect(await saved.open()).toEqual({ earlier: false });
    await saved.save('p', new Map([['refs/heads/main', A]]));
    const [file] = readdirSync(dir);
    const path = join(dir, file!);
    const unreadable = async (): Promise<unknown> => saved.load('p');

    writeFileSync(path, `refrelay ref snapshot 1\n${A} refs/heads/main\n`);
    expect(await unreadable()).toEqual({ kind: 'unreadable', reason: 'cut short or not a ref snapshot' });
    writeFileSync(path, `refrelay ref snapshot 1\nsecret-token refs/heads/main\nend\n`);
    expect(await unreadable()).toEqual({ kind: 'unreadable', reason: 'a line that is no ref' });
    writeFileSync(path, '');
    expect(await unreadable()).toEqual({ kind: 'unreadable', reason: 'cut short or not a ref snapshot' });

    const elsewhere = join(tempDir('refrelay-elsewhere'), 'x.refs');
    writeFileSync(elsewhere, `refrelay ref snapshot 1\nend\n`);
    rmSync(path);
    symlinkSync(elsewhere, path);
    expect(await unreadable()).toEqual({ kind: 'unreadable', reason: 'a symbolic link where a file is expected' });
    rmSync(path);
    mkdirSync(path);
    expect(await unreadable()).toEqual({ kind: 'unreadable', reason: 'a directory where a file is expected' });
  });
});
