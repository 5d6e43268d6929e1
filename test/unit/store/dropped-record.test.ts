import { describe, expect, it } from 'vitest';
import { DROP_FOLDER_PATTERN, dropFolderName, droppedRecordText, droppedTaskName } from '../../../src/store/dropped-tasks.js';
import { URI_KEY_PATTERN } from '../../../src/store/store-paths.js';

describe('the record of a drop', () => {
  it('names the drop folder by its UTC second and a token: sortable by time, never a 40-hex uriKey', () => {
    const name = dropFolderName(Date.UTC(2026, 0, 2, 3, 4, 5, 678), 'a1b2c3');
    expect(name).toBe('20260102T030405Z.a1b2c3');
    expect(DROP_FOLDER_PATTERN.test(name)).toBe(true);
    expect(URI_KEY_PATTERN.test(name)).toBe(false);
    expect(DROP_FOLDER_PATTERN.test('a'.repeat(40))).toBe(false);
    expect(DROP_FOLDER_PATTERN.test('20260102T030405Z.a/b')).toBe(false);
  });

  it('writes dropped.json as {version, droppedAt, by, via, nodeId?} on one line', () => {
    const at = Date.UTC(2026, 0, 1);
    expect(droppedRecordText({ by: 'alice@m1', via: 'cli', nodeId: 'node-1' }, at)).toBe(
      `{"version":1,"droppedAt":${at},"by":"alice@m1","via":"cli","nodeId":"node-1"}\n`,
    );
    expect(droppedRecordText({ by: 'http 10.0.0.7', via: 'http' }, at)).toBe(`{"version":1,"droppedAt":${at},"by":"http 10.0.0.7","via":"http"}\n`);
  });

  it('keeps the URI key in a dropped task file name', () => {
    expect(droppedTaskName({ uriKey: 'a'.repeat(40), name: `${'b'.repeat(40)}.json` })).toBe(`${'a'.repeat(40)}.${'b'.repeat(40)}.json`);
  });
});
