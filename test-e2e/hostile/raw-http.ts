import { connect, type Socket } from 'node:net';

/**
 * A deliberately naive HTTP/1.1 client over plain sockets. Node's own clients refuse to send the
 * inputs these tests are about (CR, LF or NUL in a header, unknown methods, spaces and raw unicode
 * in the path), so requests are written byte for byte here and the answer parsed by hand.
 * Connections are kept alive and reused; a request that is malformed at the HTTP level gets a
 * connection of its own, closed after the first answer (the server may read the rest as another
 * request, or as nothing).
 */
export interface RawRequest {
  method: string;
  /** Written as given: no encoding, no checks. */
  path: string;
  headers: Array<[string, string]>;
  body?: Buffer;
  /** Send on a fresh connection, closed after the answer (set for HTTP-level malformed requests). */
  fresh?: boolean;
}

export interface RawResponse {
  status: number;
  /** Lower-cased names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
}

export class RawHttpError extends Error {}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');

/** The request's head as UTF-8 bytes; the body (if any) goes out after it as it is. */
function serializeHead(req: RawRequest, host: string): Buffer {
  const names = new Set(req.headers.map(([k]) => k.toLowerCase()));
  const lines = [`${req.method} ${req.path} HTTP/1.1`];
  if (!names.has('host')) lines.push(`Host: ${host}`);
  for (const [k, v] of req.headers) lines.push(`${k}: ${v}`);
  const body = req.body ?? Buffer.alloc(0);
  if (
    !names.has('content-length') &&
    !names.has('transfer-encoding') &&
    (body.length > 0 || ['POST', 'PUT', 'PATCH'].includes(req.method))
  ) {
    lines.push(`Content-Length: ${body.length}`);
  }
  if (req.fresh && !names.has('connection')) lines.push('Connection: close');
  // Header text goes out as UTF-8 bytes, which is what clients send for non-ASCII user names.
  return Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8');
}

/** Parses one response out of `buf`, or returns null when more bytes are needed. */
function parseResponse(buf: Buffer, headRequest: boolean, ended: boolean): { res: RawResponse; used: number } | null {
  let start = 0;
  for (;;) {
    const end = buf.indexOf(HEADER_END, start);
    if (end < 0) return null;
    const head = buf.subarray(start, end).toString('latin1').split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0] ?? '');
    if (!m) throw new RawHttpError(`not an HTTP response: ${JSON.stringify(head[0])}`);
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of head.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    let pos = end + 4;
    if (status >= 100 && status < 200 && status !== 101) {
      start = pos; // 100 Continue and friends: the real answer follows
      continue;
    }
    if (headRequest || status === 204 || status === 304)
      return { res: { status, headers, body: Buffer.alloc(0) }, used: pos };
    if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = buf.indexOf(CRLF, pos);
        if (lineEnd < 0) return null;
        const size = parseInt(buf.subarray(pos, lineEnd).toString('latin1'), 16);
        if (Number.isNaN(size)) throw new RawHttpError('bad chunk size');
        if (size === 0) {
          const trailerEnd = buf.indexOf(HEADER_END, lineEnd);
          if (trailerEnd === lineEnd)
            return { res: { status, headers, body: Buffer.concat(parts) }, used: lineEnd + 4 };
          if (buf.length < lineEnd + 4) return null;
          if (trailerEnd < 0) return null;
          return { res: { status, headers, body: Buffer.concat(parts) }, used: trailerEnd + 4 };
        }
        if (buf.length < lineEnd + 2 + size + 2) return null;
        parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
        pos = lineEnd + 2 + size + 2;
      }
    }
    if (headers['content-length'] !== undefined) {
      const length = Number(headers['content-length']);
      if (buf.length < pos + length) return null;
      return { res: { status, headers, body: Buffer.from(buf.subarray(pos, pos + length)) }, used: pos + length };
    }
    // No framing: the body runs until the server closes.
    if (!ended) return null;
    return { res: { status, headers, body: Buffer.from(buf.subarray(pos)) }, used: buf.length };
  }
}

