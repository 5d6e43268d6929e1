import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
export const fixturesDir = fileURLToPath(new URL('../../fixtures', import.meta.url));
export const cliBin = fileURLToPath(new URL('../../bin/refrelay.js', import.meta.url));
