import { renderTrendCharts } from './trend-charts.js';
import type { ClusterStatus } from './cluster-status.js';
import type { NodeSchedule } from '../schedule/schedule-view.js';
import { formatAge, formatOffset, formatWait } from './time-text.js';

/** Pushes in this window make the "recent push rate" of a remote. */
const RATE_WINDOW_MS = 5 * 60_000;
/** URIs listed under "Recent activity", most recently active first. */
const RECENT_URIS = 50;
/** URIs the Backing off table lists, soonest next attempt first (`status --json` has all). */
const BACKING_OFF_SHOWN = 50;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

function age(ms: number | null): string {
  return ms === null ? '–' : formatAge(ms);
}

/** Retry and Drop of one failed task; the page sends them with the task's URI key and file name. */
function actions(uriKey: string, name: string): string {
  const data = `data-uri-key="${escapeHtml(uriKey)}" data-name="${escapeHtml(name)}"`;
  return `<button class="retry" ${data}>Retry</button> <button class="drop" ${data} title="move to failed/dropped/: not retried, deleted after replication.retention">Drop</button>`;
}

function offset(ms: number | null): string {
  return ms === null ? '–' : formatOffset(ms);
}

/**
 * The people's page: per remote the queue, oldest age and recent push rate; running pushes; failed
 * tasks with Retry and Drop; nodes; recent takeovers; each URI's history on a click. Server-rendered;
 * the small script only refreshes the page body and sends Retry and Drop (after a confirm) as POSTs.
 *
 * `tokenRequired`: Retry and Drop need the bearer token (the listener is not loopback-only);
 * `readOnly`: they need one and none is configured, so the page offers neither and says why.
 */
