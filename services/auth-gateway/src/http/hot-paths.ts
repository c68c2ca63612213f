import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestLogger } from '@cairn/runtime';
import type { Express, RequestHandler } from 'express';
import proxyaddr from 'proxy-addr';
import type { Deps } from '../deps';
import { v3Issue } from '../routes/keystone-v3';
import { v3Validation } from '../routes/keystone-v3-validation';
import { v1Login } from '../routes/swift-v1';
import { BODY_LIMIT_BYTES } from './body-limit';
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
 * answer and more than the rest of a warm V1 login (docs/benchmarks.md, auth-gateway). The calls
 * Swift clients and proxies make all the time — `GET <mount>/v1.0` (and `/v1`) and
 * `GET <mount>/v3/auth/tokens` without a body, `POST <mount>/v3/auth/tokens` not declared over
 * the body limit — are therefore answered before it, by the very functions the routers call
 * (the POST's body read by the same JSON parser), inside the same request id, log line, metrics
 * and error answers as every other request. Any other form of these calls (HEAD, another query
 * string, a body on a GET, a declared length over the limit) and every other request go through
 * express as before.
 *
 * `everyRequest`: the middlewares the app runs first on every request (metrics, request id and log
 * line, Vary); a hot path runs them too, in the same order.
 */
export function hotPathsFirst(app: Express, deps: Deps, mount: string, everyRequest: readonly RequestHandler[]): Express {
  const trust = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  const login = v1Login(deps);
  const validation = v3Validation(deps);
  const issue = v3Issue(deps);
  const onError = errorAnswer((req) => requestLogger(req, deps.log));
  const v1: Answer = (req, res) => login(req, res, proxyaddr(req, trust));
  const issueToken: Answer = async (req, res) => {
    const read = await issue.readBody(req, res);
    if (read) await issue.answer(res, read.body, proxyaddr(req, trust));
  };
  const tokensRoute = { path: '/v3/auth/tokens' };
  const gets = new Map<string, HotRoute>([
    [`${mount}/v1.0`, { route: { path: '/v1.0' }, answer: v1 }],
    [`${mount}/v1`, { route: { path: '/v1' }, answer: v1 }],
    [`${mount}/v3/auth/tokens`, { route: tokensRoute, answer: (req, res) => validation.answer(req, res, true) }],
    [`${mount}/v3/auth/tokens?nocatalog`, { route: tokensRoute, answer: (req, res) => validation.answer(req, res, false) }],
  ]);
  const posts = new Map<string, HotRoute>([[`${mount}/v3/auth/tokens`, { route: tokensRoute, answer: issueToken }]]);
  const { http } = deps.metrics;

  const viaExpress = (app as unknown as { handle: Handle }).handle.bind(app);
  (app as unknown as { handle: Handle }).handle = (req, res, next) => {
    const hot =
      req.method === 'GET' && !mayHaveBody(req)
        ? gets.get(req.url ?? '')
        : req.method === 'POST' && !(Number(req.headers['content-length']) > BODY_LIMIT_BYTES)
          ? posts.get(req.url ?? '')
          : undefined;
    // A deleted cluster's 503 is express's to answer (clusterGate).
    if (!hot || deps.cluster.deleted) return viaExpress(req, res, next);
    for (const step of everyRequest) step(req as never, res as never, noop);
    http.routeAs(req, mount, hot.route);
    hot.answer(req, res).catch((err: unknown) => onError(err, req, res));
  };
  return app;
}
