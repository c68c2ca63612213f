import {
  CAIRN_VERSION,
  lingerOverUnreadBodies,
  metricsEndpoint,
  NotReady,
  readinessEndpoint,
  ReadyAs,
  registerReadinessMetrics,
  requestLogger,
  requestLogging,
} from '@cairn/runtime';
import express, { type Express, type RequestHandler } from 'express';
import type { Deps } from './deps';
import { BODY_LIMIT, declaredBodyLimit } from './http/body-limit';
import { clusterGate } from './http/cluster-gate';
import { standbyGate, standbyReadiness } from './http/standby-gate';
import { errorHandler, notFound } from './http/errors';
import { logPath, tokenRoutes } from './http/log-path';
import { GATEWAY_REQUEST_ID } from './http/request-id';
import { identityGuard } from './http/identity-guard';
import { discoveryRouter } from './routes/discovery';
import { keystoneV2Router, V2_VALIDATION_PATH } from './routes/keystone-v2';
import { keystoneV3Router } from './routes/keystone-v3';
import { swiftV1Router } from './routes/swift-v1';
import { s3Routers } from './s3/routes';
import { applicationCredentialsRouter } from './app-credentials/route';

/** Where the gateway's APIs are mounted; a cluster's auth_url ends in it. */
export const AUTH_ROOT = '/auth';

/** Builds the auth gateway. No listening, no environment: everything comes in `deps`. */
export function createApp(deps: Deps): Express {
  const { log, db, redis, cluster } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  // req.ip (the per-address login limit) comes from X-Forwarded-For only through trusted proxies.
  app.set('trust proxy', deps.trustProxy ?? false);

  const { http } = deps.metrics;
  app.use(http.middleware);
  // Before the request is logged: which requests the token routes below will take, so that they
  // are logged under the route's pattern and never with the token (http/log-path.ts).
  app.use(AUTH_ROOT, tokenRoutes(AUTH_ROOT, [V2_VALIDATION_PATH]));
  // What every request goes through first.
  const everyRequest: RequestHandler[] = [
    requestLogging(log, GATEWAY_REQUEST_ID, { logPath }),
    // Routes read bodies only after what they can check without them; after an answer given
    // without reading a large body, the connection ends.
    lingerOverUnreadBodies,
    // Answers depend on the caller's token (as in Keystone), so caches must key on it. Nothing
    // has set Vary yet.
    (_req, res, next) => {
      res.setHeader('Vary', 'X-Auth-Token');
      next();
    },
  ];
  app.use(everyRequest);

  // Bodies over the limit are refused on every route, probes and V1 included, before any work.
  app.use(declaredBodyLimit);

  // The routers serve disjoint paths, so their order only decides how many route tables a request
  // walks: the calls Swift proxies make all the time (V3 validation) and clients' logins come first,
  // and the probes after them (asked every few seconds, not hundreds of times a second).
  // One router mounted once: express trims and restores the mount path for every layer mounted at
  // a path, so the handlers below, each mounted at AUTH_ROOT, cost a request that much per handler.
  const auth = express.Router();
  auth.use(
    http.mount,
    clusterGate(cluster),
    standbyGate(deps.changeLog, deps.stalePolicy),
    // Before every route: a token with access rules reaches none of them (http/identity-guard.ts).
    identityGuard(deps),
    keystoneV3Router(deps),
    swiftV1Router(deps),
    keystoneV2Router(deps),
    ...s3Routers(deps),
    applicationCredentialsRouter(deps),
    discoveryRouter(() => cluster.settings.endpoints.authUrl),
  );
  app.use(AUTH_ROOT, auth);

  // Probes take no body. One sent anyway is read first (refused past the limit): answering over an
  // unread body and then closing makes the kernel reset the connection, which can cut off a large
  // answer such as /metrics before the client has read it.
  app.use(['/healthz', '/readyz', '/metrics'], express.raw({ type: () => true, limit: BODY_LIMIT }));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', version: CAIRN_VERSION });
  });
  // Ready when Postgres and Redis answer within 2 s, the cluster still exists and, on a standby,
  // the copy is recent enough (or CAIRN_STANDBY_STALE=serve); without Redis, tokens live in this process.
  const dependencies = {
    postgres: () => db.raw('SELECT 1'),
    redis: redis
      ? () => {
          // Already known to be down: say so now rather than queue a PING behind the reconnection.
          if (redis.status === 'reconnecting' || redis.status === 'end' || redis.status === 'close')
            return Promise.reject(new Error(redis.status));
          return redis.ping();
        }
      : { fixed: 'not configured (in-process store)' },
  };
  app.get(
    '/readyz',
    readinessEndpoint({
      ...dependencies,
      cluster: () => (cluster.deleted ? Promise.reject(new NotReady('deleted')) : Promise.resolve()),
      standby: () => {
        const { status, ready } = standbyReadiness(deps.changeLog, deps.stalePolicy);
        return ready ? Promise.resolve(new ReadyAs(status)) : Promise.reject(new NotReady(status));
      },
    }),
  );
  registerReadinessMetrics(deps.metrics.registry, dependencies);
  // Unauthenticated, like the probes: serve it on the internal network only (see docs/operations.md).
  app.get('/metrics', metricsEndpoint(deps.metrics.registry));

  app.use(notFound);
  // Lines about a failed request carry its id, like the request's own log line.
  app.use(errorHandler((req) => requestLogger(req, log)));
  return app;
}
