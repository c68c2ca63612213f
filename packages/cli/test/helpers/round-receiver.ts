import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the management API's health ingest in collector tests: it knows one cluster (by
 * id and by name), records each round POSTed to it and answers 201 like the API.
 */
export interface RoundReceiver {
  apiUrl: string;
  rounds: unknown[];
  /** Authorization headers seen, to check the collector sends its key. */
  authorizations: string[];
  close(): Promise<void>;
}

export async function startRoundReceiver(cluster = { id: 7, name: 'east' }): Promise<RoundReceiver> {
  const rounds: unknown[] = [];
  const authorizations: string[] = [];
  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const bodyOf = async (req: IncomingMessage): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const server = createServer((req, res) => {
    authorizations.push(req.headers.authorization ?? '');
    const url = req.url ?? '';
    if (
      req.method === 'GET' &&
      (url === `/api/v1/clusters/${cluster.id}/` || url === `/api/v1/clusters/?name=${cluster.name}`)
    )
      return send(res, 200, url.includes('?') ? { objects: [cluster] } : cluster);
    if (req.method === 'POST' && url === `/api/v1/clusters/${cluster.id}/health/rounds/`) {
      void bodyOf(req).then((text) => {
        rounds.push(JSON.parse(text));
        send(res, 201, { id: rounds.length, open_findings: 0 });
      });
      return;
    }
    send(res, 404, { error: `no ${req.method} ${url} here` });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}`,
    rounds,
    authorizations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
