import type { Server } from 'node:http';
import { answerClientErrors, type ErrorBodyFormat } from './client-errors';

export interface Listening {
  server: Server;
  /** The bound port (the one picked when asked for port 0). */
  port: number;
}

export interface ListenOptions {
  /** The body of answers to requests Node's HTTP parser refuses; default `{"error": "<message>"}`. */
  errorBody?: ErrorBodyFormat;
}

/** Starts `app` listening and resolves once it is bound, or rejects (e.g. EADDRINUSE). */
export function listen(
  app: { listen: (port: number, host: string, cb: () => void) => Server },
  port: number,
  host: string,
  options: ListenOptions = {},
): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host, () => {
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address ? address.port : port });
    });
    server.once('error', reject);
    answerClientErrors(server, options.errorBody);
  });
}
