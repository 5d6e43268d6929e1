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
  const remoteOfUriKey = new Map<string, string>();
  for (const remote of status.remotes) for (const uri of remote.uris) remoteOfUriKey.set(uri.uriKey, remote.name);
  const recentPushes = new Map<string, number>();
  const takeovers: Array<{ at: number; node: string; uri: string; detail: string }> = [];
  for (const [uriKey, entry] of Object.entries(status.history)) {
    for (const event of entry.events) {
      if (event.event === 'pushed' && storeNow - event.at <= RATE_WINDOW_MS) {
        const remote = entry.remote ?? remoteOfUriKey.get(uriKey) ?? '?';
        recentPushes.set(remote, (recentPushes.get(remote) ?? 0) + 1);
      }
      if (event.event === 'taken-over') takeovers.push({ at: event.at, node: event.node, uri: entry.uri ?? uriKey, detail: event.detail ?? '' });
    }
  }
  takeovers.sort((a, b) => b.at - a.at);

  const historyTable = (events: ClusterStatus['history'][string]['events']): string => {
    const rows = events
      .map(
        (event) =>
          `<tr><td>${age(storeNow - event.at)} ago</td><td>${escapeHtml(event.node)}</td><td>${escapeHtml(event.event)}</td><td>${escapeHtml(event.detail ?? '')}</td></tr>`,
      )
      .join('');
    return rows === ''
      ? '<p class="muted">no history yet</p>'
      : `<table class="history"><tr><th>when</th><th>node</th><th>event</th><th>detail</th></tr>${rows}</table>`;
  };
  const recent = Object.entries(status.history)
    .map(([uriKey, entry]) => ({ uriKey, entry, last: entry.events.at(-1) }))
    .filter((item) => item.last !== undefined)
    .sort((a, b) => b.last!.at - a.last!.at)
    .slice(0, RECENT_URIS)
    .map(
      ({ uriKey, entry, last }) =>
        `<details class="uri" data-uri-key="${uriKey}"><summary><code>${escapeHtml(entry.uri ?? uriKey)}</code> — ${escapeHtml(last!.event)} ${age(storeNow - last!.at)} ago on ${escapeHtml(last!.node)}</summary>${historyTable(entry.events)}</details>`,
    )
    .join('');

  const backoffOf = new Map(status.backingOff.uris.map((uri) => [uri.uriKey, uri]));
  const whyNot = (uriKey: string): string => {
    const backoff = backoffOf.get(uriKey);
    if (backoff === undefined) return '';
    return ` — <span class="why">backing off after attempt ${backoff.attempts}, next attempt ${formatWait(backoff.nextAttemptInMs)}: ${escapeHtml(backoff.lastError)}</span>`;
  };
  const remotes = status.remotes
    .map((remote) => {
      const perMinute = (recentPushes.get(remote.name) ?? 0) / (RATE_WINDOW_MS / 60_000);
      const uris = remote.uris
        .map(
          (uri) =>
            `<details class="uri" data-uri-key="${uri.uriKey}"><summary><code>${escapeHtml(uri.uri)}</code> — waiting ${uri.waiting}, oldest ${age(uri.oldestWaitingAgeMs)}, running ${uri.running}, failed ${uri.failed}${whyNot(uri.uriKey)}</summary>${historyTable(status.history[uri.uriKey]?.events ?? [])}</details>`,
        )
        .join('');
      return `<tr class="remote" data-remote="${escapeHtml(remote.name)}"><td>${escapeHtml(remote.name)}${remote.configured ? '' : ' <em>(not configured here)</em>'}</td><td class="waiting">${remote.waiting}</td><td>${age(remote.oldestWaitingAgeMs)}</td><td>${remote.running}</td><td>${remote.failed}</td><td>${perMinute.toFixed(1)}/min</td></tr>${
        uris === '' ? '' : `<tr><td colspan="6">${uris}</td></tr>`
      }`;
    })
    .join('');

  // Why a URI is not being delivered: its last error and when it is tried again, and the hosts
  // nodes stopped scheduling (open circuits) with theirs.
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

  const running = status.running
    .map(
      (claim) =>
        `<tr><td><code>${escapeHtml(claim.uri ?? claim.lockName)}</code></td><td>${escapeHtml(claim.remote ?? '–')}</td><td>${escapeHtml(claim.owner?.nodeId ?? 'unknown')}</td><td>${claim.tasks}</td><td>${age(claim.ageMs)}</td></tr>`,
    )
    .join('');

  const failed = status.failed
    .map(
      (task) =>
        `<tr class="failed-task" data-name="${escapeHtml(task.name)}"><td><code>${escapeHtml(task.uri)}</code></td><td>${escapeHtml(task.project)}</td><td>${escapeHtml(task.refs.join(' '))}</td><td>${escapeHtml(task.reason ?? 'no reason recorded')}</td><td>${age(task.failedAgeMs)} ago</td><td>${options.readOnly === true ? '' : actions(task.uriKey, task.name)}</td></tr>`,
    )
    .join('');

  const nodes = status.nodes
    .map(
      (node) =>
        `<tr class="node ${node.state}"><td>${escapeHtml(node.nodeId)}</td><td>${node.state}</td><td>${age(node.lastBeatAgeMs)} ago</td><td>${offset(node.clockOffsetMs)}${node.clockWarning ? ' ⚠ run NTP' : ''}</td></tr>`,
    )
    .join('');

  const scheduled = schedule.uris
    .map(
      (uri) =>
        `<tr><td><code>${escapeHtml(uri.uri)}</code></td><td>${escapeHtml(uri.remote)}</td><td>${uri.running ? `pushing for ${age(uri.runningForMs)}` : uri.nextDueInMs === null ? '–' : uri.nextDueInMs <= 0 ? 'due' : `in ${age(uri.nextDueInMs)}`}</td><td>${uri.backoffUntilMs === null ? '–' : `backoff ${age(uri.backoffUntilMs)}`}</td></tr>`,
    )
    .join('');

  const takeoverRows = takeovers
    .slice(0, 20)
    .map(
      (t) =>
        `<tr><td>${age(storeNow - t.at)} ago</td><td>${escapeHtml(t.node)}</td><td><code>${escapeHtml(t.uri)}</code></td><td>${escapeHtml(t.detail)}</td></tr>`,
    )
    .join('');

  const body = `<main id="content">
<header><h1>refrelay</h1><p>store <code>${escapeHtml(status.storePath)}</code> · seen from node <b>${escapeHtml(schedule.nodeId)}</b> · ${escapeHtml(status.generatedAt)}</p>
<p class="totals">waiting <b id="total-waiting">${status.totals.waiting}</b> · running <b>${status.totals.running}</b> · failed <b id="total-failed">${status.totals.failed}</b> · corrupt <b>${status.totals.corrupt}</b></p></header>
<section><h2>Remotes</h2><table id="remotes"><tr><th>remote</th><th>waiting</th><th>oldest</th><th>running</th><th>failed</th><th>pushes (5 min)</th></tr>${remotes || '<tr><td colspan="6" class="muted">no remote configured</td></tr>'}</table></section>
<section id="trend"><h2>Last hour</h2>${renderTrendCharts(status.trend)}</section>
<section><h2>Backing off</h2>${backingOff === '' ? '<p class="muted" id="no-backing-off">none</p>' : `<table id="backing-off"><tr><th>URI</th><th>attempts</th><th>next attempt</th><th>last error</th></tr>${backingOff}</table>`}${
    circuits === ''
      ? ''
      : `<table id="circuits"><tr><th>host (circuit open)</th><th>node</th><th>state</th><th>next probe</th><th>last error</th></tr>${circuits}</table>`
  }</section>
<section><h2>Running pushes</h2>${running === '' ? '<p class="muted">none</p>' : `<table id="running"><tr><th>URI</th><th>remote</th><th>node</th><th>tasks</th><th>age</th></tr>${running}</table>`}</section>
<section><h2>Failed tasks</h2>${failed === '' ? '<p class="muted" id="no-failed">none</p>' : `<table id="failed"><tr><th>URI</th><th>project</th><th>refs</th><th>reason</th><th>failed</th><th></th></tr>${failed}</table>`}</section>
<section><h2>Nodes</h2>${nodes === '' ? '<p class="muted">none has reported yet</p>' : `<table id="nodes"><tr><th>node</th><th>state</th><th>heartbeat</th><th>clock offset</th></tr>${nodes}</table>`}</section>
<section id="recent"><h2>Recent activity</h2>${recent === '' ? '<p class="muted">none yet</p>' : recent}</section>
<section><h2>Recent takeovers</h2>${takeoverRows === '' ? '<p class="muted">none</p>' : `<table id="takeovers"><tr><th>when</th><th>by</th><th>URI</th><th>detail</th></tr>${takeoverRows}</table>`}</section>
<section><h2>This node's schedule</h2>${scheduled === '' ? '<p class="muted">nothing scheduled</p>' : `<table id="schedule"><tr><th>URI</th><th>remote</th><th>next push</th><th>backoff</th></tr>${scheduled}</table>`}</section>
</main>`;

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>refrelay</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:.3em 0}td,th{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f4f4f4}.muted{color:#888}details.uri{margin:.2em 0}code{font-size:12px}
tr.node.stale td{color:#b00}button.retry,button.drop{cursor:pointer}#auth{margin:.5em 0}
.charts{display:flex;flex-wrap:wrap;gap:1em}figure.chart{margin:0}figcaption{font-weight:600;font-size:13px}
svg .axis{font-size:9px;fill:#666}.legend{margin-right:1em}.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:middle}
</style></head><body>
${options.readOnly === true ? '<div id="auth" class="read-only">Read-only: this listener is not loopback-only and no replication.httpToken is set, so Retry and Drop are off.</div>' : options.tokenRequired ? '<div id="auth">Token for Retry and Drop: <input id="token" type="password" autocomplete="off"></div>' : ''}
${body}
<script>
(() => {
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
</script>
</body></html>
`;
}
