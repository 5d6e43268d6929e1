import { createHmac } from 'node:crypto';
import { webhookReceiverName } from '../config/webhook-url.js';
import type { Log } from '../runtime/log.js';
import { redactText } from '../runtime/redact.js';
import type { Timers } from '../runtime/timers.js';
import type { StreamEvent } from './stream-events.js';

/** Events held per receiver while it is down; beyond that the oldest go, counted. */
export const WEBHOOK_QUEUE_MAX = 1000;
const RETRY_FIRST_MS = 1000;
const RETRY_CAP_MS = 60_000;
const POST_TIMEOUT_MS = 10_000;
/** The signature header, `sha256=<hex>` of the body with `webhookSecret` (as GitHub's X-Hub-Signature-256). */
export const SIGNATURE_HEADER = 'x-refrelay-signature-256';

/** Sends one body; resolves with the HTTP status, rejects when no answer came. */
export type PostJson = (url: string, body: string, headers: Readonly<Record<string, string>>, signal: AbortSignal) => Promise<number>;

export const fetchPost: PostJson = async (url, body, headers, signal) => {
  const response = await fetch(url, { method: 'POST', body, headers, signal, redirect: 'error' });
  await response.body?.cancel();
  return response.status;
};

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface WebhookDeps {
  readonly post: PostJson;
  readonly timers: Timers;
  readonly log: Log;
  readonly secret: string | undefined;
  /** Counts an event dropped for this receiver (metrics). */
  readonly onDropped: (receiver: string) => void;
}

/**
 * One `replication.webhookUrl`: the events as JSON POSTs, one per event, in order, one at a
 * time. A failure (no answer, or a status outside 2xx) is retried after 1 s, doubling to a
 * minute, for as long as the event is queued; the queue is bounded, so a receiver down for long
 * costs its oldest events (counted, and logged once it answers again), never the node's memory.
 */
export class WebhookReceiver {
  private readonly queue: { body: string; type: string }[] = [];
  private sending = false;
  private stopped = false;
  private retryMs = RETRY_FIRST_MS;
  private failingSince: string | undefined;
  private droppedWhileFailing = 0;
  private cancelRetry: (() => void) | undefined;
  private readonly inFlight = new AbortController();
  readonly name: string;

  constructor(
    private readonly url: string,
    private readonly deps: WebhookDeps,
  ) {
    this.name = webhookReceiverName(url);
  }

  get queued(): number {
    return this.queue.length;
  }

  enqueue(event: StreamEvent): void {
    if (this.stopped) return;
    this.queue.push({ body: JSON.stringify(event), type: event.type });
    if (this.queue.length > WEBHOOK_QUEUE_MAX) {
      this.queue.shift();
      this.droppedWhileFailing++;
      this.deps.onDropped(this.name);
    }
    this.pump();
  }

  stop(): void {
    this.stopped = true;
    this.cancelRetry?.();
    this.inFlight.abort();
  }

  private pump(): void {
    if (this.sending || this.stopped || this.queue.length === 0) return;
    this.sending = true;
    void this.sendHead();
  }

  private async sendHead(): Promise<void> {
    const head = this.queue[0]!;
    const failure = await this.deliver(head.body, head.type);
    if (this.stopped) return;
    if (failure === undefined) {
      // Dropped while in flight (the queue overflowed): the head is another event by now.
      if (this.queue[0] === head) this.queue.shift();
      this.recovered();
      this.sending = false;
      this.pump();
      return;
    }
    if (this.failingSince === undefined) {
      this.failingSince = failure;
      this.droppedWhileFailing = 0;
      this.deps.log.warn(
        { receiver: this.name, err: failure, queued: this.queue.length },
        'webhook receiver failed; retrying, the oldest events are dropped beyond the queue limit',
      );
    }
    this.cancelRetry = this.deps.timers.after(this.retryMs, () => {
      this.sending = false;
      this.pump();
    });
    this.retryMs = Math.min(this.retryMs * 2, RETRY_CAP_MS);
  }

  private async deliver(body: string, type: string): Promise<string | undefined> {
    const headers: Record<string, string> = { 'content-type': 'application/json', 'x-refrelay-event': type };
    if (this.deps.secret !== undefined) headers[SIGNATURE_HEADER] = signature(this.deps.secret, body);
    try {
      const status = await this.deps.post(this.url, body, headers, AbortSignal.any([this.inFlight.signal, AbortSignal.timeout(POST_TIMEOUT_MS)]));
      return status >= 200 && status < 300 ? undefined : `HTTP ${status}`;
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      return redactText(cause ?? (error instanceof Error ? error.message : String(error)));
    }
  }

  private recovered(): void {
    this.retryMs = RETRY_FIRST_MS;
    if (this.failingSince === undefined) return;
    this.deps.log.info({ receiver: this.name, dropped: this.droppedWhileFailing }, 'webhook receiver answers again');
    this.failingSince = undefined;
    this.droppedWhileFailing = 0;
  }
}