export function renderDashboard(status: ClusterStatus, schedule: NodeSchedule, options: { tokenRequired: boolean; readOnly?: boolean }): string {
  const storeNow = Date.parse(status.generatedAt) + (status.storeClockOffsetMs ?? 0);
  const body = `<main id="content">
<header><h1>refrelay</h1><p>store <code>${escapeHtml(status.storePath)}</code> · seen from node <b>${escapeHtml(schedule.nodeId)}</b> · ${escapeHtml(status.generatedAt)}</p>
<p class="totals">waiting <b id="total-waiting">${status.totals.waiting}</b> · running <b>${status.totals.running}</b> · failed <b id="total-failed">${status.totals.failed}</b> · corrupt <b>${status.totals.corrupt}</b></p></header>
<section><h2>Remotes</h2><table id="remotes"><tr><th>remote</th><th>waiting</th><th>oldest</th><th>running</th><th>failed</th><th>pushes (5 min)</th></tr>${remoteRows(status, storeNow) || '<tr><td colspan="6" class="muted">no remote configured</td></tr>'}</table></section>
<section id="trend"><h2>Last hour</h2>${renderTrendCharts(status.trend)}</section>
<section><h2>Backing off</h2>${backingOffTables(status)}</section>
<section><h2>Running pushes</h2>${runningTable(status)}</section>
<section><h2>Failed tasks</h2>${failedTable(status, options.readOnly === true)}</section>
<section><h2>Nodes</h2>${nodesTable(status)}</section>
<section id="recent"><h2>Recent activity</h2>${recentActivity(status, storeNow) || '<p class="muted">none yet</p>'}</section>
<section><h2>Recent takeovers</h2>${takeoversTable(status, storeNow)}</section>
<section><h2>This node's schedule</h2>${scheduleTable(schedule)}</section>
</main>`;
  const auth =
    options.readOnly === true
      ? '<div id="auth" class="read-only">Read-only: this listener is not loopback-only and no replication.httpToken is set, so Retry and Drop are off.</div>'
      : options.tokenRequired
        ? '<div id="auth">Token for Retry and Drop: <input id="token" type="password" autocomplete="off"></div>'
        : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>refrelay</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
${PAGE_STYLE}</style></head><body>
${auth}
${body}
<script>
${PAGE_SCRIPT}</script>
</body></html>
`;
}

/** A table with its header row, or `none` when it has no rows. */
function tableOr(none: string, id: string, headers: readonly string[], rows: string): string {
  return rows === '' ? none : `<table id="${id}"><tr>${headers.map((header) => `<th>${header}</th>`).join('')}</tr>${rows}</table>`;
}

function historyTable(events: ClusterStatus['history'][string]['events'], storeNow: number): string {
  const rows = events
    .map(
      (event) =>
        `<tr><td>${age(storeNow - event.at)} ago</td><td>${escapeHtml(event.node)}</td><td>${escapeHtml(event.event)}</td><td>${escapeHtml(event.detail ?? '')}</td></tr>`,
    )
    .join('');
  return rows === ''
    ? '<p class="muted">no history yet</p>'
    : `<table class="history"><tr><th>when</th><th>node</th><th>event</th><th>detail</th></tr>${rows}</table>`;
}

/** The most recently active URIs, each with its history. */
function recentActivity(status: ClusterStatus, storeNow: number): string {
  return Object.entries(status.history)
    .map(([uriKey, entry]) => ({ uriKey, entry, last: entry.events.at(-1) }))
    .filter((item) => item.last !== undefined)
    .sort((a, b) => b.last!.at - a.last!.at)
    .slice(0, RECENT_URIS)
    .map(
      ({ uriKey, entry, last }) =>
        `<details class="uri" data-uri-key="${escapeHtml(uriKey)}"><summary><code>${escapeHtml(entry.uri ?? uriKey)}</code> — ${escapeHtml(last!.event)} ${age(storeNow - last!.at)} ago on ${escapeHtml(last!.node)}</summary>${historyTable(entry.events, storeNow)}</details>`,
    )
    .join('');
}

/** Pushes within RATE_WINDOW_MS, by remote name. */
function recentPushesByRemote(status: ClusterStatus, storeNow: number): Map<string, number> {
  const remoteOfUriKey = new Map<string, string>();
  for (const remote of status.remotes) for (const uri of remote.uris) remoteOfUriKey.set(uri.uriKey, remote.name);
  const pushes = new Map<string, number>();
  for (const [uriKey, entry] of Object.entries(status.history)) {
    for (const event of entry.events) {
      if (event.event !== 'pushed' || storeNow - event.at > RATE_WINDOW_MS) continue;
      const remote = entry.remote ?? remoteOfUriKey.get(uriKey) ?? '?';
      pushes.set(remote, (pushes.get(remote) ?? 0) + 1);
    }
  }
  return pushes;
}

/** A row per remote, then its URIs (each with why it is not delivered, and its history). */
function remoteRows(status: ClusterStatus, storeNow: number): string {
  const recentPushes = recentPushesByRemote(status, storeNow);
  const backoffOf = new Map(status.backingOff.uris.map((uri) => [uri.uriKey, uri]));
  const whyNot = (uriKey: string): string => {
    const backoff = backoffOf.get(uriKey);
    if (backoff === undefined) return '';
    return ` — <span class="why">backing off after attempt ${backoff.attempts}, next attempt ${formatWait(backoff.nextAttemptInMs)}: ${escapeHtml(backoff.lastError)}</span>`;
  };
  return status.remotes
    .map((remote) => {
      const perMinute = (recentPushes.get(remote.name) ?? 0) / (RATE_WINDOW_MS / 60_000);
      const uris = remote.uris
        .map(
          (uri) =>
            `<details class="uri" data-uri-key="${escapeHtml(uri.uriKey)}"><summary><code>${escapeHtml(uri.uri)}</code> — waiting ${uri.waiting}, oldest ${age(uri.oldestWaitingAgeMs)}, running ${uri.running}, failed ${uri.failed}${whyNot(uri.uriKey)}</summary>${historyTable(status.history[uri.uriKey]?.events ?? [], storeNow)}</details>`,
        )
        .join('');
      return `<tr class="remote" data-remote="${escapeHtml(remote.name)}"><td>${escapeHtml(remote.name)}${remote.configured ? '' : ' <em>(not configured here)</em>'}</td><td class="waiting">${remote.waiting}</td><td>${age(remote.oldestWaitingAgeMs)}</td><td>${remote.running}</td><td>${remote.failed}</td><td>${perMinute.toFixed(1)}/min</td></tr>${
        uris === '' ? '' : `<tr><td colspan="6">${uris}</td></tr>`
      }`;
    })
    .join('');
}

/**
 * Why a URI is not being delivered: its last error and when it is tried again, and the hosts
 * nodes stopped scheduling (open circuits) with theirs.
 */
function backingOffTables(status: ClusterStatus): string {
  const backingOff = status.backingOff.uris
    .slice(0, BACKING_OFF_SHOWN)
    .map(
      (uri) =>
        `<tr class="backing-off" data-uri-key="${uri.uriKey}"><td><code>${escapeHtml(uri.uri)}</code></td><td>${uri.attempts}</td><td>${formatWait(uri.nextAttemptInMs)}</td><td>${escapeHtml(uri.lastError)}</td></tr>`,
    )
    .join('');
  const circuits = status.circuits
    .map(
      (circuit) =>
        `<tr class="circuit"><td><code>${escapeHtml(circuit.host)}</code></td><td>${escapeHtml(circuit.nodeId)}</td><td>${circuit.state}</td><td>${circuit.nextProbeInMs === null ? 'running' : `in ${age(circuit.nextProbeInMs)}`}</td><td>${escapeHtml(circuit.lastError ?? '–')}</td></tr>`,
    )
    .join('');
  return (
    tableOr('<p class="muted" id="no-backing-off">none</p>', 'backing-off', ['URI', 'attempts', 'next attempt', 'last error'], backingOff) +
    tableOr('', 'circuits', ['host (circuit open)', 'node', 'state', 'next probe', 'last error'], circuits)
  );
}

function runningTable(status: ClusterStatus): string {
  const rows = status.running
    .map(
      (claim) =>
        `<tr><td><code>${escapeHtml(claim.uri ?? claim.lockName)}</code></td><td>${escapeHtml(claim.remote ?? '–')}</td><td>${escapeHtml(claim.owner?.nodeId ?? 'unknown')}</td><td>${claim.tasks}</td><td>${age(claim.ageMs)}</td></tr>`,
    )
    .join('');
  return tableOr('<p class="muted">none</p>', 'running', ['URI', 'remote', 'node', 'tasks', 'age'], rows);
}

function failedTable(status: ClusterStatus, readOnly: boolean): string {
  const rows = status.failed
    .map(
      (task) =>
        `<tr class="failed-task" data-name="${escapeHtml(task.name)}"><td><code>${escapeHtml(task.uri)}</code></td><td>${escapeHtml(task.project)}</td><td>${escapeHtml(task.refs.join(' '))}</td><td>${escapeHtml(task.reason ?? 'no reason recorded')}</td><td>${age(task.failedAgeMs)} ago</td><td>${readOnly ? '' : actions(task.uriKey, task.name)}</td></tr>`,
    )
    .join('');
  return tableOr('<p class="muted" id="no-failed">none</p>', 'failed', ['URI', 'project', 'refs', 'reason', 'failed', ''], rows);
}

function nodesTable(status: ClusterStatus): string {
  const rows = status.nodes
    .map(
      (node) =>
        `<tr class="node ${node.state}"><td>${escapeHtml(node.nodeId)}</td><td>${node.state}</td><td>${age(node.lastBeatAgeMs)} ago</td><td>${offset(node.clockOffsetMs)}${node.clockWarning ? ' ⚠ run NTP' : ''}</td></tr>`,
    )
    .join('');
  return tableOr('<p class="muted">none has reported yet</p>', 'nodes', ['node', 'state', 'heartbeat', 'clock offset'], rows);
}

function takeoversTable(status: ClusterStatus, storeNow: number): string {
  const takeovers: Array<{ at: number; node: string; uri: string; detail: string }> = [];
  for (const [uriKey, entry] of Object.entries(status.history)) {
    for (const event of entry.events) {
      if (event.event === 'taken-over') takeovers.push({ at: event.at, node: event.node, uri: entry.uri ?? uriKey, detail: event.detail ?? '' });
    }
  }
  const rows = takeovers
    .sort((a, b) => b.at - a.at)
    .slice(0, 20)
    .map(
      (t) =>
        `<tr><td>${age(storeNow - t.at)} ago</td><td>${escapeHtml(t.node)}</td><td><code>${escapeHtml(t.uri)}</code></td><td>${escapeHtml(t.detail)}</td></tr>`,
    )
    .join('');
  return tableOr('<p class="muted">none</p>', 'takeovers', ['when', 'by', 'URI', 'detail'], rows);
}

function scheduleTable(schedule: NodeSchedule): string {
  const rows = schedule.uris
    .map(
      (uri) =>
        `<tr><td><code>${escapeHtml(uri.uri)}</code></td><td>${escapeHtml(uri.remote)}</td><td>${uri.running ? `pushing for ${age(uri.runningForMs)}` : uri.nextDueInMs === null ? '–' : uri.nextDueInMs <= 0 ? 'due' : `in ${age(uri.nextDueInMs)}`}</td><td>${uri.backoffUntilMs === null ? '–' : `backoff ${age(uri.backoffUntilMs)}`}</td></tr>`,
    )
    .join('');
  return tableOr('<p class="muted">nothing scheduled</p>', 'schedule', ['URI', 'remote', 'next push', 'backoff'], rows);
}

const PAGE_STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.3em 0}td,th{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4}.muted{color:#888}details.uri{margin:.2em 0}code{font-size:12px}
tr.node.stale td{color:#b00}button.retry,button.drop{cursor:pointer}#auth{margin:.5em 0}
.charts{display:flex;flex-wrap:wrap;gap:1em}figure.chart{margin:0}figcaption{font-weight:600;font-size:13px}
svg .axis{font-size:9px;fill:#666}.legend{margin-right:1em}.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:middle}
`;

/** Refreshes the page body every 3 s (keeping open details open) and sends Retry and Drop. */
const PAGE_SCRIPT = `(() => {
  const token = () => { const input = document.getElementById('token'); return input ? input.value : ''; };
  async function refresh() {
    const open = new Set([...document.querySelectorAll('details.uri[open]')].map((d) => d.dataset.uriKey));
    const response = await fetch(location.pathname, { cache: 'no-store' });
    if (!response.ok) return;
    const next = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById('content');
    if (!next) return;
    for (const d of next.querySelectorAll('details.uri')) if (open.has(d.dataset.uriKey)) d.open = true;
    document.getElementById('content').replaceWith(next);
  }
  document.addEventListener('click', async (event) => {
    const button = event.target.closest('button.retry, button.drop');
    if (!button) return;
    const action = button.classList.contains('drop') ? 'drop' : 'retry';
    if (action === 'drop' && !confirm('Drop this failed task? It will not be retried; it is kept in failed/dropped/ for replication.retention, then deleted.')) return;
    button.disabled = true;
    const headers = { 'content-type': 'application/json' };
    if (token()) headers.authorization = 'Bearer ' + token();
    const response = await fetch('/api/' + action, { method: 'POST', headers, body: JSON.stringify({ uriKey: button.dataset.uriKey, names: [button.dataset.name] }) });
    if (!response.ok) { button.disabled = false; alert((action === 'drop' ? 'Drop' : 'Retry') + ' refused: ' + (await response.text())); return; }
    await refresh();
  });
  setInterval(() => { refresh().catch(() => undefined); }, 3000);
})();
`;
