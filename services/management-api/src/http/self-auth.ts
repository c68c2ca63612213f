import type { NextFunction, Request, Response } from 'express';
import { errors } from '@cairn/domain';
import type { Db } from '../db/database';
import { storageUserOfToken } from '../services/gateway-tokens';
import type { StorageUserIdentity } from '../services/my-storage';
import type { LiveStorageUserSession, StorageUserSessions } from '../services/storage-user-sessions';
import { refuseCrossSite } from './auth';
import { sessionIdOf, STORAGE_SESSION_COOKIE } from './session-cookie';

/**
 * Authentication of the self-service routes (routes/self.ts), and of nothing else: a storage
 * user's session cookie, with the same defences against cross-site writes as an operator's
 * (SameSite=Strict, Origin, X-Cairn-CSRF). The session, not the request, names the account: the
 * handlers take the user from here and read nothing else that could point at another account.
 */
export interface StorageUserLocals {
  storageSession: LiveStorageUserSession;
  storageSessionId: string;
  /** Whom the request is for: the session's user, or a gateway token's (authenticateStorageUserOrToken). */
  storageUser: StorageUserIdentity;
}

export const storageSessionOf = (res: Response): LiveStorageUserSession =>
  (res.locals as StorageUserLocals).storageSession;
export const storageSessionIdOf = (res: Response): string => (res.locals as StorageUserLocals).storageSessionId;
export const storageUserOf = (res: Response): StorageUserIdentity => (res.locals as StorageUserLocals).storageUser;

/** A gateway token sent where only a session is taken: said, rather than "sign in first". */
const TOKEN_NOT_TAKEN =
  "A storage user's gateway token (X-Auth-Token) reads only GET /api/v1/self/storage/; the other self-service routes take a console session (POST /api/v1/self/session/).";

export function authenticateStorageUser(sessions: StorageUserSessions) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const sessionId = sessionIdOf(req, STORAGE_SESSION_COOKIE);
    if (sessionId === undefined) {
      if (req.get('x-auth-token') !== undefined) throw errors.unauthenticated(TOKEN_NOT_TAKEN);
      throw errors.unauthenticated(
        'Sign in as a storage user first (POST /api/v1/self/session/ with your cluster, user name and password).',
      );
    }
    const session = await sessions.authenticate(sessionId);
    refuseCrossSite(req, sessionId);
    const locals = res.locals as StorageUserLocals;
    locals.storageSession = session;
    locals.storageSessionId = sessionId;
    locals.storageUser = session;
    next();
  };
}

/**
 * For reads scripts make (My storage): a storage user's own gateway token in `X-Auth-Token`, as
 * Swift clients send it, checked by the cluster's gateway (services/gateway-tokens.ts); without
 * one, the session cookie as for every self-service route. A token answer is the token holder's
 * alone: no shared cache may keep it.
 */
export function authenticateStorageUserOrToken(db: Db, sessions: StorageUserSessions) {
  const bySession = authenticateStorageUser(sessions);
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const token = req.get('x-auth-token');
    if (token === undefined) return bySession(req, res, next);
    res.setHeader('Vary', 'X-Auth-Token');
    res.setHeader('Cache-Control', 'private');
    (res.locals as StorageUserLocals).storageUser = await storageUserOfToken(db, token);
    next();
  };
}
