import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { overlapsSeen } from '../../support/destination.js';
import { refsOf } from '../../support/git.js';
import { waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';
import { useCluster } from '../cluster/cluster-fixture.js';

/**
 * DESIGN.md invariant 8, fuzzed: random entries — random bytes, random sizes up to a sparse 4 GB,
 * FIFOs, symlinks, directories, random JSON — under random names in every store folder of a
 * running node. After each one a real update must still arrive and the node must still run.
 */
const { cluster } = useCluster();
const tempDir = useTempDirs();
const SECRET = 'never-in-any-output-7f3a';

const FOLDERS = [
  'ref-updates/waiting',
  'ref-updates/running',
  'ref-updates/running/LOCK',
  'ref-updates/running/LOCK/LEASE',
  'ref-updates/building',
  'ref-updates/failed',
  'ref-updates/failed/LOCK',
  'ref-updates/corrupt',
  'ref-updates/done',
  'uri-state',
  'nodes',
  'history',
  'verify',
  '.',
] as const;

type Kind =
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  | { readonly kind: 'json'; readonly text: string }
  | { readonly kind: 'sparse'; readonly size: number }
  | { readonly kind: 'fifo' }
  | { readonly kind: 'symlink-file' }
  | { readonly kind: 'symlink-dir' }
  | { readonly kind: 'dir'; readonly inner: string };

const hex40 = fc.stringMatching(/^[0-9a-f]{40}$/);
const entryName = fc.oneof(
  hex40.map((hex) => `${hex}.json`),
  hex40,
  hex40.map((hex) => `${hex}.tomb.x.y`),
  fc.constantFrom('owner.json', 'last.json', 'node-b.json', '.owner.x.tmp', 'x.tmp', '.nfs0001'),
  fc.stringMatching(/^[A-Za-z0-9._-]{1,30}$/).filter((name) => name !== '.' && name !== '..'),
);
const kind: fc.Arbitrary<Kind> = fc.oneof(
  fc.uint8Array({ maxLength: 4096 }).map((bytes) => ({ kind: 'bytes' as const, bytes })),
  fc.json({ maxDepth: 3 }).map((text) => ({ kind: 'json' as const, text })),
  fc.integer({ min: 1024 * 1024, max: 4 * 1024 ** 3 }).map((size) => ({ kind: 'sparse' as const, size })),
  fc.constant({ kind: 'fifo' as const }),
  fc.constant({ kind: 'symlink-file' as const }),
  fc.constant({ kind: 'symlink-dir' as const }),
  fc.constantFrom('owner.json', 'a.tmp', 'deadbeef').map((inner) => ({ kind: 'dir' as const, inner })),
);

/** Never replaces what is there: a FIFO would block the writer, and the store's own files stay. */
function plant(path: string, entry: Kind, outside: { file: string; dir: string }): void {
  switch (entry.kind) {
    case 'bytes':
      return writeFileSync(path, entry.bytes, { flag: 'wx' });
    case 'json':
      return writeFileSync(path, entry.text, { flag: 'wx' });
    case 'sparse':
      closeSync(openSync(path, 'wx'));
      execFileSync('truncate', ['-s', String(entry.size), path]);
      return;
    case 'fifo':
      execFileSync('mkfifo', [path]);
      return;
    case 'symlink-file':
      return symlinkSync(outside.file, path);
    case 'symlink-dir':
      return symlinkSync(outside.dir, path);
    case 'dir':
      mkdirSync(path);
      writeFileSync(join(path, entry.inner), SECRET);
  }
}

describe('random entries in every store folder of a running node', () => {
  it('never stop delivery, never end the node, never touch or echo what lies outside the store', async () => {
    const c = cluster({ label: 'refrelay-fuzz', lockStale: '1s' });
    const outside = tempDir('refrelay-fuzz-outside');
    const outsideFile = join(outside, 'secret');
    const outsideDir = join(outside, 'dir');
    writeFileSync(outsideFile, SECRET);
    mkdirSync(outsideDir);
    writeFileSync(join(outsideDir, `${'e'.repeat(40)}.json`), SECRET);
    const node = c.start('node-a');
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...FOLDERS), entryName, kind, async (folder, name, entry) => {
        round++;
        const dir = join(c.store, folder.replace('LOCK', c.lockName()).replace('LEASE', 'node-z.lease'));
        try {
          mkdirSync(dir, { recursive: true });
          plant(join(dir, name), entry, { file: outsideFile, dir: outsideDir });
        } catch {
          return; // the name is taken, or a folder on the way is an earlier round's file: nothing new planted
        }
        const branch = `fuzz-${round}`;
        const sha = await c.update('app', branch);
        await waitUntil(
          `refs/heads/${branch} delivered after ${entry.kind} ${folder}/${name}`,
          () => refsOf(c.dest()).get(`refs/heads/${branch}`) === sha,
          20_000,
          50,
        );
        expect(node.child.exitCode).toBeNull();
      }),
      { numRuns: 20 },
    );
    expect(round).toBeGreaterThan(0);
    expect(node.child.exitCode).toBeNull();
    expect(node.problems()).toEqual([]);
    expect(JSON.stringify(node.logs()) + node.stderr).not.toContain(SECRET);
    expect(readFileSync(outsideFile, 'utf8')).toBe(SECRET);
    expect(readFileSync(join(outsideDir, `${'e'.repeat(40)}.json`), 'utf8')).toBe(SECRET);
    expect(overlapsSeen(c.dest())).toBe(0);
  }, 300_000);
});
