import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Router, type Request } from 'express';
import {
  applicationCredentialCreateSchema,
  generateApplicationCredentialSecret,
  hashApplicationCredentialSecret,
  type AccessRule,
} from '@cairn/domain';
import { requestIdOf } from '@cairn/runtime';
import type { Deps } from '../deps';
import type { UserRecord } from '../credentials/users';
import { endpointsFor, header } from '../http/endpoints';
import { readJsonBody, sendTooLarge } from '../http/body-limit';
import { methodNotAllowed, sendKeystoneError } from '../http/errors';
import { sendJson } from '../http/respond';
import { keystoneTime } from '../keystone/documents';
import { asWsgiString } from '../keystone/wsgi-names';
import { keystoneUnauthorized } from '../routes/keystone-v3-validation';
import { isWriteRefused } from '../s3/os-ec2-route';
import { credentialManagementRefusal } from './restricted';
import type { TokenRecord } from '../tokens/store';
import { validateOnce } from '../tokens/per-request';
import {
  ApplicationCredentialUserGone,
  DuplicateApplicationCredential,
  MAX_APPLICATION_CREDENTIALS_PER_USER,
  TooManyApplicationCredentials,
  type ApplicationCredential,
} from './store';

const BAD_REQUEST_SUFFIX =
  'The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.';

const COLLECTION = '/v3/users/:userId/application_credentials';
const MEMBER = '/v3/users/:userId/application_credentials/:credentialId';

type Access = { caller: TokenRecord; user: UserRecord };

/**
 * Keystone's application credential API (`openstack application credential create|list|show|
 * delete`, gophercloud), for the caller's own user only: Keystone's policy lets a user manage its
 * own, and another user's path answers 403. A credential's roles are a subset of the caller's
 * token's (swiftoperator on its own account, ResellerAdmin for a superuser); its secret is shown
 * once, in the answer that creates it, and stored as a hash. A token from a restricted credential
 * can list and show but not create or delete.
 */
