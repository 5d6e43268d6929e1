export type HookKind = 'post-receive' | 'reference-transaction';

/** The first line after the shebang: how refrelay recognises its own hook. */
export const HOOK_MARKER = '# refrelay hook: installed by `refrelay hook install`, removed by `refrelay hook uninstall`';
export const CHAINED_SUFFIX = '.refrelay-chained';

/** refrelay's exit code when its own code cannot be loaded (`bin/refrelay.js`, `cli/main.ts`). */
export const EXIT_NOT_STARTED = 5;

export interface HookCommand {
  /** Absolute node binary and the real path of refrelay's script, so the hook works without PATH. */
  readonly node: string;
  readonly script: string;
  readonly config: string;
}

function quote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** What the hook says when refrelay did not run to its end; `$refrelay` and `$why` are the hook's variables. */
const NOT_RUN_LINE =
  'refrelay: could not queue replication (refrelay at $refrelay $why); the push itself succeeded; ' +
  "once refrelay runs again, 'refrelay verify --fix' (or 'refrelay replicate PROJECT') queues what the mirrors miss";

/**
 * The hook never fails a user's push because refrelay could not queue. A chained (pre-existing)
 * hook runs first with the same input, and its exit status is the hook's whatever refrelay does.
 *
 * Two kinds of trouble are told apart, because they need different fixes. refrelay ran and could
 * not queue (exit 1–3: store and spool unwritable, bad config): its own message, then
 * `ENQUEUE FAILED`. refrelay did not start — node or the script missing (checked with `test`, no
 * fork), its build files or dependencies missing (exit 5, see `bin/refrelay.js`), as while
 * `npm ci` or a build rewrites the checkout it runs from — or it ended abnormally (a signal, node
 * itself failing: any other status): one line naming that refrelay and the reason. refrelay's stderr is captured to pick the reason;
 * its stdout (`queued N tasks`) goes straight through on fd 3.
 */
export function hookScript(kind: HookKind, command: HookCommand): string {
  const onlyCommitted = kind === 'reference-transaction' ? 'if [ "$1" = committed ]; then' : 'if true; then';
  return [
    '#!/bin/sh',
    HOOK_MARKER,
    `# It runs the refrelay at ${command.script.replace(/\n/g, ' ')}; run \`refrelay hook install\` again to change that.`,
    'input=$(cat)',
    'status=0',
    `if [ -x "$0${CHAINED_SUFFIX}" ]; then`,
    `  printf '%s\\n' "$input" | "$0${CHAINED_SUFFIX}" "$@" || status=$?`,
    'fi',
    onlyCommitted,
    `  node=${quote(command.node)}`,
    `  refrelay=${quote(command.script)}`,
    '  why=',
    '  if [ ! -x "$node" ]; then',
    '    why="failed to start: node is missing at $node"',
    '  elif [ ! -f "$refrelay" ]; then',
    '    why="failed to start: the file is missing"',
    '  else',
    `    { err=$(printf '%s\\n' "$input" | "$node" "$refrelay" enqueue --stdin --config ${quote(command.config)} 2>&1 >&3); code=$?; } 3>&1`,
    '    case $code in',
    `      0) [ -z "$err" ] || printf '%s\\n' "$err" >&2 ;;`,
    '      1|2|3)',
    `        [ -z "$err" ] || printf '%s\\n' "$err" >&2`,
    `        echo "refrelay: ENQUEUE FAILED in $(pwd): this update is not queued for replication; run 'refrelay verify --fix'" >&2 ;;`,
    `      ${EXIT_NOT_STARTED}) why=$(printf '%s\\n' "$err" | sed -n '1s/^refrelay: //p'); why=\${why:-failed to start: exit status ${EXIT_NOT_STARTED}} ;;`,
    `      *) why="ended with exit status $code\${err:+: $(printf '%s\\n' "$err" | sed -n '$p')}" ;;`,
    '    esac',
    '  fi',
    `  [ -z "$why" ] || printf '%s\\n' "${NOT_RUN_LINE}" >&2`,
    'fi',
    'exit $status',
    '',
  ].join('\n');
}
