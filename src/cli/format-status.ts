import Table from 'cli-table3';
import type { ClusterStatus } from '../observe/cluster-status.js';
import { formatAge as ageText, formatInstant, formatOffset, formatWait } from '../observe/time-text.js';

export { formatOffset };
import { andMore, plainTable, printable, reasonText, refsText } from './format-failed.js';

/** Failed tasks the table lists one by one, newest first; `status --all` lists every one. */
export const FAILED_SHOWN = 10;
/** URIs the table lists one by one, the longest waiting first; `status --limit N` changes it, 0 or `--all` lists every one. */
export const URIS_SHOWN = 50;

export function formatAge(ms: number | null): string {
  return ms === null ? '-' : ageText(ms);
}

type TableStyle = 'plain' | 'boxed';

/**
 * The first row is the header. Boxed (cli-table3) for a terminal; plain aligned columns for pipes
 * and scripts. Every cell is made printable: node ids, hosts and errors come from store records.
 */
function table(rawRows: string[][], style: TableStyle): string {
  const rows = rawRows.map((row) => row.map(printable));
  if (style === 'boxed') {
    const boxed = new Table({ head: rows[0]!, style: { head: [], border: [] } });
    boxed.push(...rows.slice(1));
    return boxed.toString();
  }
  return plainTable(rows);
}

/**
 * The human view of `refrelay status`: queue per remote and URI, running claims, failed tasks with
 * their reasons (the newest `failedShown`), counts, nodes.
 */
export function formatStatus(status: ClusterStatus, style: TableStyle = 'plain', options: { failedShown?: number; urisShown?: number } = {}): string {
  const { totals } = status;
  const out = [`store ${status.storePath}`, `waiting ${totals.waiting}  running ${totals.running}  failed ${totals.failed}  corrupt ${totals.corrupt}`];
  if (status.queueFrom !== null) {
    out.push(
      `waiting as node ${printable(status.queueFrom.nodeId)} counted it ${formatAge(status.queueFrom.ageMs)} ago (refrelay status --all counts the store)`,
    );
  }
  out.push('', ...uriTables(status, style, options.urisShown ?? URIS_SHOWN));
  out.push(...runningTable(status, style));
  out.push(...failedTable(status, style, options.failedShown ?? FAILED_SHOWN));
  out.push('', ...nodesSection(status, style));
  out.push(...circuitTable(status, style));
  out.push(...backoffTable(status, style, options.urisShown ?? URIS_SHOWN));
  out.push(...verifySection(status));
  return out.join('\n') + '\n';
}

function runningTable(status: ClusterStatus, style: TableStyle): string[] {
  if (status.running.length === 0) return [];
  const rows = [['RUNNING URI', 'REMOTE', 'TASKS', 'OWNER', 'AGE']];
  for (const claim of status.running) {
    const owner = claim.owner === null ? 'unknown' : `${claim.owner.nodeId ?? '?'} (pid ${claim.owner.pid ?? '?'})`;
    rows.push([claim.uri ?? claim.lockName, claim.remote ?? '-', String(claim.tasks), owner, formatAge(claim.ageMs)]);
  }
  return ['', table(rows, style)];
}

/** The newest `shown` failed tasks with their reasons. */
function failedTable(status: ClusterStatus, style: TableStyle, shown: number): string[] {
  if (status.failed.length === 0) return [];
  const listed = status.failed.slice(0, shown);
  const rows = [['FAILED URI', 'REMOTE', 'PROJECT', 'REFS', 'FAILED', 'REASON']];
  for (const task of listed) {
    const since = `${formatAge(task.failedAgeMs)} ago`;
    rows.push([printable(task.uri), printable(task.remote), printable(task.project), refsText(task.refs), since, reasonText(task.reason)]);
  }
  return ['', table(rows, style), ...andMore(listed.length, status.totals.failed, 'refrelay status --all, or refrelay failed list')];
}

/** The nodes' table, then a line for each node that cannot write the store. */
function nodesSection(status: ClusterStatus, style: TableStyle): string[] {
  if (status.nodes.length === 0) return ['nodes: none has reported yet'];
  // The SPOOLED column only while some machine holds updates the store has not got yet.
  const spooled = status.nodes.some((node) => node.spooledTasks > 0);
  const rows = [['NODE', 'STATE', 'LAST BEAT', 'HOST', 'PID', 'CLOCK', ...(spooled ? ['SPOOLED'] : [])]];
  for (const node of status.nodes) {
    const { host, pid } = node.record;
    const offset = node.clockOffsetMs === null ? '-' : formatOffset(node.clockOffsetMs);
    const clock = node.clockOffsetMs !== null && node.clockWarning ? `! clock off by ${offset}` : offset;
    rows.push([
      node.nodeId,
      node.state,
      `${formatAge(node.lastBeatAgeMs)} ago`,
      typeof host === 'string' ? host : '-',
      typeof pid === 'number' ? String(pid) : '-',
      clock,
      ...(spooled ? [String(node.spooledTasks)] : []),
    ]);
  }
  const out = [table(rows, style)];
  for (const node of status.nodes) {
    const failing = node.storeNotWritable;
    if (failing === undefined) continue;
    const since = formatInstant(failing.sinceAt);
    out.push(printable(`! ${node.nodeId}: store not writable (${failing.code}) since ${since}, ${failing.failures} failures in a row: ${failing.lastError}`));
  }
  if (status.storeClockOffsetMs === null) out.push("(store clock not measurable here: node ages use this machine's clock)");
  return out;
}

