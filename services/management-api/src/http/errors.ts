import type { ErrorRequestHandler, Request, Response } from 'express';
import { CairnError, errors, type ErrorCode } from '@cairn/domain';
import { send } from './respond';
import { translateDbError } from '../db/errors';

/** The one mapping from domain error codes to HTTP statuses. */
export const STATUS_OF: Record<ErrorCode, number> = {
  INVALID_INPUT: 400,
  ALREADY_EXISTS: 400, // tastypie clients expect 400 for a duplicate, not 409
  IN_USE: 400,
  CONFLICT: 409,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  UNAVAILABLE: 503,
};

export const INTERNAL_ERROR_BODY = {
  error_message: 'Sorry, this request could not be processed. Please try again later.',
};

export function sendError(req: Request, res: Response, error: CairnError): void {
  if (error.code === 'METHOD_NOT_ALLOWED') res.set('Allow', (error.details.allowed as string[]).join(','));
  if (error.code === 'UNAUTHENTICATED') res.set('WWW-Authenticate', 'ApiKey');
  if (error.code === 'UNAVAILABLE') res.set('Retry-After', '1');
  if (error.code === 'TOO_MANY_REQUESTS') res.set('Retry-After', String(error.details.retryAfterSeconds ?? 1));
  // A refusal a client acts on by itself carries a stable `code` beside the sentence (step_up_required).
  const code = error.details.code;
  send(
    req,
    res,
    STATUS_OF[error.code],
    typeof code === 'string' ? { code, error: error.message } : { error: error.message },
  );
}

/** Body-parser failures arrive as http-errors with a `type`; turn the ones a client caused into 4xx. */
function fromExpressError(err: { type?: string; status?: number }): CairnError | null {
  if (err.type === 'entity.too.large') return errors.payloadTooLarge('Request body is too large.');
  if (err.type === 'request.aborted') return errors.invalidInput('Request was aborted.');
  if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported')
    return errors.unsupportedMediaType('Unsupported body encoding or charset.');
  if (typeof err.status === 'number' && err.status >= 400 && err.status < 500)
    return errors.invalidInput('Malformed request.');
  return null;
}

/**
 * `logFor(req)` gives the logger for a line about that request (with its id); it is only called
 * when a line is written: most errors are 4xx that log nothing.
 */
export function errorHandler(
  logFor: (req: Request) => { error: (obj: object, msg: string) => void },
): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const translated = translateDbError(err);
    const known = translated instanceof CairnError ? translated : fromExpressError(err as { type?: string });
    if (res.headersSent) return;
    try {
      if (known) return sendError(req, res, known);
      logFor(req).error({ err }, 'unhandled error');
      send(req, res, 500, INTERNAL_ERROR_BODY);
    } catch (renderError) {
      // Never fall through to express's HTML handler (it would show a stack trace).
      logFor(req).error({ err: renderError }, 'could not render an error response');
      res.status(500).setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify(INTERNAL_ERROR_BODY));
    }
  };
}
