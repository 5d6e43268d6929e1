import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHttpServer {
  readonly port: number;
  /** `http://127.0.0.1:PORT/<path>`, without credentials. */
  url(path: string): string;
  /** Every Authorization header value the server received, decoded (`user:password`). */
  readonly logins: string[];
  stop(): Promise<void>;
}

/**
 * Smart-http on loopback: `git http-backend` as a CGI behind Basic authentication, serving the
 * bare repositories under `root`. A request without the right credentials gets 401 with a
 * Basic challenge, as a real server does, so git asks its askpass program.
 */
export async function startGitHttpServer(root: string, credentials: { username: string; password: string }): Promise<GitHttpServer> {
  const logins: string[] = [];
  const server = createServer((request, response) => {
    const header = request.headers.authorization ?? '';
    const login = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : '';
    if (login !== '') logins.push(login);
    if (login !== `${credentials.username}:${credentials.password}`) {
      response.writeHead(401, { 'www-authenticate': 'Basic realm="git"', 'content-type': 'text/plain' });
      response.end('Unauthorized\n');
      return;
    }
    cgi(root, credentials.username, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, url: (path) => `http://127.0.0.1:${port}/${path}`, logins, stop: () => new Promise((resolve) => server.close(() => resolve())) };
}

function cgi(root: string, user: string, request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? '/', 'http://localhost');
  const child = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      REMOTE_USER: user, // http-backend enables receive-pack for authenticated users
      REMOTE_ADDR: '127.0.0.1',
      REQUEST_METHOD: request.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: request.headers['content-type'] ?? '',
      ...(request.headers['content-length'] === undefined ? {} : { CONTENT_LENGTH: request.headers['content-length'] }),
      ...(request.headers['content-encoding'] === undefined ? {} : { HTTP_CONTENT_ENCODING: request.headers['content-encoding'] }),
      GIT_HTTP_MAX_REQUEST_BUFFER: '100M',
    },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  request.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersSent = false;
  child.stdout.on('data', (chunk: Buffer) => {
    if (headersSent) {
      response.write(chunk);
      return;
    }
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf('\r\n\r\n');
    if (end < 0) return;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10);
      else response.setHeader(name, value);
    }
    response.writeHead(status);
    headersSent = true;
    response.write(head.subarray(end + 4));
  });
  child.on('close', () => {
    if (!headersSent) response.writeHead(502);
    response.end();
  });
}
