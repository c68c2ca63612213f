import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Deps } from '../deps';
import { header, endpointsFor } from '../http/endpoints';
import { sendKeystoneError } from '../http/errors';
import { validationFlow } from '../flows/validate';
import { sendJson } from '../http/respond';
import { v3TokenBody } from '../keystone/documents';
import { asWsgiString } from '../keystone/wsgi-names';
import type { TokenRecord } from '../tokens/store';

/** Keystone's 401: where to authenticate is named (the current public URL), as keystoneauth expects. */
export function keystoneUnauthorized(deps: Deps): (res: ServerResponse) => void {
  return (res) => {
    res.setHeader('WWW-Authenticate', `Keystone uri="${endpointsFor(deps).authUrl}/v3"`);
    sendKeystoneError(res, 401, 'The request you have made requires authentication.');
  };
}

export interface V3Validation {
  /** The caller's token must be valid (else 401); the subject's decides 200 or 404. Null: answered already. */
  subjectOf(req: IncomingMessage, res: ServerResponse): Promise<{ subjectId: string; subject: TokenRecord } | null>;
  /** `GET|HEAD /v3/auth/tokens`, what a Swift proxy's keystonemiddleware asks for every new token. */
  answer(req: IncomingMessage, res: ServerResponse, withCatalog: boolean): Promise<void>;
}

/** Token validation (`GET|HEAD /v3/auth/tokens`) and the checks revocation shares. */
export function v3Validation(deps: Deps): V3Validation {
  const unauthorized = keystoneUnauthorized(deps);
  const validation = validationFlow(deps, 'v3');
  const subjectOf: V3Validation['subjectOf'] = async (req, res) => {
    // Validation outcomes are counted; revocation (DELETE) shares the checks but is no validation.
    const outcome = await validation({
      request: req,
      callerToken: header(req, 'x-auth-token'),
      subjectToken: header(req, 'x-subject-token'),
      count: req.method !== 'DELETE',
      // Revoking a token needs no enforcement of its rules; validating it does.
      accessRulesSupported: req.method === 'DELETE' || header(req, 'openstack-identity-access-rules') !== undefined,
    });
    switch (outcome.result) {
      case 'caller_unauthorized':
        unauthorized(res);
        return null;
      case 'not_found':
        sendKeystoneError(res, 404, 'Failed to validate token');
        return null;
      case 'forbidden':
        sendKeystoneError(res, 403, 'You are not authorized to perform the requested action: identity:validate_token.');
        return null;
      case 'valid':
        return { subjectId: outcome.subjectId, subject: outcome.subject };
    }
  };
  return {
    subjectOf,
    answer: async (req, res, withCatalog) => {
      const found = await subjectOf(req, res);
      if (!found) return;
      res.setHeader('X-Subject-Token', found.subjectId);
      // A token with access rules keeps its catalog even under ?nocatalog (include_service_catalog =
      // False, Swift's sample proxy config): keystonemiddleware reads the catalog to check the rules,
      // and without it would answer every request of that token 500.
      const catalog = withCatalog || found.subject.applicationCredential?.accessRules !== undefined;
      // Spelt for keystonemiddleware in a Python 3 Swift proxy: see wsgi-names.ts.
      sendJson(res, 200, v3TokenBody(found.subject, endpointsFor(deps), catalog, asWsgiString));
    },
  };
}
