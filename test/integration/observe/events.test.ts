import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../support/cli.js';
import { freePort } from '../../support/free-port.js';
import { appSource, git, initBare, writeHook } from '../../support/git.js';
import { RefrelayNode, writeConfig } from '../../support/refrelay-node.js';
import { waitUntil } from '../../support/store-files.js';
import { useTempDirs } from '../../support/temp-dir.js';

const tempDir = useTempDirs();
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

interface Received {
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
  readonly event: { type: string; ref: string; status?: string; refStatus?: string; reason?: string; targetUri: string; nodesCount?: number };
}

/** A webhook receiver on 127.0.0.1 that records every POST and answers 204. */
async function startReceiver(port = 0): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      received.push({ headers: request.headers, body, event: JSON.parse(body) as Received['event'] });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  stops.push(() => new Promise((resolve) => server.close(() => resolve())));
  const address = server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}/hook`, received };
}

function site(root: string, httpPort: number, webhookUrl: string): { config: string; dest: string } {
  const { base, source } = appSource(root);
  git(source, ['update-ref', 'refs/heads/blocked', 'refs/heads/main']);
  const dest = initBare(join(root, 'dr', 'app.git'));
  writeHook(dest, 'update', '#!/bin/sh\n[ "$1" = refs/heads/blocked ] && { echo "policy: no blocked" >&2; exit 1; }\nexit 0\n');
  const config = writeConfig(join(root, 'replication.config'), [
    '[replication]',
    `  storePath = ${join(root, 'store')}`,
    `  basePath = ${base}`,
    '  distributionInterval = 200ms',
    '  randomDelay = 100ms',
    `  httpListen = 127.0.0.1:${httpPort}`,
    `  webhookUrl = ${webhookUrl}`,
    '[remote "dr"]',
    `  url = ${join(root, 'dr')}/\${name}.git`,
    '  replicationDelay = 0',
  ]);
  writeFileSync(join(root, 'secure.config'), '[replication]\n  webhookSecret = s3cret\n', { mode: 0o600 });
  return { config, dest };
}

function startNode(config: string): RefrelayNode {
  const node = RefrelayNode.start({ config, nodeId: 'n1' });
  stops.push(() => node.stop());
  return node;
}

const PHASES = ['ref-replication-scheduled', 'ref-replicated', 'ref-replication-done'];

/**
 * The first event of each (type, ref), as [type, ref, status, refStatus], sorted: a retried ref
 * may repeat, and git may answer for the refs of one push in any order. Checks on the way that
 * each ref's events came scheduled, then replicated, then done.
 */
function firstOfEach(events: readonly Received['event'][]): string[][] {
  const seen = new Set<string>();
  const first = events.filter((event) => !seen.has(`${event.type} ${event.ref}`) && seen.add(`${event.type} ${event.ref}`));
  for (const ref of new Set(first.map((event) => event.ref))) {
    expect(
      first.filter((event) => event.ref === ref).map((event) => event.type),
      ref,
    ).toEqual(PHASES);
  }
  return first.map((event) => [event.type, event.ref, event.status ?? '', event.refStatus ?? '']).sort();
}

const EXPECTED = [
  ['ref-replicated', 'refs/heads/blocked', 'failed', 'REJECTED_OTHER_REASON'],
  ['ref-replicated', 'refs/heads/main', 'succeeded', 'OK'],
  ['ref-replication-done', 'refs/heads/blocked', '', ''],
  ['ref-replication-done', 'refs/heads/main', '', ''],
  ['ref-replication-scheduled', 'refs/heads/blocked', '', ''],
  ['ref-replication-scheduled', 'refs/heads/main', '', ''],
];

describe('stream events of a real push', () => {
  it('reach GET /events and the webhook receiver, signed with webhookSecret, a rejected ref included', async () => {
    const root = tempDir('refrelay-events');
    const receiver = await startReceiver();
    const httpPort = await freePort();
    const { config, dest } = site(root, httpPort, receiver.url);
    const node = startNode(config);
    await node.waitForLog((line) => line.msg.startsWith('http endpoints listening'));
    const listening = new AbortController();
    const stream = await fetch(`http://127.0.0.1:${httpPort}/events`, { signal: listening.signal });
    expect(stream.status).toBe(200);
    let sse = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of stream.body!) sse += decoder.decode(chunk as Uint8Array);
    })().catch(() => undefined);

    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main', '--ref', 'refs/heads/blocked']).status).toBe(0);
    await waitUntil(
      'two done events at the receiver',
      () => receiver.received.filter((item) => item.event.type === 'ref-replication-done').length >= 2,
      30_000,
    );
    await waitUntil('two done events on the stream', () => (sse.match(/event: ref-replication-done/g) ?? []).length >= 2, 10_000);

    const hooked = receiver.received.map((item) => item.event);
    expect(firstOfEach(hooked)).toEqual(EXPECTED);
    for (const item of receiver.received) {
      expect(item.headers['x-refrelay-signature-256']).toBe(`sha256=${createHmac('sha256', 's3cret').update(item.body).digest('hex')}`);
      expect(item.headers['x-refrelay-event']).toBe(item.event.type);
      expect(item.event.targetUri).toBe(dest);
    }
    expect(hooked.find((event) => event.type === 'ref-replicated' && event.ref === 'refs/heads/blocked')?.reason).toContain('hook declined');
    expect(hooked.find((event) => event.type === 'ref-replication-done')?.nodesCount).toBe(1);

    const streamed = [...sse.matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]!) as Received['event']);
    expect(firstOfEach(streamed)).toEqual(EXPECTED);
    expect(sse).toMatch(/^id: 1\nevent: ref-replication-scheduled\n/m);
    listening.abort();
    await reading;
    expect(node.problems()).toEqual([]);
  });

  it('a receiver that is down gets the events once it answers: they wait in its queue and are retried', async () => {
    const root = tempDir('refrelay-events-down');
    const receiverPort = await freePort();
    const { config } = site(root, await freePort(), `http://127.0.0.1:${receiverPort}/hook`);
    const node = startNode(config);
    expect(runCli(['enqueue', '--config', config, '--project', 'app', '--ref', 'refs/heads/main']).status).toBe(0);
    await node.waitForLog((line) => line.msg.startsWith('webhook receiver failed'));

    const receiver = await startReceiver(receiverPort);
    await waitUntil('a done event at the receiver', () => receiver.received.some((item) => item.event.type === 'ref-replication-done'), 30_000);
    expect(firstOfEach(receiver.received.map((item) => item.event))).toEqual([
      ['ref-replicated', 'refs/heads/main', 'succeeded', 'OK'],
      ['ref-replication-done', 'refs/heads/main', '', ''],
      ['ref-replication-scheduled', 'refs/heads/main', '', ''],
    ]);
    const recovered = await node.waitForLog((line) => line.msg === 'webhook receiver answers again');
    expect(recovered).toMatchObject({ receiver: `http://127.0.0.1:${receiverPort}/hook`, dropped: 0 });
  });
});
