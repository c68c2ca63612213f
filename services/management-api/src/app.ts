import { requestLogging } from '@cairn/runtime';
import express, { type Express } from 'express';
import { randomUUID } from 'node:crypto';
import { errors } from '@cairn/domain';
import type { Deps } from './deps';
import { authenticate, CredentialCache } from './http/auth';
import { refuseDeclaredOver } from './http/body';
import { errorHandler } from './http/errors';
import { negotiateFormat } from './http/negotiate';
import { send } from './http/respond';
import { API_ROOT } from './http/uris';
import { auditResource, auditRouter } from './routes/audit';
import { clustersResource, clustersRouter } from './routes/clusters';
import { operatorsResource, operatorsRouter } from './routes/operators';
import { devicesRouter, DEVICE_REPORT_LIMIT } from './routes/devices';
import { discoveryRouter } from './routes/root';
import { usersResource, usersRouter } from './routes/users';

/** Bodies are small field sets; anything larger is refused with 413 before it is parsed. */
export const BODY_LIMIT = '64kb';

/** Builds the management API. No listening, no environment: everything comes in `deps`. */
export function createApp(deps: Deps): Express {
  const { db, log } = deps;
  const app = express();
  app.disable('x-powered-by');
  // Tastypie sends no ETags, and hashing every body costs CPU on the hot path.
  app.disable('etag');
  app.set('query parser', 'simple');

  app.use(requestLogging(log, { header: 'X-Request-Id', pattern: /^[\w.-]{1,128}$/, generate: randomUUID }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    try {
      await db.raw('SELECT 1');
      res.json({ status: 'ok', postgres: 'ok' });
    } catch {
      res.status(503).json({ status: 'unavailable', postgres: 'unreachable' });
    }
  });

  const credentials = new CredentialCache(db, deps.apiKeyCacheMs);
  const auth = authenticate(credentials);
  const api = express.Router();
  // Device reports list every device of a cluster; every other body is a small set of fields.
  api.use('/clusters/:id/devices', refuseDeclaredOver(DEVICE_REPORT_LIMIT), express.raw({ type: () => true, limit: DEVICE_REPORT_LIMIT }));
  api.use(refuseDeclaredOver(BODY_LIMIT), express.raw({ type: () => true, limit: BODY_LIMIT }));
  // A malformed Accept header is refused up front (400), as tastypie does.
  api.use((req, _res, next) => {
    negotiateFormat(req.query.format, req.get('accept'));
    next();
  });
  api.use(discoveryRouter([auditResource, clustersResource, operatorsResource, usersResource], auth));
  api.use(clustersRouter(db, auth));
  api.use(usersRouter(db, auth, deps.hashPassword));
  api.use(devicesRouter(db, auth));
  api.use(operatorsRouter(db, auth, () => credentials.clear()));
  api.use(auditRouter(db, auth));
  api.use((req) => {
    throw errors.notFound(`No resource at ${req.path.replace(/[<>&"']/g, '')}.`);
  });

  app.use(API_ROOT, api);
  app.use((req, res) => send(req, res, 404, { error: 'Not found. The API lives under /api/v1/.' }));
  app.use(errorHandler(log));
  return app;
}
