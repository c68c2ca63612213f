import { Router, type RequestHandler } from 'express';
import { errors, stepUpSchema, validate, type Operator, type StepUpInput } from '@cairn/domain';
import { actingOf } from '../http/acting';
import { apiKeyIdOf, liveSessionOf, operatorOf, sessionOf } from '../http/auth';
import { parseBody } from '../http/body';
import { sendSecret } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { clearSessionCookie, sessionIdOf, setSessionCookie } from '../http/session-cookie';
import { asResource } from '../resources/marks';
import { operatorJson } from '../resources/representations';
import { API_ROOT, apiKeyUri } from '../resources/uris';
import { csrfTokenOf, type ConsoleSessions } from '../services/console-sessions';

const URI = `${API_ROOT}/session/`;

/**
 * The session's representation: who, on which key, until when, the token writes must echo, and
 * until when it may mint lasting credentials (null: not stepped up since sign-in).
 */
function sessionJson(
  sessions: ConsoleSessions,
  sessionId: string,
  operator: Operator,
  session: { apiKeyId: string; expiresAt: Date; steppedUpUntil: Date | null },
) {
  return asResource({
    csrf_token: csrfTokenOf(sessionId),
    expires_at: session.expiresAt.toISOString(),
    idle_timeout: sessions.settings.idleSeconds,
    operator: asResource({ ...operatorJson(operator), key_uri: apiKeyUri(operator.id, session.apiKeyId) }),
    resource_uri: URI,
    step_up_timeout: sessions.stepUpSeconds,
    stepped_up_until: session.steppedUpUntil?.toISOString() ?? null,
  });
}

/**
 * `/api/v1/session/`: the console's sign-in. POST with the operator's API key in the Authorization
 * header opens a session (201, Set-Cookie: an HttpOnly, SameSite=Strict cookie, Secure over TLS);
 * GET tells who the cookie signs in (`operator` null when nobody: the console asks before it knows,
 * so this is not an error); DELETE signs out. The key is never kept by the browser.
 */
export function sessionRouter(sessions: ConsoleSessions, auth: RequestHandler): Router {
  const router = Router();
  const byMethod: RequestHandler = (req, res, next) => {
    if (req.method === 'GET' || req.method === 'HEAD') return next();
    // Opening a session takes the key itself, never another session.
    if (req.method === 'POST' && !req.get('authorization')) {
      throw errors.unauthenticated('Signing in takes the API key: send "Authorization: ApiKey <operator>:<key>".');
    }
    return auth(req, res, next);
  };

  resourceRoute(router, '/session/', byMethod, {
    GET: async (req, res) => {
      const sessionId = sessionIdOf(req);
      const session = await sessions.find(sessionId);
      res.setHeader('Vary', 'Cookie');
      if (!session || sessionId === undefined) {
        sendSecret(req, res, 200, asResource({ operator: null, resource_uri: URI }));
        return;
      }
      sendSecret(req, res, 200, sessionJson(sessions, sessionId, session.operator, session));
    },
    POST: async (req, res) => {
      const acting = actingOf(req, res);
      const { sessionId, session } = await sessions.open(acting, apiKeyIdOf(res));
      setSessionCookie(req, res, sessionId);
      res.set('Location', URI);
      sendSecret(req, res, 201, sessionJson(sessions, sessionId, operatorOf(res), session));
    },
    DELETE: async (req, res) => {
      const sessionId = sessionOf(res);
      if (sessionId === undefined) {
        throw errors.invalidInput(
          'DELETE session/ signs out the console session its cookie names; this request was made with an API key and has none.',
        );
      }
      await sessions.close(actingOf(req, res), sessionId);
      clearSessionCookie(req, res);
      res.status(204).end();
    },
  });
  /**
   * `/api/v1/session/step_up/`: the signed-in operator types its API key again (`{"api_key": …}`),
   * checked as at sign-in; for `stepUpSeconds` the session may then mint API keys and operators,
   * widen an operator and take a backup. Cookie-authenticated like any write (Origin, X-Cairn-CSRF).
   */
  resourceRoute(router, '/session/step_up/', auth, {
    POST: async (req, res) => {
      const sessionId = sessionOf(res);
      const session = liveSessionOf(res);
      if (sessionId === undefined || session === undefined) {
        throw errors.invalidInput(
          'POST session/step_up/ confirms the console session its cookie names; this request was made with an API key, which needs no confirmation.',
        );
      }
      const { api_key: key } = validate<StepUpInput>(stepUpSchema, await parseBody(req));
      const stepped = await sessions.stepUp(actingOf(req, res), session, key);
      sendSecret(req, res, 200, sessionJson(sessions, sessionId, session.operator, stepped));
    },
  });
  return router;
}
