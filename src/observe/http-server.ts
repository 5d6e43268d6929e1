import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { ClusterStatus } from './cluster-status.js';
import { renderDashboard } from './dashboard.js';
import { timesJson } from './json-times.js';
import type { Log } from '../runtime/log.js';
import type { NodeMetrics } from './metrics.js';
import type { NodeSchedule } from '../schedule/schedule-view.js';
import { URI_KEY_PATTERN } from '../store/store-paths.js';

export interface Health {
  readonly ok: boolean;
  readonly reasons: readonly string[];
}

export interface HttpDeps {
  readonly metrics: NodeMetrics;
  /** The store's view of the cluster, at most a second old. */
  readonly clusterStatus: () => Promise<ClusterStatus>;
  readonly schedule: () => NodeSchedule;
  readonly health: () => Health;
  readonly caughtUpThresholdMs: () => number;
  /** The oldest waiting task's age per remote that has any, as the node's last pass saw it; undefined (before it): from clusterStatus. */
  readonly oldestWaiting?: () => ReadonlyMap<string, number> | undefined;
  /** Tasks spooled on this machine and not in the store yet: the node is not caught up while there are any. */
  readonly spooledTasks?: () => number;
  /** Remotes with work waiting whose last push from this node failed and that delivered nothing for longer than the threshold (RemoteDelivery). */
  readonly failingRemotes?: (waiting: Iterable<string>, thresholdMs: number) => string[];
  /** Puts failed tasks back in the queue: all of a URI, or the named task files. Returns how many. */
  readonly retry: (request: { uriKey: string; names?: readonly string[] }) => Promise<number>;
  /** Drops the named failed task files of a URI (failed/dropped/); `from` is the client's address, for the record. Returns how many. */
  readonly drop: (request: { uriKey: string; names: readonly string[]; from: string }) => Promise<number>;
  /** Starts a Server-Sent Events stream of this node's stream events on the response (GET /events). */
  readonly events?: (response: ServerResponse) => void;
  /** Required for POSTs and /events unless the listener is loopback-only; undefined: they are refused off loopback. */
  readonly token: () => Promise<string | undefined>;
  readonly log: Log;
}

export interface RunningHttpServer {
  /** `host:port` actually bound (port 0 picks one). */
  readonly address: string;
  close(): Promise<void>;
}

