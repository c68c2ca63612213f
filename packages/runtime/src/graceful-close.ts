import type { IncomingMessage, Server, ServerResponse } from 'node:http';

/**
 * Stops accepting connections and lets the open ones finish, without the race a plain
 * `server.close()` has behind a load balancer. Node's close() also closes idle keep-alive
 * connections at once; a request the balancer is writing on one at that moment is lost, and a
 * balancer must not replay a POST, so the client gets a 502. Instead:
 * - every answer from now on carries `Connection: close`, so clients and balancers stop reusing
 *   their connections as soon as they next use them;
 * - idle connections are left to the client for `idleGraceMs`, by default Node's own 5 s
 *   keep-alive timeout: a balancer whose keep-alive timeout is below it (docs/deployment.md's nginx
 *   example: 4 s) closes them itself first, so no close of ours races its next request. Then they
 *   are closed, and again every 250 ms for connections that become idle later;
 * - requests in flight finish normally. Resolves when every connection has ended.
 */
export async function closeGracefully(server: Server, idleGraceMs = 5_000): Promise<void> {
  const closing = (_req: IncomingMessage, res: ServerResponse) => {
    res.shouldKeepAlive = false;
  };
  server.prependListener('request', closing);
  const own = server as Server & { closeIdleConnections: () => void };
  const closed = new Promise<void>((resolve) => {
    // close() calls closeIdleConnections() synchronously: skip that one call, keep the method.
    own.closeIdleConnections = () => {};
    server.close(() => resolve());
    delete (own as Partial<typeof own>).closeIdleConnections;
  });
  let sweep: NodeJS.Timeout | undefined;
  const grace = setTimeout(() => {
    server.closeIdleConnections();
    sweep = setInterval(() => server.closeIdleConnections(), 250);
  }, idleGraceMs);
  try {
    await closed;
  } finally {
    clearTimeout(grace);
    clearInterval(sweep);
    server.off('request', closing);
  }
}
