import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** A fresh temp folder per call, removed after the current test. */
export function useTempDirs(): (label?: string) => string {
  const made: string[] = [];
  // Some tests leave thousands of repositories; removing them on a loaded 2-core machine can
  // take longer than the default hook timeout.
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  }, 300_000);
  return (label = 'refrelay') => {
    const dir = mkdtempSync(join(tmpdir(), `${label}-`));
    made.push(dir);
    return dir;
  };
}
