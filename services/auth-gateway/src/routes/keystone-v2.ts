import { Router, type Request, type Response } from 'express';
import Joi from 'joi';
import type { Deps } from '../deps';
import { loginFlow } from '../flows/login';
import { validationFlow } from '../flows/validate';
import { endpointsFor } from '../http/endpoints';
import { readJsonBody, sendTooLarge } from '../http/body-limit';
import { TOKEN_PARAM } from '../http/log-path';
import { methodNotAllowed, sendKeystoneError } from '../http/errors';
import { v2AccessBody } from '../keystone/documents';
import { asWsgiString } from '../keystone/wsgi-names';

const credentialsSchema = Joi.object({
  auth: Joi.object({
    passwordCredentials: Joi.object({ username: Joi.string().required(), password: Joi.string().required() })
      .required()
      .unknown(true),
    tenantName: Joi.string().allow(''),
    tenantId: Joi.string().allow(''),
  })
    .required()
    .unknown(true),
}).unknown(true);

interface V2Body {
  auth: { passwordCredentials: { username: string; password: string }; tenantName?: string; tenantId?: string };
}

/** V2.0 token validation: the token is in the path, so it is logged as `[token]` (http/log-path.ts). */
export const V2_VALIDATION_PATH = `/v2.0/tokens/:${TOKEN_PARAM}`;

/** V2.0 answers every refusal alike, as the seed API did: 401 and a plain "Invalid credentials". */
function invalid(res: Response): void {
  res.status(401).type('text/plain').send('Invalid credentials');
}

/**
 * Keystone V2.0 (`POST /auth/v2.0/tokens`), which older swiftclients and SDKs still use. The tenant
 * is the Swift account: AUTH_<tenant>; without one, the user's own account.
 */
export function keystoneV2Router(deps: Deps): Router {
  const router = Router();
  const login = loginFlow(deps, 'v2');
  const validation = validationFlow(deps, 'v2');

  const issue = async (req: Request, res: Response) => {
    const { error, value } = credentialsSchema.validate(req.body);
    if (error) {
      deps.metrics.refused('v2', 'malformed');
      return invalid(res);
    }
    const body = value as V2Body;
    const { username, password } = body.auth.passwordCredentials;
    const project = body.auth.tenantId || body.auth.tenantName || username;
    const outcome = await login({ username, password, project, clientAddress: req.ip, userDomain: 'default' });
    if (!outcome.ok) {
      if (outcome.refusal === 'invalid') return invalid(res);
      res.set('Retry-After', String(outcome.retryAfterSeconds));
      return sendKeystoneError(res, 429, outcome.message);
    }
    // V2.0's rendering: the access document.
    res.status(200).json(v2AccessBody(outcome.token.id, outcome.token.record, endpointsFor(deps)));
  };

  // A body that is not JSON is as invalid as wrong credentials.
  const parse = async (req: Request, res: Response, next: () => void) => {
    const read = await readJsonBody(req);
    if (read.ok) {
      req.body = read.body;
      return next();
    }
    deps.metrics.refused('v2', 'malformed');
    // Too large is not "invalid credentials": the client must learn that its body was cut off.
    if (read.tooLarge) return sendTooLarge(res);
    invalid(res);
  };

  // `/v3/tokens` too: a swift CLI with no version set and an OS_AUTH_URL ending in /v3 sends V2 there.
  for (const path of ['/v2.0/tokens', '/v2.0', '/v3/tokens']) {
    router.post(path, parse, issue);
    if (path !== '/v2.0') router.all(path, methodNotAllowed(['POST']));
  }

  router.get(V2_VALIDATION_PATH, async (req, res) => {
    const outcome = await validation({
      request: req,
      callerToken: req.get('x-auth-token'),
      subjectToken: String(req.params[TOKEN_PARAM]),
      scopedOnly: true,
    });
    switch (outcome.result) {
      case 'caller_unauthorized':
        return sendKeystoneError(res, 401, 'The request you have made requires authentication.');
      case 'not_found':
        return sendKeystoneError(res, 404, 'Could not find token.');
      case 'forbidden':
        return sendKeystoneError(
          res,
          403,
          'You are not authorized to perform the requested action: identity:validate_token.',
        );
      case 'valid':
        // Spelt for keystonemiddleware in a Python 3 Swift proxy: see wsgi-names.ts.
        return res.status(200).json(v2AccessBody(outcome.subjectId, outcome.subject, endpointsFor(deps), asWsgiString));
    }
  });
  return router;
}
