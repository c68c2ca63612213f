import type { IncomingMessage, ServerResponse } from 'node:http';
import { Router } from 'express';
import Joi from 'joi';
import type { Deps } from '../deps';
import { loginFlow } from '../flows/login';
import { endpointsFor } from '../http/endpoints';
import { readJsonBody, sendTooLarge } from '../http/body-limit';
import { methodNotAllowed, sendKeystoneError } from '../http/errors';
import { sendJson } from '../http/respond';
import { v3TokenBody } from '../keystone/documents';
import type { TokenRecord } from '../tokens/store';
import { keystoneUnauthorized, v3Validation } from './keystone-v3-validation';

// A domain is echoed into the token document and from there, through keystonemiddleware, into the
// proxy's request headers: a control character there would break the proxy's request, not the login.
// eslint-disable-next-line no-control-regex
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001f\u007f-\u009f]*$/;
const domainPart = Joi.string()
  .max(255)
  .pattern(NO_CONTROL_CHARACTERS)
  .messages({ 'string.pattern.base': '{{#label}} must not contain control characters' });
const domainRef = Joi.object({ id: domainPart, name: domainPart }).unknown(true);
/** A user or project by id or by name; `anyRef` may name neither. */
const anyRef = Joi.object({ id: Joi.string().max(1024), name: Joi.string().max(1024), domain: domainRef }).unknown(
  true,
);
const namedRef = anyRef.or('id', 'name');

const v3Schema = Joi.object({
  auth: Joi.object({
    identity: Joi.object({
      methods: Joi.array().items(Joi.string()).has(Joi.string().valid('password')).required(),
      password: Joi.object({ user: namedRef.keys({ password: Joi.string().required() }).required() })
        .required()
        .unknown(true),
    })
      .required()
      .unknown(true),
    // One object schema rather than alternatives: with alternatives, a project that fails its rules
    // would still match a looser alternative and pass unchecked.
    scope: Joi.alternatives().try(
      Joi.string().valid('unscoped'),
      Joi.object({ unscoped: Joi.object(), project: namedRef, domain: Joi.any(), system: Joi.any() }).unknown(true),
    ),
  })
    .required()
    .unknown(true),
}).unknown(true);

/** `methods: ["application_credential"]`: by id, or by name with the user by id or by name and domain. */
const appCredSchema = Joi.object({
  auth: Joi.object({
    identity: Joi.object({
      methods: Joi.array().items(Joi.string()).has(Joi.string().valid('application_credential')).required(),
      application_credential: Joi.object({
        id: Joi.string().max(64),
        name: Joi.string().max(255),
        secret: Joi.string().max(1024).required(),
        // With a name the user says whose credential it is; with an id Keystone ignores the user,
        // and rclone's swift library (ncw/swift) sends an empty `"user": {}` beside the id.
        user: Joi.when('name', { is: Joi.exist(), then: namedRef, otherwise: anyRef }),
      })
        .xor('id', 'name')
        .with('name', 'user')
        .required()
        .unknown(true),
    })
      .required()
      .unknown(true),
  })
    .required()
    .unknown(true),
}).unknown(true);

/** Whether a body asks for the application credential method (then its schema applies, else the password one). */
const asksApplicationCredential = (body: unknown): boolean => {
  const methods = (body as { auth?: { identity?: { methods?: unknown } } } | null)?.auth?.identity?.methods;
  return Array.isArray(methods) && methods.includes('application_credential');
};

interface Named {
  id?: string;
  name?: string;
  domain?: { id?: string; name?: string };
}

const BAD_REQUEST_SUFFIX =
  'The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.';

/** Every object answers with equal id and name: the id given, else the name given, else the default. */
const pick = (ref: Named | undefined, fallback: string): string => ref?.id ?? ref?.name ?? fallback;

export interface V3Issue {
  /**
   * The JSON body (http/body-limit.ts: strict, at most 64 KB); null when it was refused
   * and the refusal already answered (400, or 413 past the limit).
   */
  readBody(req: IncomingMessage, res: ServerResponse): Promise<{ body: unknown } | null>;
  /** `POST /v3/auth/tokens` once its body is parsed; `clientAddress` is whom the per-address failure limit counts. */
  answer(res: ServerResponse, parsedBody: unknown, clientAddress: string | undefined): Promise<void>;
}

