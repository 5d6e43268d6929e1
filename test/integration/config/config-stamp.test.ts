import { mkdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changedConfigFiles, readConfigStamp } from '../../../src/config/config-stamp.js';
import { configSite } from '../../support/config-site.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();

const site = (files?: Record<string, string>) => configSite(tempDir('refrelay-stamp'), files);

describe('the stamp autoReload compares', () => {
  /** Sets a file's mtime explicitly, so that a change never hides in the same clock tick. */
  const touch = (path: string, seconds: number) => utimesSync(path, seconds, seconds);

  it('moves when a fan-out file is added, edited in place, or removed; not for other names', async () => {
    const { config, dir } = site({ 'a.config': '[remote]\n  url = /srv/a/${name}.git\n' });
    const first = (await readConfigStamp(config))!;
    expect([...first.keys()]).toEqual([config, dir, join(dir, 'a.config')]);
    expect(changedConfigFiles(first, (await readConfigStamp(config))!)).toEqual([]);

    writeFileSync(join(dir, 'notes.txt'), 'x');
    writeFileSync(join(dir, 'b.config.tmp'), '[remote]\n  url = /srv/b/${name}.git\n');
    expect(changedConfigFiles(first, (await readConfigStamp(config))!)).toEqual([]);

    renameSync(join(dir, 'b.config.tmp'), join(dir, 'b.config'));
    const added = (await readConfigStamp(config))!;
    expect(changedConfigFiles(first, added)).toEqual([join(dir, 'b.config')]);

    // Same size, same inode: only the mtime tells.
    const a = join(dir, 'a.config');
    const before = statSync(a);
    writeFileSync(a, '[remote]\n  url = /srv/A/${name}.git\n');
    touch(a, before.mtimeMs / 1000 + 5);
    const edited = (await readConfigStamp(config))!;
    expect(changedConfigFiles(added, edited)).toEqual([a]);

    rmSync(join(dir, 'b.config'));
    expect(changedConfigFiles(edited, (await readConfigStamp(config))!)).toEqual([join(dir, 'b.config')]);
  });

  it('moves when the folder appears or goes, even empty', async () => {
    const { config, dir } = site();
    const without = (await readConfigStamp(config))!;
    expect([...without.keys()]).toEqual([config]);
    mkdirSync(dir);
    const withFolder = (await readConfigStamp(config))!;
    expect(changedConfigFiles(without, withFolder)).toEqual([dir]);
    rmSync(dir, { recursive: true });
    expect(changedConfigFiles(withFolder, (await readConfigStamp(config))!)).toEqual([dir]);
  });

  it('moves when replication.config is edited, and is undefined while it is missing', async () => {
    const { config } = site();
    const first = (await readConfigStamp(config))!;
    writeFileSync(config, '[replication]\n  storePath = /tmp/refrelay-other\n');
    expect(changedConfigFiles(first, (await readConfigStamp(config))!)).toEqual([config]);
    rmSync(config);
    expect(await readConfigStamp(config)).toBeUndefined();
  });
});
