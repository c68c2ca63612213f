import type { NextFunction, Request, Response } from 'express';
import { errors, type Operator } from '@cairn/domain';
import { operatorByApiKey, type CredentialCache } from '../services/authentication';
import { csrfTokenMatches, type ConsoleSessions } from '../services/console-sessions';
import { CSRF_HEADER, sessionIdOf } from './session-cookie';

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
}

export const operatorOf = (res: Response): Operator => (res.locals as AuthenticatedLocals).operator;
export const apiKeyIdOf = (res: Response): string => (res.locals as AuthenticatedLocals).apiKeyId;
export const sessionOf = (res: Response): string | undefined => (res.locals as AuthenticatedLocals).sessionId;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The second defence against cross-site requests, after SameSite=Strict: a write authenticated
 * by the cookie must carry the session's token in X-Cairn-CSRF (a form or a cross-origin page
 * cannot set it) and, when the browser says where it came from, come from this origin.
 */
function refuseCrossSite(req: Request, sessionId: string): void {
  if (SAFE_METHODS.has(req.method)) return;
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') {
    throw errors.forbidden(
      'This request came from another site; the console session only accepts changes made from the console itself.',
    );
  }
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
      if (sessionId === undefined) throw errors.unauthenticated();
      const session = await sessions.authenticate(sessionId);
      refuseCrossSite(req, sessionId);
      locals.operator = session.operator;
      locals.apiKeyId = session.apiKeyId;
      locals.sessionId = sessionId;
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
