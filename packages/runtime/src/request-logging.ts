import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import pinoHttp from 'pino-http';

export interface RequestIdOptions {
  /** Request headers (lower case) a caller's id is taken from; the first well-formed one wins. */
  accept: readonly string[];
  /** What a caller's id must look like to be kept (bounded length, no spaces or control characters). */
  pattern: RegExp;
  /** A new id when the caller sent none (or only malformed ones). */
  generate: (req: IncomingMessage) => string;
  /** Response headers the id is sent back in. */
  echo: readonly string[];
}

export interface RequestLogOptions {
  /**
   * The path as it is logged (query strings never are): a service whose paths can carry a secret
   * (a token in `/v2.0/tokens/<id>`) hides it here. It is asked before the request is routed
   * (every line about the request carries it), with the request, so that middleware placed
   * before `requestLogging` can have told it what the request will be routed to.
   */
  logPath?: (path: string, req: IncomingMessage) => string;
}

type WithId = IncomingMessage & { id?: unknown; log?: Logger; logPath?: string };

const loggedPath = (req: IncomingMessage): string => (req as WithId).logPath ?? String(req.url).split('?')[0]!;

/** The request id `requestLogging` gave this request (also in its response headers and log lines). */
export function requestIdOf(req: IncomingMessage): string | undefined {
  const id = (req as WithId).id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * The logger for lines about one request: every line carries `req.id`. At `info` and below it is
 * pino-http's per-request child; above, none was made (see requestLogging), so one is made now —
 * only when a line is actually written about a request, which is rare at `warn`.
 */
export function requestLogger(req: IncomingMessage, log: Logger): Logger {
  const own = (req as WithId).log;
  if (own) return own;
  return log.child({ req: { id: requestIdOf(req), method: req.method, url: loggedPath(req) } });
}

/**
 * A request id on every answer (the caller's, when well-formed, else a new one) and, when the
 * logger writes `info`, one log line per request with the method, the path and the status only
 * (query strings and headers, the request's and the answer's, stay out of logs). Above `info`
 * nothing per request would be written, so pino-http's work (a child logger, serialised bindings,
 * listeners) is skipped: it was measurable in bench/.
 */
export function requestLogging(log: Logger, id: RequestIdOptions, options: RequestLogOptions = {}): RequestHandler {
  const requestId = (req: IncomingMessage, res: ServerResponse): string => {
    if (options.logPath) (req as WithId).logPath = options.logPath(String(req.url).split('?')[0]!, req);
    let value: string | undefined;
    for (const header of id.accept) {
      const given = req.headers[header];
      if (typeof given === 'string' && id.pattern.test(given)) {
        value = given;
        break;
      }
    }
    value ??= id.generate(req);
    for (const header of id.echo) res.setHeader(header, value);
    (req as WithId).id = value;
    return value;
  };
  if (log.isLevelEnabled('info')) {
    return pinoHttp({
      logger: log,
      genReqId: requestId,
      // pino-http hands the serializers its own summaries; `raw` is the request itself. The answer's
      // status only: its headers (a V1 login's token among them) stay out of the line.
      serializers: {
        req: (req) => ({ id: req.id, method: req.method, url: loggedPath(req.raw as IncomingMessage) }),
        res: (res) => ({ statusCode: res.statusCode }),
      },
    });
  }
  return (req, res, next) => {
    requestId(req, res);
    next();
  };
}
