import type { IncomingMessage } from 'node:http';
import { Router, type RequestHandler } from 'express';

/**
 * The path a request is logged under. A token must never reach a log line, and Keystone V2
 * validation carries one in its path (`GET /v2.0/tokens/<token>`). Two rules, in this order:
 *
 * 1. A request the router will hand to a route whose path has a token in it is logged under
 *    that route's pattern, `[token]` in place of the token (`tokenRoutes` below). The match is
 *    made by express's own Router, from the very pattern the route is declared with and mounted
 *    where it is served, so every spelling the router accepts (any letter case, a trailing slash,
 *    percent-encoded letters, whatever a later express accepts) is logged alike.
 * 2. Any other path (no route will take it, but a token sent to a wrong path is still a live
 *    token) is read with its percent-escapes decoded, and everything after the word `tokens`, in
 *    any letter case and whatever separates it (`/`, `//`, `;`, `%2F`, `\`), is shown as
 *    `[token]`, as is anything shaped like one of the gateway's tokens (a JWT) anywhere in it.
 *    Such a path is logged decoded; every other path is logged as it was sent.
 */
const routed = new WeakMap<IncomingMessage, string>();

/** The name a route's path gives the token it carries (`/v2.0/tokens/:token`). */
export const TOKEN_PARAM = 'token';

/**
 * Middleware, mounted at `mount` before the request is logged, that recognises requests for the
 * routes `paths` (declared under `mount` with `router.get(path, …)`) and marks how they are logged.
 */
export function tokenRoutes(mount: string, paths: readonly string[]): RequestHandler {
  const router = Router();
  for (const path of paths) {
    const logged = `${mount}${path.replace(`:${TOKEN_PARAM}`, '[token]')}`;
    router.get(path, (req, _res, next) => {
      routed.set(req, logged);
      next();
    });
  }
  // Only a look ahead: a path the router cannot decode (a malformed escape) is answered where it
  // is routed, after it was logged, not here.
  return (req, res, next) => router(req, res, () => next());
}

const MAX_DECODES = 4;
/** A JWT: three base64url parts; the gateway's header always starts `eyJ` (`{"`). */
const JWT_SHAPED = /eyJ[\w-]*\.[\w-]+\.[\w-]*/g;
const AFTER_TOKENS = /(tokens[/\\;]*)(?=[^/\\;]).*$/is;

/** Percent-escapes decoded as bytes, again while any remain (a client may encode twice). */
function decoded(path: string): string {
  let out = path;
  for (let i = 0; i < MAX_DECODES && out.includes('%'); i++) {
    const next = out.replace(/%([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === out) break;
    out = next;
  }
  return out;
}

/** Rule 2 above, for a path no token route will take. */
export function redactTokens(path: string): string {
  const plain = decoded(path);
  const redacted = plain.replace(AFTER_TOKENS, '$1[token]').replace(JWT_SHAPED, '[token]');
  return redacted === plain ? path : redacted;
}

/** What `requestLogging` logs a request under. */
export const logPath = (path: string, req: IncomingMessage): string => routed.get(req) ?? redactTokens(path);
