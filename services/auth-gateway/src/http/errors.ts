import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import { isCairnError } from '@cairn/domain';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { sendJson } from './respond';

/** Keystone's error body: `{"error": {"code", "title", "message"}}`, title being the reason phrase. */
export interface KeystoneErrorBody {
  error: { code: number; title: string; message: string };
}

export function keystoneError(code: number, message: string): KeystoneErrorBody {
  return { error: { code, title: STATUS_CODES[code] ?? 'Error', message } };
}

/** The same shape for requests Node's HTTP parser refuses before express sees them (see listen()). */
export const keystoneErrorBody = (code: number, message: string) => ({
  contentType: 'application/json',
  body: JSON.stringify(keystoneError(code, message)),
});

export function sendKeystoneError(res: ServerResponse, code: number, message: string): void {
  sendJson(res, code, keystoneError(code, message));
}

export const TOO_LARGE_MESSAGE = 'Request is too large: the body may be at most 64 KB.';

/** The answer for every path no route serves. */
export const notFound: RequestHandler = (_req, res) => {
  sendKeystoneError(res, 404, 'The resource could not be found.');
};

/** A route that exists but not for this method: 405 with `Allow`. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  return (_req, res) => {
    res.setHeader('Allow', allowed.join(', '));
    sendKeystoneError(res, 405, 'The method is not allowed for the requested URL.');
  };
}

/**
 * Client errors raised by express itself keep their status; anything else is logged and is a 500.
 * `logFor(req)` gives the logger for a line about that request (with its id); it is only called
 * when a line is written (503 and 500), not for the 4xx most errors are.
 */
export function errorAnswer(
  logFor: (req: IncomingMessage) => Logger,
): (err: unknown, req: IncomingMessage, res: ServerResponse) => void {
  return (err, req, res) => {
    if (res.headersSent) return;
    const status = (err as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      sendKeystoneError(res, status, status === 413 ? TOO_LARGE_MESSAGE : 'The request you have made is malformed.');
      return;
    }
    // Redis or Postgres unreachable, timed out or restarting (the token store and the user directory
    // say so): a 503, never a 401 here, or clients would believe their password is wrong.
    if (isCairnError(err) && err.code === 'UNAVAILABLE') {
      logFor(req).warn({ err: { message: err.message, cause: err.details.cause } }, 'dependency unavailable');
      res.setHeader('Retry-After', '1');
      // A message written for the client (details.shown) says what still works; others stay generic.
      sendKeystoneError(
        res,
        503,
        err.details.shown === true ? err.message : 'The identity service is temporarily unavailable; retry shortly.',
      );
      return;
    }
    logFor(req).error({ err }, 'unhandled error');
    sendKeystoneError(res, 500, 'An unexpected error prevented the server from fulfilling your request.');
  };
}

export const errorHandler = (logFor: (req: IncomingMessage) => Logger): ErrorRequestHandler => {
  const answer = errorAnswer(logFor);
  return (err: unknown, req, res, _next) => answer(err, req, res);
};
