import type { ServerResponse } from 'node:http';
import type { StreamEvent } from './stream-events.js';

/**
 * Bytes a listener may leave unread before it is dropped: one that stops reading must not make
 * the node hold every event for it. The stream has no replay: a listener that reconnects gets
 * the events from then on.
 */
const UNREAD_LIMIT_BYTES = 1024 * 1024;
/** A comment line now and then keeps proxies from closing an idle stream. */
export const KEEPALIVE_EVERY_MS = 15_000;

/**
 * `GET /events`: this node's stream events as Server-Sent Events, one `event: <type>` and
 * `data: <json>` per event, numbered by `id:` from the node's start. Nothing is kept for a
 * listener that is not connected.
 */
export class EventStream {
  private readonly listeners = new Set<ServerResponse>();
  private nextId = 1;

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Starts the stream on `response`; it ends when the client goes or the node stops. */
  listen(response: ServerResponse): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    response.write(': refrelay events\n\n');
    this.listeners.add(response);
    response.on('close', () => this.listeners.delete(response));
  }

  publish(events: readonly StreamEvent[]): void {
    for (const event of events) {
      const frame = `id: ${this.nextId++}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
      for (const listener of this.listeners) this.send(listener, frame);
    }
  }

  keepAlive(): void {
    for (const listener of this.listeners) this.send(listener, ': keep-alive\n\n');
  }

  close(): void {
    for (const listener of this.listeners) listener.end();
    this.listeners.clear();
  }

  private send(listener: ServerResponse, frame: string): void {
    if (listener.writableLength > UNREAD_LIMIT_BYTES) {
      this.listeners.delete(listener);
      listener.destroy();
      return;
    }
    listener.write(frame);
  }
}
