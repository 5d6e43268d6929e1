import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/errors.js';
import { StorePaths, fileSafe, isTaskFileName, parseWaitingFolderName, waitingFolderName } from '../../../src/store/store-paths.js';

describe('store paths', () => {
  const paths = new StorePaths('/srv/store');

  it('lays out the store as DESIGN.md describes', () => {
    expect(paths.waitingFolder('k')).toBe('/srv/store/ref-updates/waiting/k');
    expect(paths.waitingFile('k', 'a.json')).toBe('/srv/store/ref-updates/waiting/k/a.json');
    expect(paths.waitingFile('k.bulk', 'a.json')).toBe('/srv/store/ref-updates/waiting/k.bulk/a.json');
    expect(paths.claimedFile('lock', 'a.json')).toBe('/srv/store/ref-updates/running/lock/a.json');
    expect(paths.failedReasonFile('k', 'a.json')).toBe('/srv/store/ref-updates/failed/k/a.json.reason.json');
    expect(paths.uriStateFile('k')).toBe('/srv/store/uri-state/k.json');
    expect(paths.doneFolder('k', 'node-a.1f2e')).toBe('/srv/store/ref-updates/done/k.node-a.1f2e');
    expect(() => paths.doneFolder('k', '../x')).toThrow(StoreError);
    expect(paths.folders).toHaveLength(10);
    expect(paths.history).toBe('/srv/store/history');
    expect(paths.verify).toBe('/srv/store/verify');
  });

  it.each(['..', '.', '', 'a/b', 'a\\b', 'a\0b'])('refuses the name %j', (name) => {
    expect(() => paths.waitingFile('k', name)).toThrow(StoreError);
    expect(() => paths.waitingFolder(name)).toThrow('invalid waiting folder name');
    expect(() => paths.waitingFile(name, 'a.json')).toThrow('invalid waiting folder name');
    if (name !== 'a/b') expect(() => paths.lockFolder(name)).toThrow(StoreError);
  });

  it('addresses a claim folder inside a lock folder, and nothing deeper or escaping', () => {
    expect(paths.lockFolder('k/lease-1')).toBe('/srv/store/ref-updates/running/k/lease-1');
    expect(paths.claimedFile('k/lease-1', 'a.json')).toBe('/srv/store/ref-updates/running/k/lease-1/a.json');
    for (const name of ['a/b/c', '../x', 'k/..', '/k', 'k/']) expect(() => paths.lockFolder(name)).toThrow(StoreError);
  });

  it('recognises only published task file names', () => {
    const hex = '0123456789abcdef0123456789abcdef01234567';
    expect(isTaskFileName(`${hex}.json`)).toBe(true);
    for (const name of [`${hex.toUpperCase()}.json`, `${hex}.json.tmp`, `.nfs${hex}`, `${hex}`, `${hex}.node.abc.tmp`, 'owner.json']) {
      expect(isTaskFileName(name)).toBe(false);
    }
  });

  it('names a waiting folder by URI key and lane, and tells only such names apart', () => {
    const key = '0123456789abcdef0123456789abcdef01234567';
    expect(waitingFolderName(key, 'live')).toBe(key);
    expect(waitingFolderName(key, 'bulk')).toBe(`${key}.bulk`);
    expect(parseWaitingFolderName(key)).toEqual({ uriKey: key, lane: 'live' });
    expect(parseWaitingFolderName(`${key}.bulk`)).toEqual({ uriKey: key, lane: 'bulk' });
    for (const name of [
      `${key}.json`,
      `${key}.bulk.bulk`,
      `${key}.BULK`,
      key.toUpperCase(),
      key.slice(1),
      `${key}0`,
      `.${key}`,
      `${key}.tomb.n.t`,
      'dropped',
      '',
    ]) {
      expect(parseWaitingFolderName(name)).toBeUndefined();
    }
  });

  it('makes node ids safe for file names', () => {
    expect(fileSafe('git-1.example.com')).toBe('git-1.example.com');
    expect(fileSafe('a/b c:d')).toBe('a_b_c_d');
  });
});
