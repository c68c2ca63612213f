import type { ServerResponse } from 'node:http';
import { Router, type Request } from 'express';
import Joi from 'joi';
import { isS3AccessKey, openS3Secret, S3SecretError } from '@cairn/domain';
import { requestIdOf } from '@cairn/runtime';
import type { Deps } from '../deps';
import type { UserRecord } from '../credentials/users';
import { endpointsFor, header } from '../http/endpoints';
import { readJsonBody, sendTooLarge } from '../http/body-limit';
import { methodNotAllowed, sendKeystoneError } from '../http/errors';
import { sendJson } from '../http/respond';
import { asWsgiString } from '../keystone/wsgi-names';
import { keystoneUnauthorized } from '../routes/keystone-v3-validation';
import { RESELLER_ADMIN_ROLE } from '../tokens/roles';
import type { TokenRecord } from '../tokens/store';
import { MAX_S3_CREDENTIALS_PER_USER } from '@cairn/contract';
import { credentialManagementRefusal, readsAsService, RESTRICTED_SERVICE_MESSAGE } from '../app-credentials/restricted';
import { validateOnce } from '../tokens/per-request';
import {
  S3CredentialStore,
  S3CredentialUserGone,
  TooManyS3Credentials,
  type StoredS3Credential,
} from './s3-credential-writes';

const BAD_REQUEST_SUFFIX =
  'The server could not comply with the request since it is either malformed or otherwise incorrect. The client is assumed to be in error.';

/**
 * `openstack ec2 credentials create` sends the token's project as tenant_id. `expires_at` is Cairn's
 * own (Keystone's EC2 credentials never end): when the key stops working, as an operator's
 * `expires_at` on the management API; the console's "My keys" sends it. Nothing else is read.
 */
const EXPIRY_RULE = "'expires_at' must be an ISO 8601 date-time in the future, or null for a key that never ends";
const createSchema = Joi.object({
  tenant_id: Joi.string().max(1024).allow(null),
  expires_at: Joi.date().iso().greater('now').allow(null).messages({
    'date.base': EXPIRY_RULE,
    'date.format': EXPIRY_RULE,
    'date.greater': EXPIRY_RULE,
  }),
}).unknown(true);

const COLLECTION = '/v3/users/:userId/credentials/OS-EC2';
const MEMBER = '/v3/users/:userId/credentials/OS-EC2/:accessKey';

/** Postgres's insufficient_privilege: the gateway's role was granted the reads only (docs/deployment.md). */
export const isWriteRefused = (e: unknown): boolean => (e as { code?: unknown } | null)?.code === '42501';
const sendWriteRefused = (res: ServerResponse) =>
  sendKeystoneError(
    res,
    403,
    'This gateway may not write S3 credentials (its database role has no INSERT/DELETE on them): manage them through the management API.',
  );

type Access = { caller: TokenRecord; user: UserRecord; own: boolean; service: boolean };

/**
 * No user name, nor its spelling for a Python 3 proxy (wsgi-names.ts), holds a C0 control
 * character or DEL; Postgres refuses a NUL outright. Such a path names nobody and is answered
 * without a query.
 */
// eslint-disable-next-line no-control-regex -- these are the characters it looks for
const CONTROL = /[\u0000-\u001f\u007f]/;
const notFoundUser = (res: ServerResponse, named: string) =>
  sendKeystoneError(res, 404, `Could not find user: ${named}.`);
const notFoundKey = (res: ServerResponse) => sendKeystoneError(res, 404, 'EC2 access key not found.');

/**
 * Keystone's OS-EC2 credential API, what `openstack ec2 credentials create|list|show|delete`
 * and Swift's s3token secret cache call. `<userId>` is the user id the gateway's V3 tokens carry
 * (the username). A token may manage its own user's credentials; a superuser's token (the Swift
 * proxy's service user) may also read anyone's, as s3token's cache does; nobody writes another
 * user's. Another user's path answers 403 as Keystone's policy does; an access key that is not
 * this user's is 404 whoever holds it.
 *
 * A restricted application credential's token may read its own user's credentials but not create
 * or delete them (as for application credentials), nor, a superuser's, read anyone else's.
 *
 * Secrets are shown once, in the answer that creates them. Reads give the secret only to a
 * superuser's token not from a restricted credential (readsAsService), which s3token's secret
 * cache needs; Keystone gives it to the owner too, but an
 * owner's token is the one every Swift request carries, and it must not turn into the S3 secret.
 */
