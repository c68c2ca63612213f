import {
  CAIRN_VERSION,
  lingerOverUnreadBodies,
  metricsEndpoint,
  readinessEndpoint,
  registerReadinessMetrics,
  requestLogger,
  requestLogging,
} from '@cairn/runtime';
import express, { type Express } from 'express';
import { randomUUID } from 'node:crypto';
import { DEFAULT_RETENTION, errors } from '@cairn/domain';
import type { Deps } from './deps';
import { authenticate } from './http/auth';
import { CredentialCache } from './services/authentication';
import { BODY_LIMIT, refuseDeclaredOver } from './http/body';
import { errorHandler } from './http/errors';
import { consoleRouter } from './http/console';
import { routesOf, type RouteEntry } from './http/routing';
import { createApiMetrics } from './http/metrics';
import { negotiateOnce, send } from './http/respond';
import { API_ROOT } from './resources/uris';
import { auditResource, auditRouter } from './routes/audit';
import { backupRouter } from './routes/backup';
import { clustersResource, clustersRouter } from './routes/clusters';
import { operatorsResource, operatorsRouter } from './routes/operators';
import { devicesRouter } from './routes/devices';
import { ringPlansRouter } from './routes/ring-plans';
import { ringsRouter } from './routes/rings';
import { healthRouter } from './routes/health';
import { openApiDocument } from './openapi/document';
import { discoveryRouter } from './routes/root';
import { usersResource, usersRouter } from './routes/users';
import { s3CredentialsResource, s3CredentialsRouter } from './routes/s3-credentials';
import { applicationCredentialsResource, applicationCredentialsRouter } from './routes/application-credentials';
import { whoamiRouter } from './routes/whoami';
import { sessionRouter } from './routes/session';
import { ConsoleSessions, DEFAULT_CONSOLE_SESSIONS } from './services/console-sessions';
import { utilizationRouter } from './routes/utilization';
import { DEFAULT_TEMP_URL_MAX_SECONDS, selfRouter } from './routes/self';
import { StorageUserSessions } from './services/storage-user-sessions';

const routeTables = new WeakMap<Express, RouteEntry[]>();

/**
 * Every path under /api/v1/ the app serves and its methods, as its routers registered them: what a
 * test iterates to check a rule for every route, including routes added later.
 */
export const routeTableOf = (app: Express): RouteEntry[] => routeTables.get(app) ?? [];

/** Builds the management API. No listening, no environment: everything comes in `deps`. */
export function createApp(deps: Deps): Express {
  const { db, log } = deps;
  const app = express();
  app.disable('x-powered-by');
  // Tastypie sends no ETags, and hashing every body costs CPU on the hot path.
  app.disable('etag');
  app.set('query parser', 'simple');
  // req.secure (the session cookie's Secure flag) believes X-Forwarded-Proto only from trusted proxies.
  app.set('trust proxy', deps.trustProxy ?? false);

  const metrics = deps.metrics ?? createApiMetrics(db);
  app.use(metrics.http.middleware);
  // The caller's id (a load balancer's X-Request-Id, a Swift-style X-Trans-Id) when well-formed, else a new one.
  app.use(
    requestLogging(log, {
      accept: ['x-request-id', 'x-trans-id'],
      pattern: /^[\w.-]{1,128}$/,
      generate: () => randomUUID(),
      echo: ['X-Request-Id'],
    }),
  );
  // Bodies are read by the handlers that need them, after the operator's key and rights are
  // checked (http/body.ts); after an answer given without reading a large body, the connection ends.
  app.use(lingerOverUnreadBodies);

  // Probes take no body. One sent anyway is read first (refused past the limit): answering over an
  // unread body and then closing makes the kernel reset the connection, which can cut off a large
  // answer such as /metrics before the client has read it (seen in the hostile-input bench).
  app.use(
    ['/healthz', '/readyz', '/metrics'],
    refuseDeclaredOver(BODY_LIMIT),
    express.raw({ type: () => true, limit: BODY_LIMIT }),
  );
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', version: CAIRN_VERSION });
  });
  // Ready when Postgres answers within 2 s (the API has no Redis).
  const dependencies = { postgres: () => db.raw('SELECT 1') };
  app.get('/readyz', readinessEndpoint(dependencies));
  registerReadinessMetrics(metrics.registry, dependencies);
  // Unauthenticated, like the probes: serve it on the internal network only (see docs/operations.md).
  app.get('/metrics', metricsEndpoint(metrics.registry));

  const credentials = new CredentialCache(db, deps.apiKeyCacheMs);
  const sessions = new ConsoleSessions(db, deps.consoleSessions ?? DEFAULT_CONSOLE_SESSIONS, credentials);
  const auth = authenticate(credentials, sessions);
  const api = express.Router();
  // A malformed Accept header is refused up front (400), as tastypie does.
  api.use((req, _res, next) => {
    negotiateOnce(req);
    next();
  });
  const discoverable = [
    applicationCredentialsResource,
    auditResource,
    clustersResource,
    operatorsResource,
    s3CredentialsResource,
    usersResource,
  ];
  // Users first among the resources (after discovery, whose /users/schema/ the users' /:id/ would
  // take): their lists are the busiest requests, and no two resources share a path.
  const routers = [
    discoveryRouter(discoverable, auth, () => openApiDocument(discoverable)),
    usersRouter(db, auth, deps.hashPassword),
    s3CredentialsRouter(db, auth, deps.s3Keyring),
    applicationCredentialsRouter(db, auth),
    clustersRouter(db, auth),
    devicesRouter(db, auth),
    ringsRouter(db, auth),
    ringPlansRouter(db, auth),
    healthRouter(db, auth),
    operatorsRouter(db, auth, () => credentials.clear()),
    auditRouter(db, auth),
    whoamiRouter(auth),
    sessionRouter(sessions, auth),
    // Storage users' self-service: its own cookie and authentication, which no other router accepts.
    selfRouter(db, new StorageUserSessions(db, deps.consoleSessions ?? DEFAULT_CONSOLE_SESSIONS), {
      tempUrlMaxSeconds: deps.tempUrlMaxSeconds ?? DEFAULT_TEMP_URL_MAX_SECONDS,
    }),
    backupRouter(db, auth),
    utilizationRouter(db, auth, deps.utilization ?? DEFAULT_RETENTION, undefined, deps.utilizationExportBatch),
  ];
  for (const router of routers) api.use(router);
  routeTables.set(
    app,
    routers.flatMap((r) => routesOf(r).map((route) => ({ ...route, path: `${API_ROOT}${route.path}` }))),
  );
  api.use((req) => {
    throw errors.notFound(`No resource at ${req.path.replace(/[<>&"']/g, '')}.`);
  });

  app.use(API_ROOT, metrics.http.mount, api);
  // The operators' console: static files with their own security headers (see http/console.ts).
  app.get('/', (_req, res) => res.redirect(302, '/console/'));
  app.use('/console', consoleRouter(deps.consoleDir));
  app.use((req, res) => send(req, res, 404, { error: 'Not found. The API lives under /api/v1/.' }));
  // Lines about a failed request carry its id, like the request's own log line; the request's
  // logger is only looked up when a line is written (most errors here are 4xx, logged by nobody).
  app.use(errorHandler((req) => requestLogger(req, log)));
  return app;
}
