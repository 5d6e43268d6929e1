// `npm run build`'s second step: bundles tsc's output (dist/cli) into dist/bundle as
// rolldown.config.mjs says. It calls rolldown's API rather than its CLI because the CLI prints a
// table of every file it wrote on each build and has no option to stop that: a build that worked
// prints nothing. Rolldown's warnings still print (config `logLevel`), and an error prints and
// exits 1.
import { rolldown } from 'rolldown';
import config from '../rolldown.config.mjs';

const { output, ...input } = config;
let bundle;
try {
  bundle = await rolldown(input);
  await bundle.write(output);
} catch (error) {
  process.stderr.write(`bundling failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  await bundle?.close();
}
