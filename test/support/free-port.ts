import { createServer, connect } from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago (the kernel picks it).
 * Another process may take it before the caller binds, so servers started on
 * it retry with a new port when they fail to listen.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

/** Resolves once something accepts TCP connections on 127.0.0.1:port. */
export async function waitForPort(port: number, options: { timeoutMs?: number; alive?: () => boolean } = {}): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  for (;;) {
    if (await canConnect(port)) return;
    if (options.alive && !options.alive()) throw new Error(`server for port ${port} exited before listening`);
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port} after ${options.timeoutMs ?? 10_000} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
