import { basename, dirname, resolve, sep } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors.js';
import { StorePaths, isTaskFileName, parseWaitingFolderName, waitingFolderName } from '../../src/store/store-paths.js';

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
  it('addresses a named file directly inside its waiting folder, directly inside waiting/, or refuses a name with a StoreError', () => {
    fc.assert(
      fc.property(root, name, name, (storeRoot, folder, file) => {
        const paths = new StorePaths(storeRoot);
        const dir = pathOrRefusal(() => paths.waitingFolder(folder));
        const waiting = pathOrRefusal(() => paths.waitingFile(folder, file));
        if (dir !== undefined) {
          expectInside(dir, paths.waiting);
          expect(resolve(dirname(dir))).toBe(resolve(paths.waiting));
          expect(basename(dir)).toBe(folder);
        }
        if (waiting === undefined) return;
        expect(dir).toBeDefined();
        expectInside(waiting, storeRoot);
        expect(resolve(dirname(waiting))).toBe(resolve(dir!));
        expect(basename(waiting)).toBe(file);
      }),
      { seed: 7001, numRuns: 1500 },
    );
  });

  it('tells waiting folder names from every other name, and reads back the URI key and lane it was given', () => {
    const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 40, maxLength: 40 });
    fc.assert(
      fc.property(hex, fc.constantFrom('live' as const, 'bulk' as const), name, (key, lane, other) => {
        const folder = waitingFolderName(key, lane);
        expect(parseWaitingFolderName(folder)).toEqual({ uriKey: key, lane });
        // A task file's name is never taken for a folder's, so flat tasks and folders can share waiting/.
        expect(parseWaitingFolderName(`${key}.json`)).toBeUndefined();
        expect(isTaskFileName(folder)).toBe(false);
        const parsed = parseWaitingFolderName(other);
        if (parsed !== undefined) expect(waitingFolderName(parsed.uriKey, parsed.lane)).toBe(other);
      }),
      { seed: 7004, numRuns: 1000 },
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
        const escapes = file === '' || file === '.' || file === '..' || /[/\\\0]/.test(file);
        expect({ file, refused: pathOrRefusal(() => paths.waitingFile('k', file)) === undefined }).toEqual({ file, refused: escapes });
        expect({ file, refused: pathOrRefusal(() => paths.waitingFolder(file)) === undefined }).toEqual({ file, refused: escapes });
      }),
      { seed: 7003, numRuns: 1000 },
    );
  });
});
