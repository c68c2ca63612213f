import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import pinoHttp from 'pino-http';

/**
 * A request id on every answer (the caller's, when well-formed, else a new one) and, when the
 * logger writes `info`, one log line per request with the path only (query strings and headers
 * stay out of logs). Above `info` nothing per request would be written, so pino-http's work
 * (a child logger, serialised bindings, listeners) is skipped: it was measurable in bench/.
 */
export function requestLogging(log: Logger, id: { header: string; pattern: RegExp; generate: () => string }): RequestHandler {
  const requestId = (req: IncomingMessage, res: ServerResponse): string => {
    const given = req.headers[id.header.toLowerCase()];
    const value = typeof given === 'string' && id.pattern.test(given) ? given : id.generate();
    res.setHeader(id.header, value);
    return value;
  };
  if (log.isLevelEnabled('info')) {
    return pinoHttp({
      logger: log,
      genReqId: requestId,
      serializers: { req: (req) => ({ id: req.id, method: req.method, url: String(req.url).split('?')[0] }) },
    });
  }
  return (req, res, next) => {
    requestId(req, res);
    next();
  };
}
