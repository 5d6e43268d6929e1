import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRefsFromFiles } from '../../../src/push/ref-files.js';
import { git, initBare, makeWorkTree, refsOf } from '../../support/git.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

function repoWithRefs(): { repo: string; work: string } {
  const root = tempDir('refrelay-reffiles');
  const repo = initBare(join(root, 'src.git'));
  const work = makeWorkTree(join(root, 'work'), 2);
  git(work, ['branch', 'packed-one']);
  git(work, ['branch', 'nested/deep']);
  git(work, ['tag', 'v1']);
  git(work, ['push', '-q', repo, '--all']);
  git(work, ['push', '-q', repo, '--tags']);
  return { repo, work };
}

describe('reading ref values from the repository files', () => {
  it('agrees with git for loose refs, packed refs and refs that do not exist', async () => {
    const { repo, work } = repoWithRefs();
    git(repo, ['pack-refs', '--all']);
    git(work, ['commit', '-q', '--allow-empty', '-m', 'loose again']);
    git(work, ['push', '-q', repo, 'main']); // main is now loose and packed: the loose value wins
    const wanted = ['refs/heads/main', 'refs/heads/packed-one', 'refs/heads/nested/deep', 'refs/tags/v1', 'refs/heads/gone', 'refs/heads/nested'];
    const fromFiles = readRefsFromFiles(repo, wanted);
    const truth = refsOf(repo);
    expect(fromFiles).toEqual(new Map(wanted.filter((ref) => truth.has(ref)).map((ref) => [ref, truth.get(ref)!])));
    expect(fromFiles?.get('refs/heads/main')).toBe(git(work, ['rev-parse', 'HEAD']).trim());
  });

  it('sees a deleted ref as absent even when it was packed', async () => {
    const { repo } = repoWithRefs();
    git(repo, ['pack-refs', '--all']);
    git(repo, ['update-ref', '-d', 'refs/heads/packed-one']);
    expect(readRefsFromFiles(repo, ['refs/heads/packed-one'])).toEqual(new Map());
  });

  it('leaves symbolic refs, reftable repositories and odd names to git', async () => {
    const { repo } = repoWithRefs();
    git(repo, ['symbolic-ref', 'refs/heads/alias', 'refs/heads/main']);
    expect(readRefsFromFiles(repo, ['refs/heads/alias'])).toBeUndefined();
    expect(readRefsFromFiles(repo, ['refs/heads/../../config'])).toBeUndefined();
    mkdirSync(join(repo, 'reftable'));
    expect(readRefsFromFiles(repo, ['refs/heads/main'])).toBeUndefined();
  });

  it('reads a loose ref under a folder path, sees the folder itself as no ref, and takes a git dir with a trailing slash', async () => {
    const { repo } = repoWithRefs(); // nothing packed: every ref is a loose file
    const truth = refsOf(repo);
    expect(readRefsFromFiles(`${repo}/`, ['refs/heads/nested/deep', 'refs/heads/nested'])).toEqual(
      new Map([['refs/heads/nested/deep', truth.get('refs/heads/nested/deep')!]]),
    );
  });

  it('leaves a loose ref file longer than any object id, or with bytes git would not accept around it, to git', async () => {
    const { repo } = repoWithRefs();
    const main = join(repo, 'refs', 'heads', 'main');
    writeFileSync(main, `${'a'.repeat(40)}\n${' '.repeat(200)}\n`);
    expect(readRefsFromFiles(repo, ['refs/heads/main'])).toBeUndefined();
    writeFileSync(main, Buffer.concat([Buffer.from('a'.repeat(40)), Buffer.from([0xa0, 0x0a])]));
    expect(readRefsFromFiles(repo, ['refs/heads/main'])).toBeUndefined();
    writeFileSync(main, ` ${'a'.repeat(40)}\n`);
    expect(readRefsFromFiles(repo, ['refs/heads/main'])).toBeUndefined();
    writeFileSync(main, `${'a'.repeat(40)} \r\n`);
    expect(readRefsFromFiles(repo, ['refs/heads/main'])).toEqual(new Map([['refs/heads/main', 'a'.repeat(40)]]));
  });

  it('leaves a folder that is not a repository to git', async () => {
    const dir = tempDir('refrelay-notrepo');
    writeFileSync(join(dir, 'file'), 'x');
    expect(readRefsFromFiles(dir, ['refs/heads/main'])).toBeUndefined();
  });
});
