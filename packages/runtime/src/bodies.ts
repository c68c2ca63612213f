import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

/**
 * Request bodies are read only by the handler that needs one, after the request's credentials and
 * rights are checked, and never past a limit. A request refused before its body was read is
 * answered at once; the unread rest of a large body is not waited for.
 */

/**
 * A body of at most this many declared bytes that no handler read is read and thrown away by Node
 * after the answer, and the connection serves the next request.
 */
export const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * How long a connection stays half-open after an answer given over a larger unread body (or one
 * of unknown length, or one refused half-way) before it is closed. Closing at once, with the
 * client's bytes still arriving, makes the kernel reset the connection, and a client that is still
 * writing then often loses the answer it was sent (it sees EPIPE or ECONNRESET instead): web
 * servers' "lingering close". Meanwhile nothing is read.
 */
export const LINGER_MS = 2000;

/** Requests whose body `readBody` gave up on half-way: the rest must never pass for a next request. */
const abandoned = new WeakSet<IncomingMessage>();

/**
 * Middleware, first in the chain: after an answer given without reading the request's whole body,
 * ends the connection, unless the rest is small enough for Node to read (it does so by itself and
 * keeps the connection). The client gets the answer and the end of the connection at once, and a
 * reset LINGER_MS later. (A client that sent `Connection:
 * close` is closed on by Node itself right after the answer, and may lose it to the reset.)
 */
export function lingerOverUnreadBodies(req: IncomingMessage, res: ServerResponse, next: () => void): void {
  const chunked = req.headers['transfer-encoding'] !== undefined;
  const declared = Number(req.headers['content-length'] ?? 0);
  // Most requests (GET, HEAD) carry no body: nothing to watch.
  if (!chunked && !(declared > 0)) return next();
  res.once('finish', () => {
    if (req.complete) return;
    const small = !chunked && declared <= DRAIN_LIMIT_BYTES;
    if (small && !abandoned.has(req)) return;
    const socket = req.socket;
    // Nothing more is read (Node would otherwise read and throw away the rest at full speed, a
    // core's worth of work per flooding client): the client's writes stall, its reads do not.
    req.pause();
    socket.pause();
    socket.end();
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
  next();
}

export type BodyRefusal = 'too-large' | 'encoding' | 'corrupt' | 'aborted';

/** Why a body was not read; each service answers it in its own error shape. */
export class BodyRefused extends Error {
  constructor(
    readonly reason: BodyRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** "64 KB", "16 MB": how a limit is spelt in a refusal. */
export const formatLimit = (bytes: number): string =>
  bytes >= 1024 ** 2 ? `${bytes / 1024 ** 2} MB` : `${bytes / 1024} KB`;

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  'x-gzip': createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/**
 * Reads the request's body whole, decompressing it as it arrives (Content-Encoding gzip, deflate,
 * br), and refuses it with `BodyRefused` as soon as it passes `limit` bytes: by its declared
 * Content-Length before a byte is read, else by the bytes counted after decompression (so a small
 * compressed body that would inflate past the limit is stopped there). A refused body is left
 * unread, and the connection is ended after the answer (lingerOverUnreadBodies).
 */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const tooLarge = () =>
    new BodyRefused(
      'too-large',
      `The request body is too large: this endpoint accepts at most ${formatLimit(limit)} (counted after decompression).`,
    );
  const refuse = (err: BodyRefused) => {
    abandoned.add(req);
    return Promise.reject(err);
  };
  const encoding = String(req.headers['content-encoding'] ?? 'identity')
    .trim()
    .toLowerCase();
  const decoder = encoding === 'identity' || encoding === '' ? null : DECODERS[encoding];
  if (decoder === undefined) {
    return refuse(
      new BodyRefused(
        'encoding',
        `Unsupported Content-Encoding '${encoding.replace(/[^\w.-]/g, '').slice(0, 40)}'; send the body as it is, or as gzip, deflate or br.`,
      ),
    );
  }
  if (Number(req.headers['content-length']) > limit) return refuse(tooLarge());
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // The client went away while the request waited (for a slot, say): nothing will arrive.
  if (req.destroyed) return refuse(new BodyRefused('aborted', 'The request was aborted before its body arrived.'));

  return new Promise<Buffer>((resolve, reject) => {
    const inflate = decoder?.();
    const source = inflate ?? req;
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const detach = () => {
      source.removeListener('data', onData);
      source.removeListener('end', onEnd);
      req.removeListener('close', onClose);
      if (inflate) {
        req.unpipe(inflate);
        inflate.destroy();
      }
    };
    const fail = (err: BodyRefused) => {
      if (settled) return;
      settled = true;
      detach();
      // Nothing more is kept: the rest is thrown away after the answer (lingerOverUnreadBodies).
      req.pause();
      abandoned.add(req);
      reject(err);
    };
    function onData(chunk: Buffer) {
      total += chunk.length;
      if (total > limit) return fail(tooLarge());
      chunks.push(chunk);
    }
    function onEnd() {
      if (settled) return;
      settled = true;
      detach();
      resolve(Buffer.concat(chunks, total));
    }
    function onClose() {
      if (!req.complete) fail(new BodyRefused('aborted', 'The request was aborted before its body arrived.'));
    }
    source.on('data', onData);
    source.on('end', onEnd);
    // Listeners stay after settling so that a late error is not an unhandled one.
    source.on('error', () =>
      fail(
        inflate
          ? new BodyRefused('corrupt', `The request body is not valid ${encoding} data.`)
          : new BodyRefused('aborted', 'The request was aborted before its body arrived.'),
      ),
    );
    if (inflate)
      req.on('error', () => fail(new BodyRefused('aborted', 'The request was aborted before its body arrived.')));
    req.on('close', onClose);
    if (inflate) req.pipe(inflate);
  });
}
