import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as it crossed the wire between a client and Swift's proxy. */
export interface Recorded {
  method: string;
  /** Path and query string, as the client sent them. */
  url: string;
  headers: IncomingHttpHeaders;
  status: number;
  /** Body bytes the client sent, and the response body bytes it got. */
  sent: number;
  got: number;
}

export interface RecordingProxy {
  /** http://127.0.0.1:<port>: use it in place of the proxy's address. */
  url: string;
  /** Every request that has ended, in the order it ended. */
  recorded: Recorded[];
  close(): Promise<void>;
}

/**
 * A loopback forwarder that passes every request to `target` unchanged (headers included, so S3
 * signatures over Host still verify) and books what went each way: a client's own account of a
 * workload, taken on the wire, for clients that keep none (the `swift` CLI, awscli). Requests the
 * proxy makes itself (SLO segments, copies) never pass through it.
 */
export async function startRecordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const recorded: Recorded[] = [];
  const server = createServer((req, res) => {
    let sent = 0;
    let got = 0;
    // This server answered any `Expect: 100-continue` itself; the body follows at once.
    const headers = { ...req.headers };
    delete headers.expect;
    const out = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.on('data', (chunk: Buffer) => (got += chunk.length));
        answer.pipe(res);
        answer.on('end', () =>
          recorded.push({
            method: req.method ?? '',
            url: req.url ?? '',
            headers: req.headers,
            status: answer.statusCode ?? 0,
            sent,
            got,
          }),
        );
      },
    );
    out.on('error', () => res.destroy());
    req.on('data', (chunk: Buffer) => (sent += chunk.length));
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    recorded,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        if (server.listening) server.close(() => resolve());
        else resolve();
      }),
  };
}
