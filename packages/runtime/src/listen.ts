import {
  createServer,
  IncomingMessage,
  ServerResponse,
  type RequestListener,
  type Server,
  type ServerOptions,
} from 'node:http';
import type { Socket } from 'node:net';
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

/** What express apps carry: the prototypes it gives every request and response. */
interface ExpressLike {
  request?: object;
  response?: object;
}

/**
 * Express gives every request and response its own prototypes with Object.setPrototypeOf, which
 * costs V8 more than all the rest of a small answer: a stock express hello world spends about
 * 0.14 ms of CPU per request, 0.05 ms when its objects are born with those prototypes
 * (docs/benchmarks.md). Node builds them from the constructors given here, so express then finds the
 * prototype already in place, and setting it again changes nothing.
 */
function bornWithExpressPrototypes(app: ExpressLike): ServerOptions {
  const { request, response } = app;
  if (!request || !response) return {};
  function ExpressRequest(this: IncomingMessage, socket: Socket) {
    IncomingMessage.call(this, socket);
  }
  ExpressRequest.prototype = request;
  function ExpressResponse(this: ServerResponse, req: IncomingMessage, options?: object) {
    (ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: object) => void).call(
      this,
      req,
      options,
    );
  }
  ExpressResponse.prototype = response;
  return {
    IncomingMessage: ExpressRequest as unknown as typeof IncomingMessage,
    ServerResponse: ExpressResponse as unknown as typeof ServerResponse,
  };
}

/**
 * Starts `app` (an express app, or any request listener) listening and resolves once it is bound, or rejects (e.g.
 * EADDRINUSE).
 */
export function listen(
  app: RequestListener & ExpressLike,
  port: number,
  host: string,
  options: ListenOptions = {},
): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = createServer(bornWithExpressPrototypes(app), app);
    server.once('error', reject);
    answerClientErrors(server, options.errorBody);
    server.listen(port, host, () => {
      const address = server.address();
      resolve({ server, port: typeof address === 'object' && address ? address.port : port });
    });
  });
}
