import type { NextFunction, Request, Response } from 'express';
import { errors, type Operator } from '@cairn/domain';
import { operatorByApiKey, type CredentialCache } from '../services/authentication';
import { csrfTokenMatches, type ConsoleSessions, type LiveConsoleSession } from '../services/console-sessions';
import { CSRF_HEADER, sessionIdOf, STORAGE_SESSION_COOKIE } from './session-cookie';

/**
 * `Authorization: ApiKey <operator>:<key>` (scheme word case-insensitive, split on the first ':');
 * the key is checked by services/authentication.ts. Without that header, the console's session
 * cookie (services/console-sessions.ts).
 */
const HEADER = /^apikey[ \t]+([^:\s]+):(\S+)\s*$/i;

export interface AuthenticatedLocals {
  operator: Operator;
  /** Which of the operator's keys the request was made with (its id, never the key). */
  apiKeyId: string;
  /** Set when the request was authenticated by the console's session cookie: the session id. */
  sessionId?: string;
  /** With sessionId: the live session, as read for this request (whether it is stepped up, by the database's clock). */
  session?: LiveConsoleSession;
}

export const operatorOf = (res: Response): Operator => (res.locals as AuthenticatedLocals).operator;
export const apiKeyIdOf = (res: Response): string => (res.locals as AuthenticatedLocals).apiKeyId;
export const sessionOf = (res: Response): string | undefined => (res.locals as AuthenticatedLocals).sessionId;
export const liveSessionOf = (res: Response): LiveConsoleSession | undefined =>
  (res.locals as AuthenticatedLocals).session;

/** What a storage user's session is told on every route but its own (routes/self.ts). */
export const STORAGE_USER_REFUSED =
  "A storage user's session reaches only its own account, under /api/v1/self/; this resource is for operators.";

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const CROSS_SITE =
  'This request came from another site; the console session only accepts changes made from the console itself.';

/**
 * This API's own origin as the browser sees it: the scheme (X-Forwarded-Proto from a proxy named in
 * CAIRN_TRUST_PROXY) and the Host the request came to (X-Forwarded-Host from such a proxy), in
 * URL's normal form (lower case, no default port); null when the Host is not a host.
 */
function ownOrigin(req: Request): string | null {
  const host = req.host;
  if (!host) return null;
  try {
    const url = new URL(`${req.protocol}://${host}`);
    const onlyHost = url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password;
    return onlyHost ? url.origin : null;
  } catch {
    return null;
  }
}

const sameOrigin = (req: Request, origin: string): boolean => {
  const own = ownOrigin(req);
  if (own === null) return false;
  try {
    return new URL(origin).origin === own;
  } catch {
    return false; // "null" (a sandboxed frame, a redirect across origins) or garbage
  }
};

/**
 * The second defence against cross-site requests, after SameSite=Strict: a write authenticated
 * by the cookie must come from this API's own origin (its `Origin`, which browsers send on every
 * write; or, without one, `Sec-Fetch-Site`) and carry the session's token in X-Cairn-CSRF (a form
 * or a cross-origin page cannot set it).
 */
export function refuseCrossSite(req: Request, sessionId: string): void {
  if (SAFE_METHODS.has(req.method)) return;
  const origin = req.get('origin');
  if (origin !== undefined && !sameOrigin(req, origin)) throw errors.forbidden(CROSS_SITE);
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') throw errors.forbidden(CROSS_SITE);
  const token = req.get(CSRF_HEADER);
  if (!token || !csrfTokenMatches(sessionId, token)) {
    throw errors.forbidden(
      `A change made with the console's session cookie must carry the session's ${CSRF_HEADER} header; send the API key in the Authorization header instead, or use the console.`,
    );
  }
}

export function authenticate(credentials: CredentialCache, sessions: ConsoleSessions) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const locals = res.locals as AuthenticatedLocals;
    const header = req.get('authorization');
    if (!header) {
      // Tastypie read `?username=&api_key=`; Cairn does not (a key in a URL ends up in logs), so say so.
      if (req.query.api_key !== undefined) {
        throw errors.unauthenticated(
          'API keys are not accepted in the query string; send "Authorization: ApiKey <operator>:<key>" instead.',
        );
      }
      const sessionId = sessionIdOf(req);
      // A storage user's session is never an operator's: refused as no credentials are, saying why.
      if (sessionId === undefined && sessionIdOf(req, STORAGE_SESSION_COOKIE) !== undefined)
        throw errors.unauthenticated(STORAGE_USER_REFUSED);
      if (sessionId === undefined) throw errors.unauthenticated();
      const session = await sessions.authenticate(sessionId);
      refuseCrossSite(req, sessionId);
      locals.operator = session.operator;
      locals.apiKeyId = session.apiKeyId;
      locals.sessionId = sessionId;
      locals.session = session;
      next();
      return;
    }
    const m = HEADER.exec(header);
    if (!m) throw errors.unauthenticated('Malformed Authorization header: expected "ApiKey <operator>:<key>".');
    const [, name, key] = m as unknown as [string, string, string];
    const { operator, apiKeyId } = await operatorByApiKey(credentials, name, key);
    locals.operator = operator;
    locals.apiKeyId = apiKeyId;
    next();
  };
}
