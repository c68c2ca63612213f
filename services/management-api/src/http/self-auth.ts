import type { NextFunction, Request, Response } from 'express';
import { errors } from '@cairn/domain';
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
}

export const storageSessionOf = (res: Response): LiveStorageUserSession =>
  (res.locals as StorageUserLocals).storageSession;
export const storageSessionIdOf = (res: Response): string => (res.locals as StorageUserLocals).storageSessionId;

export function authenticateStorageUser(sessions: StorageUserSessions) {
  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const sessionId = sessionIdOf(req, STORAGE_SESSION_COOKIE);
    if (sessionId === undefined) {
      throw errors.unauthenticated(
        'Sign in as a storage user first (POST /api/v1/self/session/ with your cluster, user name and password).',
      );
    }
    const session = await sessions.authenticate(sessionId);
    refuseCrossSite(req, sessionId);
    const locals = res.locals as StorageUserLocals;
    locals.storageSession = session;
    locals.storageSessionId = sessionId;
    next();
  };
}
