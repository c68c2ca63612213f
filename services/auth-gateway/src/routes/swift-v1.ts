import { requestIdOf } from '@cairn/runtime';
import { Router, type Request, type Response } from 'express';
import type { Deps } from '../deps';
import { isValidProjectName } from '../credentials/logins';
import { endpointsFor, headerText } from '../http/endpoints';
import { methodNotAllowed } from '../http/errors';
import { transId } from '../http/request-id';
import { accountUrl } from '../keystone/documents';
import { RESELLER_ADMIN_ROLE } from '../tokens/roles';

const UNAUTHORIZED_BODY =
  '<html><h1>Unauthorized</h1><p>This server could not verify that you are authorized to access the document you requested.</p></html>';

function unauthorized(res: Response): void {
  // One realm for every failure: unknown user, disabled user and wrong key look the same.
  res.status(401).set('Www-Authenticate', 'Swift realm="unknown"').type('text/html; charset=UTF-8').send(UNAUTHORIZED_BODY);
}

/**
 * Swift V1 auth as tempauth and swauth speak it (`GET /auth/v1.0`), plus SwiftStack's per-user
 * token revocation (`DELETE /auth/v1.0/users/<name>/token`, superusers only).
 */
export function swiftV1Router(deps: Deps): Router {
  const router = Router();
  // The configured URLs: the same for every answer.
  const endpoints = endpointsFor(deps);
  // Swift names its request ids like this; set on V1 answers only (Keystone's ids stay elsewhere).
  const tagged = (handler: (req: Request, res: Response) => Promise<void>) => (req: Request, res: Response) => {
    // The request's id (X-Openstack-Request-Id and X-Request-Id carry it too): tx… unless the caller sent one.
    res.set('X-Trans-Id', requestIdOf(req) ?? transId());
    return handler(req, res);
  };

  const login = async (req: Request, res: Response) => {
    const given = headerText(req, 'x-auth-user') ?? headerText(req, 'x-storage-user');
    const key = headerText(req, 'x-auth-key') ?? headerText(req, 'x-storage-pass');
    if (!given || key === undefined) {
      deps.metrics.refused('v1', 'malformed');
      return unauthorized(res);
    }
    // "account:user" (tempauth style) or just "user"; the account defaults to the user's own.
    const colon = given.indexOf(':');
    const account = colon >= 0 ? given.slice(0, colon) : given;
    const username = colon >= 0 ? given.slice(colon + 1) : given;
    const result = await deps.logins.login(username, key, req.ip);
    if (!result.ok) {
      deps.metrics.refused('v1', result.reason === 'limited' ? 'rate_limited' : 'invalid_credentials');
      if (result.reason === 'limited') {
        res.status(429).set('Retry-After', String(result.retryAfterSeconds)).type('text/plain').send(result.message);
        return;
      }
      return unauthorized(res);
    }
    if (!isValidProjectName(account)) {
      deps.metrics.refused('v1', 'scope_refused');
      return unauthorized(res);
    }
    const { id, record } = await deps.tokens.issue({ user: result.user, project: account, methods: ['password'], userDomain: 'default' });
    deps.metrics.issued('v1');
    const expiresIn = Math.max(0, Math.floor((Date.parse(record.expiresAt) - Date.now()) / 1000));
    res
      .status(200)
      .set('X-Storage-Url', accountUrl(endpoints.storageUrl, account))
      .set('X-Auth-Token', id)
      .set('X-Storage-Token', id)
      .set('X-Auth-Token-Expires', String(expiresIn))
      .type('text/plain; charset=UTF-8')
      .send('');
  };

  for (const path of ['/v1.0', '/v1']) {
    router.get(path, tagged(login));
    router.all(path, methodNotAllowed(['GET']));
  }

  router.delete('/v1.0/users/:name/token', tagged(async (req, res) => {
    const caller = await deps.tokens.validate(headerText(req, 'x-auth-token') ?? headerText(req, 'x-storage-token'));
    if (!caller) return unauthorized(res);
    if (!caller.roles.includes(RESELLER_ADMIN_ROLE)) {
      res.status(403).type('text/plain').send('Only a superuser may revoke the tokens of a user.');
      return;
    }
    const name = String(req.params.name);
    // A name no user can have (NUL, control characters, '/') is looked up nowhere: Postgres refuses NUL.
    if (!isValidProjectName(name) || !(await deps.users.find(name))) {
      res.status(404).type('text/plain').send('No such user.');
      return;
    }
    await deps.tokens.revokeUser(name);
    res.status(204).end();
  }));
  router.all('/v1.0/users/:name/token', methodNotAllowed(['DELETE']));
  return router;
}
