import { requestLogging } from '@cairn/runtime';
import express, { type Express } from 'express';
import { randomUUID } from 'node:crypto';
import type { Deps } from './deps';
import { declaredBodyLimit } from './http/body-limit';
import { errorHandler, notFound } from './http/errors';
import { logPath } from './http/log-path';
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
  // req.ip (the per-address login limit) comes from X-Forwarded-For only through trusted proxies.
  app.set('trust proxy', deps.trustProxy ?? false);

  app.use(requestLogging(log, { header: 'x-openstack-request-id', pattern: /^req-[\w-]{1,128}$/, generate: () => `req-${randomUUID()}` }, { logPath }));
  // Answers depend on the caller's token (as in Keystone), so caches must key on it.
  app.use((_req, res, next) => {
    res.vary('X-Auth-Token');
    next();
  });

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  // Bodies over the limit are refused on every route, V1 included, before any work.
  app.use(declaredBodyLimit);
  app.use(AUTH_ROOT, swiftV1Router(deps), keystoneV2Router(deps), keystoneV3Router(deps), discoveryRouter(deps.publicUrl));

  app.use(notFound);
  app.use(errorHandler(log));
  return app;
}
