import express, { type Express } from 'express';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import pinoHttp from 'pino-http';
import type { Deps } from './deps';
import { errorHandler, notFound } from './http/errors';
import { discoveryRouter } from './routes/discovery';
import { keystoneV2Router } from './routes/keystone-v2';
import { keystoneV3Router } from './routes/keystone-v3';
import { swiftV1Router } from './routes/swift-v1';

/** Where the gateway's APIs are mounted; a cluster's auth_url ends in it. */
export const AUTH_ROOT = '/auth';

/** Builds the auth gateway. No listening, no environment: everything comes in `deps`. */
export function createApp(deps: Deps): Express {
  const { log } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  const requestId = (req: IncomingMessage, res: ServerResponse): string => {
    const given = req.headers['x-openstack-request-id'];
    const id = typeof given === 'string' && /^req-[\w-]{1,128}$/.test(given) ? given : `req-${randomUUID()}`;
    res.setHeader('x-openstack-request-id', id);
    return id;
  };
  if (log.isLevelEnabled('info')) {
    app.use(
      pinoHttp({
        logger: log,
        // Keystone tags every response with a request id; reuse a well-formed one from the caller.
        genReqId: requestId,
        // Tokens travel in headers and query strings are never needed in a log: log neither.
        serializers: { req: (req) => ({ id: req.id, method: req.method, url: String(req.url).split('?')[0] }) },
      }),
    );
  } else {
    // Request lines would be dropped anyway; skip pino-http's per-request work, keep the id.
    app.use((req, res, next) => {
      requestId(req, res);
      next();
    });
  }
  // Answers depend on the caller's token (as in Keystone), so caches must key on it.
  app.use((_req, res, next) => {
    res.vary('X-Auth-Token');
    next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.use(AUTH_ROOT, swiftV1Router(deps), keystoneV2Router(deps), keystoneV3Router(deps), discoveryRouter(deps.publicUrl));

  app.use(notFound);
  app.use(errorHandler(log));
  return app;
}
