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

/** What keystoneauth and the swift CLI send; any other media type or charset goes through express. */
const PLAIN_JSON = /^application\/json(\s*;\s*charset="?utf-8"?)?$/i;

/**
 * A body this path reads itself: a declared length within the limit, sent as is, as UTF-8 JSON.
 * Everything else (chunked, compressed, other charsets, empty, too large) goes through express's
 * JSON parser, whose answers for those cases stay the only ones.
 */
function simpleJsonBody(req: IncomingMessage): boolean {
  const length = Number(req.headers['content-length']);
  const type = req.headers['content-type'];
  return (
    req.headers['transfer-encoding'] === undefined &&
    length > 0 &&
    length <= BODY_LIMIT_BYTES &&
    (req.headers['content-encoding'] === undefined || req.headers['content-encoding'] === 'identity') &&
    (type === undefined || PLAIN_JSON.test(type))
  );
}

function readText(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** As express.json (strict) reads a body: a byte-order mark dropped, only an object or an array. */
function parseStrictJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const first = /^[ \t\n\r]*(.)/s.exec(body)?.[1];
  if (first !== '{' && first !== '[') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * Express's own per-request setup (it swaps the prototypes of every request and response, then
 * walks the router) costs about 0.1 ms of CPU per request on our machines, five times a bare Node
 * answer and more than the rest of a warm V1 login (BENCHMARKS.md, auth-gateway). The calls
 * Swift clients and proxies make all the time — `GET <mount>/v1.0` (and `/v1`) and
 * `GET <mount>/v3/auth/tokens` without a body, `POST <mount>/v3/auth/tokens` with a plain JSON
 * body — are therefore answered before it, by the very functions the routers call, inside the
 * same request id, log line, metrics and error answers as every other request. Any other form of
 * these calls (HEAD, another query string, a body that is chunked, compressed, empty or in another
 * charset) and every other request go through express as before.
 *
 * `requestLogging` is the middleware the app installed (request ids, and log lines at `info`).
 */
export function hotPathsFirst(app: Express, deps: Deps, mount: string, requestLogging: RequestHandler): Express {
  const trust = app.get('trust proxy fn') as (address: string, hop: number) => boolean;
  const login = v1Login(deps);
  const validation = v3Validation(deps);
  const issue = v3Issue(deps);
  const onError = errorAnswer((req) => requestLogger(req, deps.log));
  const v1: Answer = (req, res) => login(req, res, proxyaddr(req, trust));
  const issueToken: Answer = async (req, res) => {
    // A body cut short is answered as express.json's error would be (the client is likely gone).
    const text = await readText(req).catch(() => undefined);
    const parsed = text === undefined ? { ok: false as const } : parseStrictJson(text);
    if (!parsed.ok) return issue.malformed(res);
    await issue.answer(res, parsed.value, proxyaddr(req, trust));
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
        : req.method === 'POST' && simpleJsonBody(req)
          ? posts.get(req.url ?? '')
          : undefined;
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