export function osEc2Router(deps: Deps): Router {
  const router = Router();
  const unauthorized = keystoneUnauthorized(deps);
  const store = new S3CredentialStore(deps.primaryDb, deps.cluster.id);

  /** The caller's token and the user whose credentials the path names; null once answered. */
  async function access(req: Request, res: ServerResponse, write: boolean): Promise<Access | null> {
    const caller = await validateOnce(deps.tokens, req, header(req, 'x-auth-token'));
    if (!caller) {
      unauthorized(res);
      return null;
    }
    const named = String(req.params.userId);
    // The id a validation answer spelt for a Python 3 proxy (wsgi-names.ts) names the same user.
    const own = named === caller.user || named === asWsgiString(caller.user);
    if (!own && (write || !caller.roles.includes(RESELLER_ADMIN_ROLE))) {
      const action = req.method === 'POST' ? 'create' : req.method === 'DELETE' ? 'delete' : 'get';
      sendKeystoneError(
        res,
        403,
        `You are not authorized to perform the requested action: identity:ec2_${action}_credential.`,
      );
      return null;
    }
    // Another user's credentials are a service's read (s3token's cache): not with a restricted credential's token.
    if (!own && !readsAsService(caller)) {
      sendKeystoneError(res, 403, RESTRICTED_SERVICE_MESSAGE);
      return null;
    }
    if (!own && CONTROL.test(named)) {
      notFoundUser(res, JSON.stringify(named).slice(1, -1));
      return null;
    }
    const user = own ? await deps.users.findRecent(caller.user) : await findNamed(named);
    if (!user || (own && user.id !== caller.userId)) {
      notFoundUser(res, named);
      return null;
    }
    return { caller, user, own, service: readsAsService(caller) };
  }

  /**
   * Another user, by the id a token carries: as stored, or as a validation answer spelt it for a Python 3 proxy
   * (s3token's cache asks with that).
   */
  async function findNamed(named: string): Promise<UserRecord | null> {
    const user = await deps.users.findRecent(named);
    // Only a name of latin-1 characters, some not ASCII, can be such a spelling.
    const codes = [...named].map((c) => c.codePointAt(0)!);
    if (user || !codes.some((c) => c > 0x7f) || codes.some((c) => c > 0xff)) return user;
    const decoded = Buffer.from(named, 'latin1').toString('utf8');
    return decoded.includes('\ufffd') ? null : deps.users.findRecent(decoded);
  }

  /** Counts one change by the user against CAIRN_EC2_CHANGE_LIMIT; false once answered 429. */
  async function allowedChange(res: ServerResponse, found: Access): Promise<boolean> {
    const verdict = await deps.s3.changes.take(found.user.id);
    if (verdict.ok) return true;
    res.setHeader('Retry-After', String(verdict.retryAfterSeconds));
    sendKeystoneError(res, 429, verdict.message);
    return false;
  }

  const rendered = (user: UserRecord, c: StoredS3Credential, secret: string | null) => ({
    user_id: user.username,
    tenant_id: user.username,
    access: c.accessKey,
    secret,
    trust_id: null,
    // Cairn's own, as on create: null for a key that never ends.
    expires_at: c.expiresAt,
    links: {
      self: `${endpointsFor(deps).authUrl}/v3/users/${encodeURIComponent(user.username)}/credentials/OS-EC2/${c.accessKey}`,
    },
  });

  /**
   * The secret for a service caller, or null: for anyone else, or (logged) when it does not open with the keys
   * configured here.
   */
  const opened = (found: Access, c: StoredS3Credential): string | null => {
    if (!found.service || !deps.s3.keyring) return null;
    try {
      return openS3Secret(deps.s3.keyring, c.accessKey, c.sealedSecret);
    } catch (e) {
      if (!(e instanceof S3SecretError)) throw e;
      deps.log.error({ accessKey: c.accessKey, code: e.code }, e.message);
      return null;
    }
  };

  router.get(COLLECTION, async (req, res) => {
    const found = await access(req, res, false);
    if (!found) return;
    const list = await store.list(found.user.id);
    const self = `${endpointsFor(deps).authUrl}/v3/users/${encodeURIComponent(found.user.username)}/credentials/OS-EC2`;
    sendJson(res, 200, {
      credentials: list.map((c) => rendered(found.user, c, opened(found, c))),
      links: { self, previous: null, next: null },
    });
  });

  router.post(COLLECTION, async (req, res) => {
    // Who may write here first: a refused caller's body is never read.
    const found = await access(req, res, true);
    if (!found) return;
    // As Keystone, no EC2 secret for a restricted credential's token (nor one with access rules: the
    // S3 path cannot enforce them). An unrestricted credential's key is bound to it (below).
    const refusal = credentialManagementRefusal(found.caller);
    if (refusal) return sendKeystoneError(res, 403, refusal);
    const read = await readJsonBody(req);
    if (!read.ok) {
      if (read.tooLarge) return sendTooLarge(res);
      return sendKeystoneError(res, 400, `Malformed JSON body. ${BAD_REQUEST_SUFFIX}`);
    }
    const { error, value } = createSchema.validate(read.body ?? {});
    if (error) return sendKeystoneError(res, 400, `${error.message.replace(/"/g, "'")}. ${BAD_REQUEST_SUFFIX}`);
    const { tenant_id: tenant, expires_at: expiresAt } = value as {
      tenant_id?: string | null;
      expires_at?: Date | null;
    };
    if (
      tenant !== undefined &&
      tenant !== null &&
      tenant !== found.user.username &&
      tenant !== asWsgiString(found.user.username)
    ) {
      return sendKeystoneError(
        res,
        403,
        `An S3 credential is always for its user's own project ('${found.user.username}'), not '${tenant}'.`,
      );
    }
    if (!deps.s3.keyring) {
      return sendKeystoneError(
        res,
        503,
        'S3 credentials cannot be created here: the gateway has no CAIRN_S3_SECRET_KEYS to seal their secrets with.',
      );
    }
    if (!(await allowedChange(res, found))) return;
    try {
      // Made with an application credential's token: bound to it, as Keystone keeps app_cred_id in the blob.
      const boundTo = found.caller.applicationCredential?.id ?? null;
      const created = await store.create(
        deps.s3.keyring,
        { user: found.user, requestId: requestIdOf(req) ?? null },
        boundTo,
        expiresAt ?? null,
      );
      res.setHeader('Location', rendered(found.user, created, null).links.self);
      sendJson(res, 201, { credential: rendered(found.user, created, created.secret) });
    } catch (e) {
      if (isWriteRefused(e)) return sendWriteRefused(res);
      if (e instanceof S3CredentialUserGone) return notFoundUser(res, found.user.username);
      if (!(e instanceof TooManyS3Credentials)) throw e;
      sendKeystoneError(
        res,
        409,
        `User '${found.user.username}' already holds ${MAX_S3_CREDENTIALS_PER_USER} S3 credentials, the most one user may have; delete one first.`,
      );
    }
  });
  router.all(COLLECTION, methodNotAllowed(['GET', 'HEAD', 'POST']));

  router.get(MEMBER, async (req, res) => {
    const found = await access(req, res, false);
    if (!found) return;
    // Only a key of Cairn's own shape can exist, so nothing else reaches the query.
    const accessKey = String(req.params.accessKey);
    const c = isS3AccessKey(accessKey) ? await store.get(found.user.id, accessKey) : null;
    if (!c) return notFoundKey(res);
    sendJson(res, 200, { credential: rendered(found.user, c, opened(found, c)) });
  });
  router.delete(MEMBER, async (req, res) => {
    const found = await access(req, res, true);
    if (!found) return;
    // The same rule as for application credentials: a restricted credential's token removes none.
    const refusal = credentialManagementRefusal(found.caller);
    if (refusal) return sendKeystoneError(res, 403, refusal);
    const accessKey = String(req.params.accessKey);
    if (!isS3AccessKey(accessKey)) return notFoundKey(res);
    if (!(await allowedChange(res, found))) return;
    let gone: boolean;
    try {
      gone = await store.delete({ user: found.user, requestId: requestIdOf(req) ?? null }, accessKey);
    } catch (e) {
      if (isWriteRefused(e)) return sendWriteRefused(res);
      throw e;
    }
    if (!gone) return notFoundKey(res);
    // Reading a standby, this gateway would otherwise see the key until it is replayed there.
    deps.s3.credentials.deletedOnPrimary(accessKey);
    res.status(204).end();
  });
  router.all(MEMBER, methodNotAllowed(['GET', 'HEAD', 'DELETE']));
  return router;
}