function circuitTable(status: ClusterStatus, style: TableStyle): string[] {
  if (status.circuits.length === 0) return [];
  const rows = [['OPEN HOST CIRCUIT', 'NODE', 'STATE', 'TRIPS', 'NEXT PROBE', 'LAST ERROR']];
  for (const circuit of status.circuits) {
    const nextProbe = circuit.nextProbeInMs === null ? 'running' : `in ${formatAge(circuit.nextProbeInMs)}`;
    rows.push([circuit.host, circuit.nodeId, circuit.state, String(circuit.trips), nextProbe, circuit.lastError ?? '-']);
  }
  return ['', table(rows, style)];
}

/** The last periodic verification's counts and each destination it found drifted or unreachable. */
function verifySection({ verify }: ClusterStatus): string[] {
  if (verify === null) return [];
  const checked = `${verify.destinations} destinations checked ${formatAge(verify.finishedAgeMs)} ago by ${printable(verify.nodeId)}`;
  const out = ['', `verify: ${checked}: ${verify.drifted} drifted, ${verify.unreachable} unreachable`];
  for (const problem of verify.problems) {
    const what =
      problem.state === 'drift'
        ? `DRIFT ${problem.remote} ${problem.uri}: ${problem.missing} missing, ${problem.different} different, ${problem.extra} extra`
        : `UNREACHABLE ${problem.remote} ${problem.uri}: ${problem.error ?? ''}`;
    out.push(`  ${printable(what)}`);
  }
  return out;
}

/** The URIs whose last push failed: why, and when the next attempt may start (`shown` of them, 0: all). */
function backoffTable(status: ClusterStatus, style: TableStyle, shown: number): string[] {
  const { uris, unread } = status.backingOff;
  if (uris.length === 0) return [];
  const listed = shown === 0 ? uris : uris.slice(0, shown);
  const rows = [['BACKING OFF URI', 'ATTEMPTS', 'NEXT ATTEMPT', 'LAST ERROR']];
  for (const uri of listed) {
    rows.push([printable(uri.uri), String(uri.attempts), formatWait(uri.nextAttemptInMs), printable(uri.lastError)]);
  }
  return ['', table(rows, style), ...andMore(listed.length, uris.length + unread, 'refrelay status --json, or --limit 0')];
}

/**
 * One row per remote with its totals, then the URIs that waited longest (then the most tasks),
 * `shown` of them: at a backlog of 100,000 URIs, a table of every one says nothing.
 */
function uriTables(status: ClusterStatus, style: TableStyle, shown: number): string[] {
  const label = (remote: ClusterStatus['remotes'][number]): string => (remote.configured ? remote.name : `${remote.name} (not configured)`);
  const remoteRows = [['REMOTE', 'URIS', 'WAITING', 'OLDEST', 'RUNNING', 'FAILED']];
  const uris: Array<{ remote: string; uri: ClusterStatus['remotes'][number]['uris'][number] }> = [];
  for (const remote of status.remotes) {
    remoteRows.push([
      label(remote),
      String(remote.uris.length),
      String(remote.waiting),
      formatAge(remote.oldestWaitingAgeMs),
      String(remote.running),
      String(remote.failed),
    ]);
    for (const uri of remote.uris) uris.push({ remote: label(remote), uri });
  }
  const oldestFirst = uris.sort(
    (a, b) =>
      (b.uri.oldestWaitingAgeMs ?? -1) - (a.uri.oldestWaitingAgeMs ?? -1) ||
      b.uri.waiting - a.uri.waiting ||
      a.remote.localeCompare(b.remote) ||
      a.uri.uri.localeCompare(b.uri.uri),
  );
  const listed = shown > 0 ? oldestFirst.slice(0, shown) : oldestFirst;
  const out = [table(remoteRows, style)];
  if (listed.length === 0) return out;
  const uriRows = [['REMOTE', 'URI', 'WAITING', 'OLDEST', 'RUNNING', 'FAILED']];
  for (const { remote, uri } of listed) {
    uriRows.push([remote, uri.uri, String(uri.waiting), formatAge(uri.oldestWaitingAgeMs), String(uri.running), String(uri.failed)]);
  }
  out.push('', table(uriRows, style), ...andMore(listed.length, uris.length, 'refrelay status --limit 0 lists every URI'));
  return out;
}
