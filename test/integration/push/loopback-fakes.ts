import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';

/**
 * Misbehaving servers for failure stderr that real servers give only under
 * load or breakage: a TCP peer that resets, closes, stays silent, or starts
 * the git protocol and vanishes; and an HTTP server answering a fixed status.
 */
export type TcpBehaviour = 'reset' | 'close-after-request' | 'silent' | 'advertise-then-close';

export interface Loopback {
  readonly port: number;
  close(): Promise<void>;
}

const pkt = (line: string): string => (line.length + 4).toString(16).padStart(4, '0') + line;
/** What receive-pack of an empty repository sends first. */
const EMPTY_RECEIVE_PACK_ADVERTISEMENT = `${pkt(`${'0'.repeat(40)} capabilities^{}\0report-status delete-refs side-band-64k quiet ofs-delta\n`)}0000`;

export function startTcpFake(behaviour: TcpBehaviour): Promise<Loopback> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (behaviour === 'reset') socket.resetAndDestroy();
    else if (behaviour === 'close-after-request') socket.once('data', () => socket.destroy());
    else if (behaviour === 'advertise-then-close') {
      socket.once('data', () => {
        socket.write(EMPTY_RECEIVE_PACK_ADVERTISEMENT);
        setTimeout(() => socket.destroy(), 100);
      });
    }
  });
  return listen(server, () => {
    for (const socket of sockets) socket.destroy();
  });
}

/**
 * Answers every request with the status in the first path segment
 * (`/503/x.git/info/refs` → 503). 401 asks for Basic auth and, like GitLab,
 * says "HTTP Basic: Access denied"; 404 says "Repository not found.", like GitHub;
 * 429 and 503 send `Retry-After: 7`.
 */
export function startHttpStatusFake(): Promise<Loopback> {
  const server = createHttpServer((request, response) => {
    const status = Number(/^\/(\d{3})\//.exec(request.url ?? '')?.[1] ?? 500);
    const headers: Record<string, string> = { 'content-type': 'text/plain' };
    if (status === 401) headers['www-authenticate'] = 'Basic realm="fake"';
    if (status === 429 || status === 503) headers['retry-after'] = '7';
    const body = status === 401 ? 'HTTP Basic: Access denied\n' : status === 404 ? 'Repository not found.\n' : '';
    response.writeHead(status, headers);
    response.end(body);
  });
  return listen(server, () => server.closeAllConnections());
}

function listen(server: Server | HttpServer, dropConnections: () => void): Promise<Loopback> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            dropConnections();
            server.close(() => done());
          }),
      });
    });
  });
}
