import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { BodyRefused, readBody } from '@cairn/runtime';
import { sendKeystoneError, TOO_LARGE_MESSAGE } from './errors';

/**
 * Request bodies are small JSON credential documents. Anything larger is refused with 413 on every
 * route (also V1, which reads no body): by the declared Content-Length before any work, and while
 * it is read (counted after decompression) for bodies sent chunked or compressed. A route reads
 * its body only after whatever it can check without it (the caller's token for s3tokens and
 * OS-EC2): a refused request costs nothing of its body.
 */
export const BODY_LIMIT_BYTES = 64 * 1024;
export const BODY_LIMIT = '64kb';

export function sendTooLarge(res: ServerResponse): void {
  // The rest of the body is not read: the connection ends after this answer (lingerOverUnreadBodies).
  sendKeystoneError(res, 413, TOO_LARGE_MESSAGE);
}

export const declaredBodyLimit: RequestHandler = (req, res, next) => {
  const declared = Number(req.headers['content-length']);
  if (declared > BODY_LIMIT_BYTES) return sendTooLarge(res);
  next();
};

export type JsonBody = { ok: true; body: unknown } | { ok: false; tooLarge: boolean };

const utf8 = new TextDecoder('utf-8');

/**
 * The request's JSON body as express.json read it (strict: an object or an array; no body at all
 * is undefined, an empty one `{}`; UTF-8; gzip, deflate and br decompressed), at most
 * BODY_LIMIT_BYTES once decompressed. Unlike express.json, a body past the limit is not read to
 * its end before the refusal.
 */
export async function readJsonBody(req: IncomingMessage): Promise<JsonBody> {
  const hasBody =
    req.headers['transfer-encoding'] !== undefined || !Number.isNaN(Number(req.headers['content-length'] ?? NaN));
  if (!hasBody) return { ok: true, body: undefined };
  const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return { ok: false, tooLarge: false };
  let raw: Buffer;
  try {
    raw = await readBody(req, BODY_LIMIT_BYTES);
  } catch (e) {
    if (!(e instanceof BodyRefused)) throw e;
    return { ok: false, tooLarge: e.reason === 'too-large' };
  }
  const text = utf8.decode(raw);
  if (text.length === 0) return { ok: true, body: {} };
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return { ok: false, tooLarge: false };
  try {
    return { ok: true, body: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, tooLarge: false };
  }
}
