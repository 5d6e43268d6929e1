import type { ServerResponse } from 'node:http';
import type { Clock } from '../runtime/clock.js';
import type { Log } from '../runtime/log.js';
import type { Timers } from '../runtime/timers.js';
import type { ReplicationEvent } from '../schedule/events.js';
import { EventStream, KEEPALIVE_EVERY_MS } from './event-stream.js';
import { streamEventsOf } from './stream-events.js';
import { fetchPost, WebhookReceiver } from './webhooks.js';

export interface EventPublisherOptions {
  readonly nodeId: string;
  readonly webhookUrls: readonly string[];
  readonly webhookSecret: string | undefined;
  readonly clock: Clock;
  readonly timers: Timers;
  readonly log: Log;
  readonly onWebhookDropped: () => void;
}

/** This node's push results as stream events: to the listeners of GET /events and to every webhook receiver. */
export class EventPublisher {
  private readonly stream = new EventStream();
  private readonly receivers: WebhookReceiver[];
  private readonly stopKeepAlive: () => void;

  constructor(private readonly options: EventPublisherOptions) {
    this.receivers = options.webhookUrls.map(
      (url) =>
        new WebhookReceiver(url, {
          post: fetchPost,
          timers: options.timers,
          log: options.log,
          secret: options.webhookSecret,
          onDropped: options.onWebhookDropped,
        }),
    );
    this.stopKeepAlive = options.timers.every(KEEPALIVE_EVERY_MS, () => this.stream.keepAlive());
  }

  record(event: ReplicationEvent): void {
    // Every push reports here: with no listener and no receiver there is nothing to shape.
    if (this.receivers.length === 0 && this.stream.listenerCount === 0) return;
    const events = streamEventsOf(event, this.options.nodeId, this.options.clock.now());
    if (events.length === 0) return;
    this.stream.publish(events);
    for (const receiver of this.receivers) for (const streamEvent of events) receiver.enqueue(streamEvent);
  }

  readonly listen = (response: ServerResponse): void => this.stream.listen(response);

  /** Ends the streams and the retries; what a receiver has not taken yet is lost with the node. */
  stop(): void {
    this.stopKeepAlive();
    this.stream.close();
    for (const receiver of this.receivers) receiver.stop();
  }
}
