import { readFileSync } from 'node:fs';

/** Read from package.json so `refrelay --version` and node heartbeats never drift from the release. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
