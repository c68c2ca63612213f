import { Router, type RequestHandler } from 'express';
import { storageSignInSchema, validate, type StorageSignInInput } from '@cairn/domain';
import { parseBody } from '../http/body';
import { send, sendSecret } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { authenticateStorageUser, storageSessionIdOf, storageSessionOf } from '../http/self-auth';
import { clearSessionCookie, sessionIdOf, setSessionCookie, STORAGE_SESSION_COOKIE } from '../http/session-cookie';
import { asResource } from '../resources/marks';
import { myStorageJson, SELF_SESSION_URI, storageSessionJson } from '../resources/self-service';
import { csrfTokenOf } from '../services/console-sessions';
import type { Db } from '../db/database';
import { myStorage } from '../services/my-storage';
import type { StorageUserSessions } from '../services/storage-user-sessions';

/**
 * `/api/v1/self/`: what a storage user reaches with its own console session, and nothing else does
 * (an operator's key or session is not a storage user's; every other route refuses this session).
 *
 * - `self/session/`: POST `{"cluster", "user", "password"}` signs in (the password checked by the
 *   cluster's gateway under its failed-login limits; 201 with an HttpOnly, SameSite=Strict cookie),
 *   GET tells who the cookie signs in (`user` null when nobody), DELETE signs out.
 * - `self/storage/`: the account's usage against its quotas, per storage policy, and 30 days of
 *   storage and transfer.
 */
export function selfRouter(db: Db, sessions: StorageUserSessions, now: () => Date = () => new Date()): Router {
  const router = Router();
  const auth = authenticateStorageUser(sessions);
  // Signing in and asking who is signed in need no session; signing out does.
  const byMethod: RequestHandler = (req, res, next) => (req.method === 'DELETE' ? auth(req, res, next) : next());

  resourceRoute(router, '/self/session/', byMethod, {
    GET: async (req, res) => {
      const sessionId = sessionIdOf(req, STORAGE_SESSION_COOKIE);
      const session = await sessions.find(sessionId);
      res.setHeader('Vary', 'Cookie');
      if (!session || sessionId === undefined) {
        sendSecret(req, res, 200, asResource({ resource_uri: SELF_SESSION_URI, user: null }));
        return;
      }
      sendSecret(req, res, 200, storageSessionJson(session, csrfTokenOf(sessionId), sessions.settings.idleSeconds));
    },
    POST: async (req, res) => {
      const input = validate<StorageSignInInput>(storageSignInSchema, await parseBody(req));
      const { sessionId, session } = await sessions.open(input, req.ip);
      setSessionCookie(req, res, sessionId, STORAGE_SESSION_COOKIE);
      res.set('Location', SELF_SESSION_URI);
      sendSecret(req, res, 201, storageSessionJson(session, csrfTokenOf(sessionId), sessions.settings.idleSeconds));
    },
    DELETE: async (req, res) => {
      await sessions.close(storageSessionIdOf(res));
      clearSessionCookie(req, res, STORAGE_SESSION_COOKIE);
      res.status(204).end();
    },
  });

  resourceRoute(router, '/self/storage/', auth, {
    GET: async (req, res) => {
      send(req, res, 200, myStorageJson(await myStorage(db, storageSessionOf(res), now())));
    },
  });
  return router;
}
