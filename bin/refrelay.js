#!/usr/bin/env node
// Loads the compiled CLI. If that fails (dist/ not built, or being rewritten by `npm ci` or a
// build in the checkout this runs from), refrelay has not started: one line and exit 5, which the
// git hook tells apart from refrelay's own exit codes 0–3 (src/intake/hook-script.ts).
try {
  await import('../dist/bundle/main.js');
} catch (error) {
  const reason = error instanceof Error ? error.message.split('\n')[0] : String(error);
  process.stderr.write(`refrelay: failed to start: ${reason}\n`);
  process.exit(5);
}