/** Password authentication (`POST /v3/auth/tokens`). */
export function v3Issue(deps: Deps): V3Issue {
  const unauthorized = keystoneUnauthorized(deps);
  const login = loginFlow(deps, 'v3');
  return {
    readBody: async (req, res) => {
      const read = await readJsonBody(req);
      if (read.ok) return { body: read.body };
      deps.metrics.refused('v3', 'malformed');
      if (read.tooLarge) sendTooLarge(res);
      else sendKeystoneError(res, 400, `Malformed JSON body. ${BAD_REQUEST_SUFFIX}`);
      return null;
    },
    answer: async (res, parsedBody, clientAddress) => {
      if (asksApplicationCredential(parsedBody)) return answerApplicationCredential(res, parsedBody, clientAddress);
      const { error, value } = v3Schema.validate(parsedBody);
      if (error) {
        deps.metrics.refused('v3', 'malformed');
        return sendKeystoneError(res, 400, `${error.message.replace(/"/g, "'")}. ${BAD_REQUEST_SUFFIX}`);
      }
      const auth = value.auth as { identity: { password: { user: Named & { password: string } } }; scope?: unknown };
      const user = auth.identity.password.user;
      const username = pick(user, '');
      const scope = auth.scope;
      let project: Named | undefined;
      if (scope === undefined) project = undefined;
      else if (scope === 'unscoped' || (typeof scope === 'object' && scope !== null && 'unscoped' in scope))
        project = undefined;
      else if (typeof scope === 'object' && scope !== null && 'project' in scope)
        project = (scope as { project: Named }).project;
      else {
        deps.metrics.refused('v3', 'scope_refused');
        return unauthorized(res); // domain and system scopes: Cairn users hold no roles there
      }

      // No scope at all means the user's default project, its own account (Keystone's default_project_id).
      const explicitUnscoped = scope !== undefined && project === undefined;
      const outcome = await login({
        username,
        password: user.password,
        project: explicitUnscoped ? undefined : pick(project, username),
        clientAddress,
        userDomain: pick(user.domain, 'default'),
        projectDomain: pick(project?.domain, 'default'),
      });
      if (!outcome.ok) {
        if (outcome.refusal === 'invalid') return unauthorized(res);
        res.setHeader('Retry-After', String(outcome.retryAfterSeconds));
        return sendKeystoneError(res, 429, outcome.message);
      }
      render(res, outcome);
    },
  };

  /** The application credential method: the same flow, its own body; any scope asked for is its user's own project. */
  async function answerApplicationCredential(
    res: ServerResponse,
    parsedBody: unknown,
    clientAddress: string | undefined,
  ): Promise<void> {
    const { error, value } = appCredSchema.validate(parsedBody);
    if (error) {
      deps.metrics.refused('v3', 'malformed');
      return sendKeystoneError(res, 400, `${error.message.replace(/"/g, "'")}. ${BAD_REQUEST_SUFFIX}`);
    }
    const given = (
      value.auth as {
        identity: { application_credential: { id?: string; name?: string; secret: string; user?: Named } };
      }
    ).identity.application_credential;
    const outcome = await login({
      method: 'application_credential',
      identity: {
        ...(given.id !== undefined ? { id: given.id } : {}),
        ...(given.name !== undefined ? { name: given.name, user: pick(given.user, '') } : {}),
        secret: given.secret,
      },
      clientAddress,
      userDomain: pick(given.user?.domain, 'default'),
    });
    if (!outcome.ok) {
      if (outcome.refusal === 'invalid') return unauthorized(res);
      res.setHeader('Retry-After', String(outcome.retryAfterSeconds));
      return sendKeystoneError(res, 429, outcome.message);
    }
    render(res, outcome);
  }

  /** V3's rendering: the token in X-Subject-Token, the token document as the body. */
  function render(res: ServerResponse, outcome: { token: { id: string; record: TokenRecord } }): void {
    res.setHeader('X-Subject-Token', outcome.token.id);
    sendJson(res, 201, v3TokenBody(outcome.token.record, endpointsFor(deps), true));
  }
}

/**
 * Keystone V3: password authentication (`POST /auth/v3/auth/tokens`) and the validation and
 * revocation calls a Swift proxy's keystonemiddleware makes.
 */
export function keystoneV3Router(deps: Deps): Router {
  const router = Router();
  const issue = v3Issue(deps);

  router.post('/v3/auth/tokens', async (req, res) => {
    const read = await issue.readBody(req, res);
    if (read) await issue.answer(res, read.body, req.ip);
  });

  const validation = v3Validation(deps);
  // `?nocatalog`, `allow_expired` and the OpenStack-Identity-Access-Rules header are accepted; an
  // expired token is gone from the store, so allow_expired cannot bring it back.
  router.get('/v3/auth/tokens', (req, res) => validation.answer(req, res, !('nocatalog' in req.query)));

  router.delete('/v3/auth/tokens', async (req, res) => {
    const found = await validation.subjectOf(req, res);
    if (!found) return;
    await deps.tokens.revoke(found.subjectId);
    res.status(204).end();
  });
  router.all('/v3/auth/tokens', methodNotAllowed(['GET', 'HEAD', 'POST', 'DELETE']));
  return router;
}
