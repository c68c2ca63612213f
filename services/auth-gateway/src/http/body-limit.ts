import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { sendKeystoneError, TOO_LARGE_MESSAGE } from './errors';

/**
 * Request bodies are small JSON credential documents. Anything larger is refused with 413 on every
 * route (also V1, which reads no body): by the declared Content-Length before any work, and by the
 * JSON parsers' limit for bodies sent chunked.
 */
export const BODY_LIMIT_BYTES = 64 * 1024;
export const BODY_LIMIT = '64kb';

export function sendTooLarge(res: ServerResponse): void {
  // The rest of the body is not read: the connection cannot be reused.
  res.setHeader('Connection', 'close');
  sendKeystoneError(res, 413, TOO_LARGE_MESSAGE);
}

/** body-parser's error for a body past its limit. */
export const isTooLarge = (err: unknown): boolean => (err as { type?: string } | null)?.type === 'entity.too.large';

export const declaredBodyLimit: RequestHandler = (req, res, next) => {
  const declared = Number(req.headers['content-length']);
  if (declared > BODY_LIMIT_BYTES) return sendTooLarge(res);
  next();
};