export function applicationCredentialsRouter(deps: Deps): Router {
  const router = Router();
  const unauthorized = keystoneUnauthorized(deps);
  const store = deps.appCredentials;

  async function access(
    req: Request,
    res: ServerResponse,
    action: 'create' | 'list' | 'get' | 'delete',
  ): Promise<Access | null> {
    const caller = await validateOnce(deps.tokens, req, header(req, 'x-auth-token'));
    if (!caller) {
      unauthorized(res);
      return null;
    }
    const named = String(req.params.userId);
    if (named !== caller.user && named !== asWsgiString(caller.user)) {
      sendKeystoneError(
        res,
        403,
        `You are not authorized to perform the requested action: identity:${action}_application_credential.`,
      );
      return null;
    }
    const refusal = action === 'create' || action === 'delete' ? credentialManagementRefusal(caller) : null;
    if (refusal) {
      sendKeystoneError(res, 403, refusal);
      return null;
    }
    const user = await deps.users.findRecent(caller.user);
    if (!user || user.id !== caller.userId) {
      sendKeystoneError(res, 404, `Could not find user: ${named}.`);
      return null;
    }
    return { caller, user };
  }

  const selfUrl = (user: UserRecord, id?: string) =>
    `${endpointsFor(deps).authUrl}/v3/users/${encodeURIComponent(user.username)}/application_credentials${id === undefined ? '' : `/${id}`}`;

  /** Keystone's shape; `secret` only in the answer that created it. */
  const rendered = (user: UserRecord, c: ApplicationCredential, secret?: string) => ({
    id: c.id,
    name: c.name,
    description: c.description,
    user_id: user.username,
    project_id: user.username,
    roles: c.roles.map((r) => ({ id: r, name: r, domain_id: null })),
    expires_at: c.expiresAt === null ? null : keystoneTime(c.expiresAt),
    unrestricted: c.unrestricted,
    access_rules: c.accessRules ?? [],
    ...(secret !== undefined ? { secret } : {}),
    links: { self: selfUrl(user, c.id) },
  });
  const notFound = (res: ServerResponse, id: string) =>
    sendKeystoneError(res, 404, `Could not find Application Credential: ${id}.`);
  const invalid = (res: ServerResponse, detail: string) =>
    sendKeystoneError(res, 400, `Invalid application credential: ${detail}`);

  router.get(COLLECTION, async (req, res) => {
    const found = await access(req, res, 'list');
    if (!found) return;
    const name = typeof req.query.name === 'string' ? req.query.name : undefined;
    const list = await store.list(found.user.id, name);
    sendJson(res, 200, {
      application_credentials: list.map((c) => rendered(found.user, c)),
      links: { self: selfUrl(found.user), previous: null, next: null },
    });
  });

  router.post(COLLECTION, async (req, res) => {
    // Who may write here first: a refused caller's body is never read.
    const found = await access(req, res, 'create');
    if (!found) return;
    const read = await readJsonBody(req);
    if (!read.ok) {
      if (read.tooLarge) return sendTooLarge(res);
      return sendKeystoneError(res, 400, `Malformed JSON body. ${BAD_REQUEST_SUFFIX}`);
    }
    const { error, value } = applicationCredentialCreateSchema.validate(read.body ?? {});
    if (error)
      return sendKeystoneError(
        res,
        400,
        `Invalid input for field '${error.details[0]?.path.join('.') ?? 'application_credential'}': ${error.message.replace(/"/g, "'")}. ${BAD_REQUEST_SUFFIX}`,
      );
    const input = (value as { application_credential: CreateInput }).application_credential;
    const { caller, user } = found;
    // The token's roles are what the credential can carry: a token for another account holds none.
    if (caller.project !== caller.user)
      return invalid(res, "an application credential is made with a token for the user's own project.");
    const asked = input.roles?.map((r) => r.name ?? r.id!) ?? caller.roles;
    const unassigned = asked.filter((r) => !caller.roles.includes(r));
    if (unassigned.length > 0)
      return invalid(res, `Cannot create an application credential with unassigned role (${unassigned.join(', ')}).`);
    if (input.expires_at && input.expires_at.getTime() <= Date.now()) {
      return sendKeystoneError(res, 400, `The 'expires_at' must not be before now. ${BAD_REQUEST_SUFFIX}`);
    }
    const secret = input.secret ?? generateApplicationCredentialSecret();
    try {
      const created = await store.create(
        { user, requestId: requestIdOf(req) ?? null },
        {
          name: input.name,
          description: input.description ?? null,
          secretHash: hashApplicationCredentialSecret(secret),
          expiresAt: input.expires_at ? input.expires_at.toISOString() : null,
          roles: [...new Set(asked)],
          unrestricted: input.unrestricted ?? false,
          accessRules: input.access_rules?.length
            ? input.access_rules.map((r) => ({
                id: randomRuleId(),
                service: r.service,
                method: r.method,
                path: r.path,
              }))
            : null,
        },
      );
      res.setHeader('Location', selfUrl(user, created.id));
      sendJson(res, 201, { application_credential: rendered(user, created, secret) });
    } catch (e) {
      if (e instanceof DuplicateApplicationCredential) {
        return sendKeystoneError(
          res,
          409,
          `Conflict occurred attempting to store application_credential - Duplicate entry found with name ${input.name}.`,
        );
      }
      if (e instanceof TooManyApplicationCredentials) {
        return sendKeystoneError(
          res,
          403,
          `Unable to create additional application credentials, maximum of ${MAX_APPLICATION_CREDENTIALS_PER_USER} already exceeded for user.`,
        );
      }
      if (e instanceof ApplicationCredentialUserGone)
        return sendKeystoneError(res, 404, `Could not find user: ${user.username}.`);
      if (isWriteRefused(e))
        return sendKeystoneError(
          res,
          403,
          'This gateway may not write application credentials (its database role has no INSERT/DELETE on them).',
        );
      throw e;
    }
  });
  router.all(COLLECTION, methodNotAllowed(['GET', 'HEAD', 'POST']));

  router.get(MEMBER, async (req, res) => {
    const found = await access(req, res, 'get');
    if (!found) return;
    const id = String(req.params.credentialId);
    const c = await store.findById(id);
    if (!c || c.userId !== found.user.id) return notFound(res, id);
    sendJson(res, 200, { application_credential: rendered(found.user, c) });
  });
  router.delete(MEMBER, async (req, res) => {
    const found = await access(req, res, 'delete');
    if (!found) return;
    const id = String(req.params.credentialId);
    let outcome: { deleted: boolean; boundAccessKeys: string[] };
    try {
      outcome = await store.delete({ user: found.user, requestId: requestIdOf(req) ?? null }, id);
    } catch (e) {
      if (isWriteRefused(e))
        return sendKeystoneError(
          res,
          403,
          'This gateway may not write application credentials (its database role has no INSERT/DELETE on them).',
        );
      throw e;
    }
    if (!outcome.deleted) return notFound(res, id);
    // The S3 keys made with its tokens went with it; reading a standby, this gateway would otherwise see them until
    // replayed there.
    for (const accessKey of outcome.boundAccessKeys) deps.s3.credentials.deletedOnPrimary(accessKey);
    res.status(204).end();
  });
  router.all(MEMBER, methodNotAllowed(['GET', 'HEAD', 'DELETE']));
  return router;
}

interface CreateInput {
  name: string;
  description?: string | null;
  secret?: string | null;
  expires_at?: Date | null;
  roles?: Array<{ id?: string; name?: string }>;
  unrestricted?: boolean;
  access_rules?: Array<Omit<AccessRule, 'id'>>;
}

const randomRuleId = (): string => randomUUID().replace(/-/g, '');
