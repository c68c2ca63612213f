import type { RequestHandler } from 'express';
import type { Deps } from '../deps';
import { ACCESS_RULES_MESSAGE } from '../app-credentials/restricted';
import { validateOnce } from '../tokens/per-request';
import { header } from './endpoints';
import { sendKeystoneError } from './errors';
import { sendText } from './respond';

/** The one thing a token with access rules may still ask of the gateway: to revoke itself. */
const SELF_REVOCATION = { method: 'DELETE', path: '/v3/auth/tokens' };

/**
 * Every request under the /auth root passes here before its route. A token whose application
 * credential has access rules is limited by them to object-store requests (keystonemiddleware
 * enforces them at the proxy); the identity API is no object store, so here it is refused on every
 * route, as Keystone refuses it on its own API. The one exception: `DELETE /v3/auth/tokens` with
 * itself as the subject (a client logging out). Whether it names the token in `X-Auth-Token` or,
 * as V1 clients do, `X-Storage-Token`, it is refused.
 *
 * A request without a token costs nothing here (logins). One with a token is validated once: the
 * route reuses the answer (tokens/per-request.ts), and the subject of a V3 validation or revocation
 * is looked up in the same tick, so their Redis reads still share round trips.
 */
export function identityGuard(deps: Pick<Deps, 'tokens'>): RequestHandler {
  return (req, res, next) => {
    const authToken = header(req, 'x-auth-token');
    const storageToken = header(req, 'x-storage-token');
    if (authToken === undefined && storageToken === undefined) return next();
    const subjectToken = header(req, 'x-subject-token');
    Promise.all([
      validateOnce(deps.tokens, req, authToken),
      validateOnce(deps.tokens, req, storageToken),
      validateOnce(deps.tokens, req, subjectToken),
    ]).then(([byAuth, byStorage]) => {
      const ruled = [
        [authToken, byAuth],
        [storageToken, byStorage],
      ].filter(([, record]) => typeof record === 'object' && record?.applicationCredential?.accessRules !== undefined);
      if (ruled.length === 0) return next();
      const revokesItself =
        req.method === SELF_REVOCATION.method &&
        req.path === SELF_REVOCATION.path &&
        subjectToken !== undefined &&
        ruled.every(([token]) => token === subjectToken);
      if (revokesItself) return next();
      if (/^\/v1(\.0)?(\/|$)/.test(req.path)) sendText(res, 403, 'text/plain; charset=utf-8', ACCESS_RULES_MESSAGE);
      else sendKeystoneError(res, 403, ACCESS_RULES_MESSAGE);
    }, next);
  };
}
