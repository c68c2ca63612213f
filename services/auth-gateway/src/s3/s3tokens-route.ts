import { Router } from 'express';
import type { Deps } from '../deps';
import { endpointsFor } from '../http/endpoints';
import { readJsonBody, sendTooLarge } from '../http/body-limit';
import { methodNotAllowed, sendKeystoneError } from '../http/errors';
import { sendJson } from '../http/respond';
import { s3TokenRecord, s3TokensBody } from '../keystone/s3-token-document';
import { keystoneUnauthorized } from '../routes/keystone-v3-validation';
import { randomText } from '../tokens/random';
import { serviceCaller } from './service-token';
import { RESTRICTED_SERVICE_MESSAGE } from '../app-credentials/restricted';

const BAD_REQUEST_SUFFIX =
  'The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.';

/**
 * `POST /v3/s3tokens` (Keystone's, as Swift's s3token middleware calls it with `auth_uri =
 * <gateway>/auth/v3`): checks an S3 request's signature and answers who made it, as a Keystone V3
 * token document. Nothing in the answer is a token: no X-Subject-Token, no token id, nothing put
 * in the token store.
 *
 * Every refusal of a well-formed body (unknown access key, wrong signature, disabled user,
 * deleted or expired credential, its application credential gone or expired, a secret that does
 * not open) is the same 401, as Keystone answers; which one it was shows only in
 * the metrics (`cairn_s3tokens_total`) and, for operators' problems, the log.
 */
export function s3TokensRouter(deps: Deps): Router {
  const router = Router();
  const unauthorized = keystoneUnauthorized(deps);
  const { s3 } = deps;

  router.post('/v3/s3tokens', async (req, res) => {
    // The caller's token first: a caller that may not ask gets its refusal before its body is read.
    if (s3.requireServiceToken) {
      const service = await serviceCaller(deps.tokens, req);
      if (!service.ok) {
        deps.metrics.s3tokens(service.status === 401 ? 'service_unauthorized' : 'service_forbidden');
        if (service.status === 401) return unauthorized(res);
        return sendKeystoneError(
          res,
          403,
          service.restricted
            ? RESTRICTED_SERVICE_MESSAGE
            : 'You are not authorized to perform the requested action: identity:s3tokens_validate.',
        );
      }
    }
    const read = await readJsonBody(req);
    if (!read.ok) {
      deps.metrics.s3tokens('malformed');
      if (read.tooLarge) return sendTooLarge(res);
      return sendKeystoneError(res, 400, `Malformed JSON body. ${BAD_REQUEST_SUFFIX}`);
    }
    const outcome = await s3.checker.check(read.body);
    if (!outcome.ok) {
      deps.metrics.s3tokens(outcome.result);
      if (outcome.result === 'malformed')
        return sendKeystoneError(res, 400, `${outcome.message} ${BAD_REQUEST_SUFFIX}`);
      return unauthorized(res);
    }
    deps.metrics.s3tokens('valid');
    const record = s3TokenRecord(
      outcome.user,
      {
        nowMs: Date.now(),
        lifetimeSeconds: deps.tokens.lifetime,
        auditId: randomText(16, 'base64url'),
        notAfterMs: outcome.notAfterMs,
      },
      outcome.applicationCredential,
    );
    sendJson(res, 200, s3TokensBody(record, endpointsFor(deps)));
  });
  router.all('/v3/s3tokens', methodNotAllowed(['POST']));
  return router;
}
