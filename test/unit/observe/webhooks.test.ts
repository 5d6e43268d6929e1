import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { webhookReceiverName } from '../../../src/config/webhook-url.js';
import { silentLog } from '../../../src/runtime/log.js';
import type { Timers } from '../../../src/runtime/timers.js';
import type { StreamEvent } from '../../../src/observe/stream-events.js';
import { SIGNATURE_HEADER, WEBHOOK_QUEUE_MAX, WebhookReceiver, type PostJson } from '../../../src/observe/webhooks.js';

/** Timers fired by the test: `fire()` runs what is due, in order. */
class ManualTimers implements Timers {
  readonly pending: { delayMs: number; action: () => void }[] = [];
  every(): () => void {
    return () => undefined;
  }
  after(delayMs: number, action: () => void): () => void {
    const entry = { delayMs, action };
    this.pending.push(entry);
    return () => this.pending.splice(this.pending.indexOf(entry), 1);
  }
  fire(): number {
    const next = this.pending.shift();
    next?.action();
    return next?.delayMs ?? -1;
  }
}

const event = (ref: string): StreamEvent => ({
  type: 'ref-replication-done',
  project: 'app',
  ref,
  targetNode: 'h',
  targetUri: 'git://h/app.git',
  remote: 'dr',
  nodeId: 'n1',
  eventCreatedOn: 1,
  nodesCount: 1,
});

/** A receiver answering with the statuses given, in turn (then 200); each request is recorded. */
function receiverAnswering(...statuses: (number | Error)[]): { post: PostJson; bodies: string[]; headers: Record<string, string>[] } {
  const bodies: string[] = [];
  const headers: Record<string, string>[] = [];
  const post: PostJson = async (_url, body, sent) => {
    bodies.push(body);
    headers.push({ ...sent });
    const answer = statuses.shift() ?? 200;
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return { post, bodies, headers };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('a webhook receiver', () => {
  it('gets each event as one signed JSON POST, in order', async () => {
    const answering = receiverAnswering();
    const receiver = new WebhookReceiver('http://ci.example/hook', {
      post: answering.post,
      timers: new ManualTimers(),
      log: silentLog,
      secret: 's3cret',
      onDropped: () => undefined,
    });
    receiver.enqueue(event('refs/heads/a'));
    receiver.enqueue(event('refs/heads/b'));
    await settle();
    await settle();
    expect(answering.bodies.map((body) => (JSON.parse(body) as StreamEvent).ref)).toEqual(['refs/heads/a', 'refs/heads/b']);
    const expected = `sha256=${createHmac('sha256', 's3cret').update(answering.bodies[0]!).digest('hex')}`;
    expect(answering.headers[0]).toMatchObject({
      'content-type': 'application/json',
      'x-refrelay-event': 'ref-replication-done',
      [SIGNATURE_HEADER]: expected,
    });
    expect(receiver.queued).toBe(0);
  });

  it('is retried after a failure, 1 s then doubling, and keeps the order', async () => {
    const timers = new ManualTimers();
    const answering = receiverAnswering(503, new Error('ECONNREFUSED'));
    const receiver = new WebhookReceiver('http://ci.example/hook', {
      post: answering.post,
      timers,
      log: silentLog,
      secret: undefined,
      onDropped: () => undefined,
    });
    receiver.enqueue(event('refs/heads/a'));
    receiver.enqueue(event('refs/heads/b'));
    await settle();
    expect(answering.bodies).toHaveLength(1);
    expect(timers.fire()).toBe(1000);
    await settle();
    expect(timers.fire()).toBe(2000);
    await settle();
    await settle();
    expect(answering.bodies.map((body) => (JSON.parse(body) as StreamEvent).ref)).toEqual(['refs/heads/a', 'refs/heads/a', 'refs/heads/a', 'refs/heads/b']);
    expect(answering.headers[0]![SIGNATURE_HEADER]).toBeUndefined();
    expect(receiver.queued).toBe(0);
  });

  it('while down holds at most WEBHOOK_QUEUE_MAX events, dropping the oldest and counting each', async () => {
    const timers = new ManualTimers();
    const answering = receiverAnswering(...Array.from({ length: 5 }, () => 500));
    let dropped = 0;
    const receiver = new WebhookReceiver('http://ci.example/hook', {
      post: answering.post,
      timers,
      log: silentLog,
      secret: undefined,
      onDropped: () => dropped++,
    });
    for (let i = 0; i < WEBHOOK_QUEUE_MAX + 5; i++) receiver.enqueue(event(`refs/heads/r${i}`));
    await settle();
    expect(dropped).toBe(5);
    expect(receiver.queued).toBe(WEBHOOK_QUEUE_MAX);
    while (timers.pending.length > 0) {
      timers.fire();
      await settle();
    }
    for (let i = 0; i < WEBHOOK_QUEUE_MAX; i++) await settle();
    const tried = answering.bodies.map((body) => (JSON.parse(body) as StreamEvent).ref).filter((ref, i, all) => ref !== all[i - 1]);
    // r0 was in flight when it was dropped; r1–r4 never went; every later event went once it answered, in order.
    expect(tried).toEqual(['refs/heads/r0', ...Array.from({ length: WEBHOOK_QUEUE_MAX }, (_, i) => `refs/heads/r${i + 5}`)]);
    expect(receiver.queued).toBe(0);
  });

  it('is named in logs and config check without its password or query', () => {
    expect(webhookReceiverName('https://ci:secret@ci.example/hook?token=abc')).toBe('https://ci.example/hook');
  });
});
