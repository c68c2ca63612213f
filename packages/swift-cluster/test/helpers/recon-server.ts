import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** Request counts, shareable between servers to see the concurrency across all of them. */
export interface Traffic {
  requests: number;
  inFlight: number;
  maxInFlight: number;
}

export const newTraffic = (): Traffic => ({ requests: 0, inFlight: 0, maxInFlight: 0 });

/** A local HTTP server on 127.0.0.1:<ephemeral> that records how many requests were in flight at once. */
export interface TestServer {
  port: number;
  baseUrl: string;
  requests: number;
  maxInFlight: number;
  close(): Promise<void>;
}

export async function startServer(handler: Handler, state: Traffic = newTraffic()): Promise<TestServer> {
  const server: Server = createServer((req, res) => {
    state.requests++;
    state.inFlight++;
    state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        state.inFlight--;
      }
    };
    res.on('finish', finish);
    res.on('close', finish);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    get requests() {
      return state.requests;
    },
    get maxInFlight() {
      return state.maxInFlight;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(body);
}
