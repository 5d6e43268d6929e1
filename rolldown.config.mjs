// The CLI is bundled into a few files because `refrelay enqueue` runs inside every git push:
// loading ~40 small ES modules costs more than the enqueue itself. Packages from node_modules
// stay external (pino, yargs load as they are).
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: { main: 'dist/cli/main.js' },
  platform: 'node',
  external: [/^node:/, /^[^./]/],
  output: { dir: 'dist/bundle', format: 'esm', sourcemap: true, chunkFileNames: '[name].js' },
});
