import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';

/** A fresh temp folder per call, removed after the current test. */
export function useTempDirs(): (label?: string) => string {
  const made: string[] = [];
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return (label = 'refrelay') => {
    const dir = mkdtempSync(join(tmpdir(), `${label}-`));
    made.push(dir);
    return dir;
  };
}
