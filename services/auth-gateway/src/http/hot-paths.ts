import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestLogger } from '@cairn/runtime';
import type { Express, RequestHandler } from 'express';
import proxyaddr from 'proxy-addr';
import type { Deps } from '../deps';
import { v3Validation } from '../routes/keystone-v3-validation';
import { v1Login } from '../routes/swift-v1';
import { errorAnswer } from './errors';

type Answer = (req: IncomingMessage, res: ServerResponse) => Promise<void>;
type Handle = (req: IncomingMessage, res: ServerResponse, next?: (err?: unknown) => void) => void;
interface HotRoute {
  /** The router's route object for this path (metrics label it `mount` + path, as express would). */
  route: { path: string };
  answer: Answer;
}

const noop = () => undefined;

/** A request that may carry a body goes through express, which limits and reads it. */
const mayHaveBody = (req: IncomingMessage): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * Express's own per-request setup (it swaps the prototypes of every request and response, then
 * walks the router) costs about 0.1 ms of CPU per request on our machines, five times a bare Node
 * answer and more than the rest of a warm V1 login (BENCHMARKS.md, auth-gateway). The two calls
 * Swift clients and proxies make all the time, `GET <mount>/v1.0` (and `/v1`) and
 * `GET <mount>/v3/auth/tokens` without a body, are therefore answered before it, by the very
 * functions the routers call, inside the same request id, log line, metrics and error answers as
 * every other request. Any other form of these calls (HEAD, a body, another query string) and
 * every other request go through express as before.
 *
 * `requestLogging` is the middleware the app installed (request ids, and log lines at `info`).
 */
export function hotPathsFirst(app: Express, deps: Deps, mount: string, requestLogging: RequestHandler): Express {
  const trust = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  const login = v1Login(deps);
  const validation = v3Validation(deps);
  const onError = errorAnswer((req) => requestLogger(req, deps.log));
  const v1: Answer = (req, res) => login(req, res, proxyaddr(req, trust));
  const validateRoute = { path: '/v3/auth/tokens' };
  const routes = new Map<string, HotRoute>([
    [`${mount}/v1.0`, { route: { path: '/v1.0' }, answer: v1 }],
    [`${mount}/v1`, { route: { path: '/v1' }, answer: v1 }],
    [`${mount}/v3/auth/tokens`, { route: validateRoute, answer: (req, res) => validation.answer(req, res, true) }],
    [`${mount}/v3/auth/tokens?nocatalog`, { route: validateRoute, answer: (req, res) => validation.answer(req, res, false) }],
  ]);
  const { http } = deps.metrics;

  const viaExpress = (app as unknown as { handle: Handle }).handle.bind(app);
  (app as unknown as { handle: Handle }).handle = (req, res, next) => {
    const hot = req.method === 'GET' && !mayHaveBody(req) ? routes.get(req.url ?? '') : undefined;
    if (!hot) return viaExpress(req, res, next);
    // What the app's first middlewares do for every request, in the same order.
    http.middleware(req as never, res as never, noop);
    http.routeAs(req, mount, hot.route);
    requestLogging(req as never, res as never, noop);
    res.setHeader('Vary', 'X-Auth-Token');
    hot.answer(req, res).catch((err: unknown) => onError(err, req, res));
  };
  return app;
}
