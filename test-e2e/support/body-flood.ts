import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createGzip } from 'node:zlib';

/**
 * Large request bodies sent the way a hostile client sends them: streamed from a generator (the
 * sender holds one chunk, never the body), each on a connection of its own. Shared by the
 * body-flood test (test-e2e/hostile/body-flood.test.ts) and `pnpm bench:hostile`.
 */

const CHUNK = Buffer.alloc(64 * 1024, 'a');

export interface FloodRequest {
  /** e.g. http://127.0.0.1:8000 */
  base: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Bytes to stream (declared as Content-Length unless `chunked`), or a buffer sent as it is. */
  body: number | Buffer;
  chunked?: boolean;
  /** Gives up (error 'timeout') when no answer has come by then; default 60 s. */
  timeoutMs?: number;
}

export interface FloodAnswer {
  /** The answer's status, or null when none arrived (the connection failed first). */
  status: number | null;
  /** From the first byte written to the answer's head. */
  ms: number;
  /** How much of the body had been written when the answer came. */
  sentBytes: number;
  error?: string;
}

/**
 * Sends one request and resolves as soon as the answer's head arrives; the rest of the body is
 * then not sent (the connection is dropped), as a client that got its refusal would.
 */
export function sendFlood(r: FloodRequest): Promise<FloodAnswer> {
  return new Promise((resolve) => {
    const size = typeof r.body === 'number' ? r.body : r.body.length;
    const url = new URL(r.path, r.base);
    const headers: Record<string, string> = { 'Content-Type': 'application/json', ...r.headers };
    if (r.chunked) headers['Transfer-Encoding'] = 'chunked';
    else headers['Content-Length'] = String(size);
    const started = performance.now();
    let sent = 0;
    let done = false;
    const timer = setTimeout(() => finish({ status: null, error: 'timeout' }), r.timeoutMs ?? 60_000);
    const finish = (a: Omit<FloodAnswer, 'ms' | 'sentBytes'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ ...a, ms: performance.now() - started, sentBytes: sent });
      req.destroy();
      agent.destroy();
    };
    // A connection of its own, kept alive as browsers, curl and fetch keep theirs: a client that
    // sends `Connection: close` is closed on by Node right after the answer (see readBody).
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const req = request({
      host: url.hostname,
      port: url.port,
      method: r.method,
      path: url.pathname + url.search,
      headers,
      agent,
    });
    req.on('response', (res) => {
      res.resume();
      finish({ status: res.statusCode ?? null });
    });
    req.on('error', (e) => finish({ status: null, error: (e as NodeJS.ErrnoException).code ?? e.message }));
    const pump = () => {
      while (!done && sent < size) {
        const piece =
          typeof r.body === 'number'
            ? CHUNK.subarray(0, Math.min(CHUNK.length, size - sent))
            : r.body.subarray(sent, sent + CHUNK.length);
        sent += piece.length;
        // The next chunk waits for the event loop's next turn: answers that arrived meanwhile are
        // seen first, so the time measured is the server's, not this process's writing.
        if (!req.write(piece)) return void req.once('drain', () => setImmediate(pump));
      }
      if (!done) req.end();
    };
    pump();
  });
}

/**
 * A gzip body of `inflatedBytes` zeros: what a decompressing server would hold from a body some
 * thousand times smaller. Built by streaming (the inflated form never exists here).
 */
export async function gzipBomb(inflatedBytes: number): Promise<Buffer> {
  const gzip = createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gzip.on('data', (b: Buffer) => parts.push(b));
  const ended = new Promise((resolve) => gzip.on('end', resolve));
  const zeros = Buffer.alloc(1024 * 1024);
  for (let left = inflatedBytes; left > 0; left -= zeros.length) {
    if (!gzip.write(zeros.subarray(0, Math.min(zeros.length, left)))) await new Promise((r) => gzip.once('drain', r));
  }
  gzip.end();
  await ended;
  return Buffer.concat(parts);
}

/** A process's resident memory in bytes (Linux). */
export function rssBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) * 1024;
}

/** Samples a process's RSS every `everyMs` until stopped; gives the highest seen. */
export function watchRss(pid: number, everyMs = 5): { stop: () => number } {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      // the process is gone; the test notices that by itself
    }
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return Math.max(peak, rssBytes(pid));
    },
  };
}
