// The CLI is bundled into a few files because `refrelay enqueue` runs inside every git push:
// loading ~40 small ES modules costs more than the enqueue itself. Packages from node_modules
// stay external (pino, yargs load as they are). `npm run build` runs this through
// scripts/bundle.mjs, which prints nothing when the bundle is written.
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: { main: 'dist/cli/main.js' },
  platform: 'node',
  external: [/^node:/, /^[^./]/],
  // Warnings are worth a look; rolldown's info lines are not.
  logLevel: 'warn',
  output: { dir: 'dist/bundle', format: 'esm', sourcemap: true, chunkFileNames: '[name].js' },
});
