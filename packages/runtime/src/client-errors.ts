import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/**
 * Requests Node's HTTP parser refuses never reach express: a NUL or bare CR in a header, an unknown
 * method, headers or a URL past the size limit. Node's own answer has an empty body; these handlers
 * answer in the service's error shape instead, so every 4xx says what was wrong.
 */
export type ErrorBodyFormat = (status: number, message: string) => { contentType: string; body: string };

/** `{"error": "<message>"}`: the management API's shape, and the default. */
export const jsonErrorBody: ErrorBodyFormat = (_status, message) => ({
  contentType: 'application/json',
  body: JSON.stringify({ error: message }),
});

function describe(code: string | undefined): [number, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'The request line or headers are too large.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return [408, 'The request did not arrive in time.'];
    case 'HPE_INVALID_METHOD':
      return [400, 'Malformed HTTP request: unknown or invalid method.'];
    case 'HPE_INVALID_URL':
      return [400, 'Malformed HTTP request: invalid characters in the URL.'];
    case 'HPE_INVALID_HEADER_TOKEN':
      return [
        400,
        'Malformed HTTP request: invalid characters in a header (control characters such as NUL or a bare CR are not allowed).',
      ];
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
      return [400, 'Malformed HTTP request: invalid body framing.'];
    default:
      return [400, 'Malformed HTTP request.'];
  }
}

export function answerClientErrors(server: Server, format: ErrorBodyFormat = jsonErrorBody): void {
  // Sockets with a response under way, tracked through public events: a second answer written on such
  // a connection would be garbled into the first.
  const answering = new WeakSet<Duplex>();
  // One listener for every response (`this`: the response; 'close' comes once): nothing allocated per request.
  function answered(this: ServerResponse) {
    answering.delete(this.req.socket);
  }
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    answering.add(req.socket);
    res.on('close', answered);
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ECONNRESET' || !socket.writable || answering.has(socket)) {
      socket.destroy();
      return;
    }
    const [status, message] = describe(err.code);
    const { contentType, body } = format(status, message);
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  // An Expect header other than 100-continue: Node answers 417 with no body unless told otherwise.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => {
    const { contentType, body } = format(417, 'Unsupported Expect header: only "100-continue" is understood.');
    res.writeHead(417, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), Connection: 'close' });
    res.end(body);
  });
}
