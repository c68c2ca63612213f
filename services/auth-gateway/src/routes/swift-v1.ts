import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestIdOf } from '@cairn/runtime';
import { Router } from 'express';
import type { Deps } from '../deps';
import { isValidProjectName } from '../credentials/logins';
import { loginFlow } from '../flows/login';
import { endpointsFor, headerText } from '../http/endpoints';
import { methodNotAllowed } from '../http/errors';
import { transId } from '../http/request-id';
import { sendText } from '../http/respond';
import { accountUrl } from '../keystone/documents';
import { RESELLER_ADMIN_ROLE } from '../tokens/roles';
import { validateOnce } from '../tokens/per-request';

const UNAUTHORIZED_BODY =
  '<html><h1>Unauthorized</h1><p>This server could not verify that you are authorized to access the document you requested.</p></html>';

function unauthorized(res: ServerResponse): void {
  // One realm for every failure: unknown user, disabled user and wrong key look the same.
  res.setHeader('Www-Authenticate', 'Swift realm="unknown"');
  sendText(res, 401, 'text/html; charset=utf-8', UNAUTHORIZED_BODY);
}

/** Swift names its request ids like this; set on V1 answers only (Keystone's ids stay elsewhere). */
function tagTransaction(req: IncomingMessage, res: ServerResponse): void {
  // The request's id (X-Openstack-Request-Id and X-Request-Id carry it too): tx… unless the caller sent one.
  res.setHeader('X-Trans-Id', requestIdOf(req) ?? transId());
}

/** A V1 login answered from a request: `clientAddress` is whom the per-address failure limit counts. */
export type V1Login = (req: IncomingMessage, res: ServerResponse, clientAddress: string | undefined) => Promise<void>;

/** `GET /auth/v1.0` as tempauth answers it. */
export function v1Login(deps: Deps): V1Login {
  const login = loginFlow(deps, 'v1');
  return async (req, res, clientAddress) => {
    tagTransaction(req, res);
    const given = headerText(req, 'x-auth-user') ?? headerText(req, 'x-storage-user');
    const key = headerText(req, 'x-auth-key') ?? headerText(req, 'x-storage-pass');
    if (!given || key === undefined) {
      deps.metrics.refused('v1', 'malformed');
      return unauthorized(res);
    }
    // "account:user" (tempauth style) or just "user"; the account defaults to the user's own. A
    // user imported from tempauth also logs in as "account:<its tempauth name>".
    const colon = given.indexOf(':');
    const account = colon >= 0 ? given.slice(0, colon) : given;
    const username = colon >= 0 ? given.slice(colon + 1) : given;
    const outcome = await login({
      username,
      password: key,
      project: account,
      clientAddress,
      userDomain: 'default',
      ...(account !== username ? { tempauthAccount: account } : {}),
    });
    if (!outcome.ok) {
      if (outcome.refusal === 'invalid') return unauthorized(res);
      res.setHeader('Retry-After', String(outcome.retryAfterSeconds));
      return sendText(res, 429, 'text/plain; charset=utf-8', outcome.message);
    }
    // V1's rendering: the token and the account's URL in headers, an empty body.
    const { id, record } = outcome.token;
    const expiresIn = Math.max(0, Math.floor((Date.parse(record.expiresAt) - Date.now()) / 1000));
    res.setHeader('X-Storage-Url', accountUrl(endpointsFor(deps).storageUrl, account));
    res.setHeader('X-Auth-Token', id);
    res.setHeader('X-Storage-Token', id);
    res.setHeader('X-Auth-Token-Expires', String(expiresIn));
    sendText(res, 200, 'text/plain; charset=utf-8', '');
  };
}

/**
 * Swift V1 auth as tempauth and swauth speak it (`GET /auth/v1.0`), plus SwiftStack's per-user
 * token revocation (`DELETE /auth/v1.0/users/<name>/token`, superusers only).
 */
export function swiftV1Router(deps: Deps): Router {
  const router = Router();
  const login = v1Login(deps);

  for (const path of ['/v1.0', '/v1']) {
    router.get(path, (req, res) => login(req, res, req.ip));
    router.all(path, methodNotAllowed(['GET']));
  }

  router.delete('/v1.0/users/:name/token', async (req, res) => {
    tagTransaction(req, res);
    const caller = await validateOnce(
      deps.tokens,
      req,
      headerText(req, 'x-auth-token') ?? headerText(req, 'x-storage-token'),
    );
    if (!caller) return unauthorized(res);
    if (!caller.roles.includes(RESELLER_ADMIN_ROLE)) {
      return sendText(res, 403, 'text/plain; charset=utf-8', 'Only a superuser may revoke the tokens of a user.');
    }
    const name = String(req.params.name);
    // A name no user can have (NUL, control characters, '/') is looked up nowhere: Postgres refuses NUL.
    const user = isValidProjectName(name) ? await deps.users.find(name) : null;
    if (!user) return sendText(res, 404, 'text/plain; charset=utf-8', 'No such user.');
    await deps.tokens.revokeUser(user);
    res.status(204).end();
  });
  router.all('/v1.0/users/:name/token', methodNotAllowed(['DELETE']));
  return router;
}