export function parseListen(listen: string): { host: string; port: number } {
  const colon = listen.lastIndexOf(':');
  const host = listen.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  return { host, port: Number(listen.slice(colon + 1)) };
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * /metrics, /healthz, /readyz, /status, the dashboard at /, the event stream at /events, POST /api/retry and POST /api/drop.
 * Mutating requests and /events need the token unless the listener is loopback-only (`tokenRequired` overrides that).
 */
export async function startHttpServer(listen: string, deps: HttpDeps, options: { tokenRequired?: boolean } = {}): Promise<RunningHttpServer> {
  const { host, port } = parseListen(listen);
  const loopbackOnly = !(options.tokenRequired ?? !isLoopbackHost(host));
  const server = createServer((request, response) => {
    handle(request, response, deps, loopbackOnly).catch((error: unknown) => {
      deps.log.warn({ path: request.url, err: error instanceof Error ? error.message : String(error) }, 'http request failed');
      if (!response.headersSent) send(response, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else response.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  const address = typeof bound === 'object' && bound !== null ? `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}` : listen;
  return { address, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

async function handle(request: IncomingMessage, response: ServerResponse, deps: HttpDeps, loopbackOnly: boolean): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://refrelay');
  const route = `${request.method ?? 'GET'} ${url.pathname}`;
  switch (route) {
    case 'GET /metrics': {
      deps.metrics.updateCluster(await deps.clusterStatus());
      return send(response, 200, deps.metrics.contentType, await deps.metrics.text());
    }
    case 'GET /healthz': {
      const health = deps.health();
      return sendJson(response, health.ok ? 200 : 503, { status: health.ok ? 'ok' : 'unhealthy', reasons: health.reasons });
    }
    case 'GET /readyz': {
      const ages = await oldestWaiting(deps);
      const threshold = deps.caughtUpThresholdMs();
      const oldest = ages.size === 0 ? null : Math.max(...ages.values());
      const spooledTasks = deps.spooledTasks?.() ?? 0;
      const waitedTooLong = [...ages].filter(([, age]) => age > threshold).map(([remote]) => remote);
      const failing = deps.failingRemotes?.(ages.keys(), threshold) ?? [];
      const lagging = [...new Set([...waitedTooLong, ...failing])].sort();
      const ready = lagging.length === 0 && spooledTasks === 0;
      return sendJson(response, ready ? 200 : 503, {
        status: ready ? 'caught up' : 'lagging',
        oldestWaitingAgeMs: oldest,
        caughtUpThresholdMs: threshold,
        laggingRemotes: lagging,
        failingRemotes: failing,
        spooledTasks,
      });
    }
    case 'GET /status':
      return sendJson(response, 200, { ...(await deps.clusterStatus()), node: deps.schedule() });
    case 'GET /':
      return send(
        response,
        200,
        'text/html; charset=utf-8',
        renderDashboard(await deps.clusterStatus(), deps.schedule(), {
          tokenRequired: !loopbackOnly,
          readOnly: !loopbackOnly && (await deps.token()) === undefined,
        }),
      );
    case 'GET /events':
      if (deps.events === undefined) return send(response, 404, 'text/plain; charset=utf-8', 'not found\n');
      if (!(await authorized(request, response, deps, loopbackOnly, 'the event stream'))) return;
      return deps.events(response);
    case 'POST /api/retry':
      return retry(request, response, deps, loopbackOnly);
    case 'POST /api/drop':
      return drop(request, response, deps, loopbackOnly);
    default:
      if (['/metrics', '/healthz', '/readyz', '/status', '/', '/events', '/api/retry', '/api/drop'].includes(url.pathname)) {
        return send(response, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
      }
      return send(response, 404, 'text/plain; charset=utf-8', 'not found\n');
  }
}

async function oldestWaiting(deps: HttpDeps): Promise<ReadonlyMap<string, number>> {
  const fromPass = deps.oldestWaiting?.();
  if (fromPass !== undefined) return fromPass;
  const { remotes } = await deps.clusterStatus();
  return new Map(remotes.flatMap((remote) => (remote.oldestWaitingAgeMs === null ? [] : [[remote.name, remote.oldestWaitingAgeMs] as const])));
}

async function retry(request: IncomingMessage, response: ServerResponse, deps: HttpDeps, loopbackOnly: boolean): Promise<void> {
  const fields = await failedTasksRequest(request, response, deps, loopbackOnly, 'retry');
  if (fields === undefined) return;
  const retried = await deps.retry(fields);
  deps.log.info({ uriKey: fields.uriKey, tasks: retried, from: request.socket.remoteAddress }, 'failed tasks put back in the queue (http)');
  return sendJson(response, 200, { retried });
}

/** As retry, but only named task files: one request drops what the page showed, never a whole URI unseen. */
async function drop(request: IncomingMessage, response: ServerResponse, deps: HttpDeps, loopbackOnly: boolean): Promise<void> {
  const fields = await failedTasksRequest(request, response, deps, loopbackOnly, 'drop');
  if (fields === undefined) return;
  if (fields.names === undefined || fields.names.length === 0) return sendJson(response, 400, { error: 'names must list the task files to drop' });
  const from = request.socket.remoteAddress ?? 'unknown';
  const dropped = await deps.drop({ uriKey: fields.uriKey, names: fields.names, from });
  deps.log.info({ uriKey: fields.uriKey, tasks: dropped, from }, 'failed tasks dropped (http)');
  return sendJson(response, 200, { dropped });
}

/**
 * Off a loopback-only listener, a request that acts on the queue or follows the event stream
 * needs the token as `Authorization: Bearer`; false when the refusal (403 none set, 401 wrong)
 * has been sent.
 */
async function authorized(request: IncomingMessage, response: ServerResponse, deps: HttpDeps, loopbackOnly: boolean, what: string): Promise<boolean> {
  if (loopbackOnly) return true;
  const token = await deps.token();
  if (token === undefined) {
    sendJson(response, 403, { error: `${what} over the network needs replication.httpToken (or httpTokenFile); none is set` });
    return false;
  }
  const given = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
  if (sameSecret(given, token)) return true;
  sendJson(response, 401, { error: 'missing or wrong token' });
  return false;
}

/**
 * The token check and body of a request about failed tasks, `{uriKey, names?}`; undefined when
 * the answer (401, 403, 400) has been sent.
 */
async function failedTasksRequest(
  request: IncomingMessage,
  response: ServerResponse,
  deps: HttpDeps,
  loopbackOnly: boolean,
  action: 'retry' | 'drop',
): Promise<{ uriKey: string; names?: string[] } | undefined> {
  if (!(await authorized(request, response, deps, loopbackOnly, action))) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(await readBody(request, 64 * 1024));
  } catch (error) {
    return void sendJson(response, 400, { error: `the body must be JSON: ${error instanceof Error ? error.message : String(error)}` });
  }
  const fields = (body ?? {}) as { uriKey?: unknown; names?: unknown };
  if (typeof fields.uriKey !== 'string' || !URI_KEY_PATTERN.test(fields.uriKey))
    return void sendJson(response, 400, { error: 'uriKey must be the 40-hex key of a URI' });
  if (fields.names !== undefined && !(Array.isArray(fields.names) && fields.names.every((name) => typeof name === 'string'))) {
    return void sendJson(response, 400, { error: 'names must be a list of task file names' });
  }
  return { uriKey: fields.uriKey, ...(fields.names === undefined ? {} : { names: fields.names as string[] }) };
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function readBody(request: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error(`larger than ${limit} bytes`));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8') || '{}'));
    request.on('error', reject);
  });
}

function send(response: ServerResponse, status: number, contentType: string, body: string): void {
  response.writeHead(status, { 'content-type': contentType, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  response.end(body);
}

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  send(response, status, 'application/json; charset=utf-8', timesJson(value));
}