/** One connection, one request at a time. */
class Connection {
  private socket: Socket | null = null;
  private buf: Buffer = Buffer.alloc(0);
  private ended = false;
  private pending: {
    head: boolean;
    resolve: (r: RawResponse) => void;
    reject: (e: Error) => void;
    timer: NodeJS.Timeout;
  } | null = null;

  constructor(
    private readonly host: string,
    private readonly port: number,
    private readonly timeoutMs: number,
  ) {}

  get alive(): boolean {
    return this.socket !== null && !this.ended;
  }

  private open(): Socket {
    const socket = connect(this.port, this.host);
    socket.setNoDelay(true);
    this.buf = Buffer.alloc(0);
    this.ended = false;
    // Events of a socket this connection already dropped must not touch the next one's state.
    const current = () => this.socket === socket;
    socket.on('data', (d: Buffer) => {
      if (!current()) return;
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      this.tryParse();
    });
    const finish = () => {
      if (!current()) return;
      this.ended = true;
      this.tryParse();
      if (this.pending) this.fail(new RawHttpError('connection closed without a complete response'));
      if (this.socket === socket) this.socket = null;
    };
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', (e) => {
      // A reset after the answer was read is the server closing a connection it refused to keep.
      if (current() && this.pending) this.fail(new RawHttpError(`socket error: ${e.message}`));
    });
    this.socket = socket;
    return socket;
  }

  private fail(e: Error): void {
    const p = this.pending;
    if (!p) return;
    this.pending = null;
    clearTimeout(p.timer);
    p.reject(e);
    this.destroy();
  }

  private tryParse(): void {
    const p = this.pending;
    if (!p) return;
    let parsed: { res: RawResponse; used: number } | null;
    try {
      parsed = parseResponse(this.buf, p.head, this.ended);
    } catch (e) {
      return this.fail(e as Error);
    }
    if (!parsed) return;
    this.buf = this.buf.subarray(parsed.used);
    this.pending = null;
    clearTimeout(p.timer);
    if (/close/i.test(parsed.res.headers.connection ?? '')) this.destroy();
    p.resolve(parsed.res);
  }

  destroy(): void {
    this.socket?.destroy();
    this.socket = null;
  }

  send(req: RawRequest, host: string): Promise<RawResponse> {
    if (req.fresh) this.destroy();
    const socket = this.alive ? this.socket! : this.open();
    this.buf = Buffer.alloc(0);
    return new Promise<RawResponse>((resolve, reject) => {
      const timer = setTimeout(
        () => this.fail(new RawHttpError(`no answer within ${this.timeoutMs} ms`)),
        this.timeoutMs,
      );
      this.pending = { head: req.method === 'HEAD', resolve, reject, timer };
      // Head and body in one segment when they fit (cork), without copying the body into the head.
      socket.cork();
      socket.write(serializeHead(req, host));
      if (req.body?.length) socket.write(req.body);
      socket.uncork();
    }).finally(() => {
      if (req.fresh) this.destroy();
    });
  }
}

/** A fixed number of keep-alive connections to one server; requests queue for a free one. */
export class RawPool {
  private readonly idle: Connection[] = [];
  private readonly waiting: Array<(c: Connection) => void> = [];
  private readonly all: Connection[] = [];
  private readonly hostHeader: string;

  constructor(
    readonly baseUrl: string,
    size: number,
    timeoutMs = 15_000,
  ) {
    const url = new URL(baseUrl);
    this.hostHeader = url.host;
    for (let i = 0; i < size; i++) {
      const c = new Connection(url.hostname, Number(url.port), timeoutMs);
      this.all.push(c);
      this.idle.push(c);
    }
  }

  async send(req: RawRequest): Promise<RawResponse> {
    const conn = this.idle.pop() ?? (await new Promise<Connection>((resolve) => this.waiting.push(resolve)));
    try {
      return await conn.send(req, this.hostHeader);
    } finally {
      const next = this.waiting.shift();
      if (next) next(conn);
      else this.idle.push(conn);
    }
  }

  close(): void {
    for (const c of this.all) c.destroy();
  }
}
