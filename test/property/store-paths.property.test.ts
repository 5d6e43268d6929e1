import { basename, dirname, resolve, sep } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { StorePaths } from '../../src/store/store-paths.js';

/** Calls `make`; a StoreError becomes undefined, any other exception fails the property. */
function pathOrRefusal(make: () => string): string | undefined {
  try {
    return make();
  } catch (error) {
    if (error instanceof StoreError) return undefined;
    throw error;
  }
}

const hostilePiece = fc.constantFrom(
  '.',
  '..',
  '...',
  '/',
  '//',
  '\\',
  '\0',
  '~',
  '-',
  ' ',
  '\n',
  '%2F',
  '..%2F',
  'a',
  'b',
  'lease-1',
  '.json',
  'owner.json',
  '.reason.json',
  '0123456789abcdef0123456789abcdef01234567',
  'é',
  '😀',
  '\ud800',
  '*',
  '?',
  ':',
  '$HOME',
  '${x}',
);

const name = fc.oneof(
  fc.array(hostilePiece, { minLength: 0, maxLength: 5 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

const root = fc.constantFrom('/srv/store', '/srv/store/', '/srv/a/../store', '/tmp/refrelay store', '/', '/srv//store');

/** `path` lies strictly inside `folder` (resolved), not on it and not beside it. */
function expectInside(path: string, folder: string): void {
  const inside = resolve(folder);
  expect({ path, inside: resolve(path).startsWith(inside === sep ? sep : inside + sep) }).toEqual({ path, inside: true });
}

describe('StorePaths', () => {
  it('addresses a named file directly inside its folder, or refuses the name with a StoreError', () => {
    fc.assert(
      fc.property(root, name, (storeRoot, file) => {
        const paths = new StorePaths(storeRoot);
        const waiting = pathOrRefusal(() => paths.waitingFile(file));
        if (waiting === undefined) return;
        expectInside(waiting, storeRoot);
        expect(resolve(dirname(waiting))).toBe(resolve(paths.waiting));
        expect(basename(waiting)).toBe(file);
      }),
      { seed: 7001, numRuns: 1500 },
    );
  });

  it('keeps lock folders, claimed files, failed files and URI state inside the store root', () => {
    fc.assert(
      fc.property(root, name, name, fc.boolean(), (storeRoot, a, b, withLease) => {
        const paths = new StorePaths(storeRoot);
        const lockName = withLease ? `${a}/${b}` : a;
        const made = [
          pathOrRefusal(() => paths.lockFolder(lockName)),
          pathOrRefusal(() => paths.claimedFile(lockName, b)),
          pathOrRefusal(() => paths.claimedFile(lockName, a)),
          pathOrRefusal(() => paths.failedFolder(a)),
          pathOrRefusal(() => paths.failedFile(a, b)),
          pathOrRefusal(() => paths.failedReasonFile(a, b)),
          pathOrRefusal(() => paths.uriStateFile(a)),
        ];
        let claimed: string[] = [];
        try {
          claimed = paths.claimedFiles(lockName, [b, a]);
        } catch (error) {
          if (!(error instanceof StoreError)) throw error;
        }
        for (const path of [...made, ...claimed]) if (path !== undefined) expectInside(path, storeRoot);
        const lock = made[0];
        if (lock !== undefined) {
          expectInside(lock, paths.running);
          expect(resolve(lock).split(sep).length - resolve(paths.running).split(sep).length).toBe(lockName.split('/').length);
        }
        const failed = made[4];
        if (failed !== undefined) expect(resolve(dirname(failed))).toBe(resolve(paths.failed, a));
        const state = made[6];
        if (state !== undefined) expect(resolve(dirname(state))).toBe(resolve(paths.uriState));
      }),
      { seed: 7002, numRuns: 1500 },
    );
  });

  it('refuses exactly the names that would leave or name the folder itself', () => {
    fc.assert(
      fc.property(name, (file) => {
        const paths = new StorePaths('/srv/store');
        const refused = pathOrRefusal(() => paths.waitingFile(file)) === undefined;
        const escapes = file === '' || file === '.' || file === '..' || /[/\\\0]/.test(file);
        expect({ file, refused }).toEqual({ file, refused: escapes });
      }),
      { seed: 7003, numRuns: 1000 },
    );
  });
});
