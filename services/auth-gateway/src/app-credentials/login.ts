import { applicationCredentialSecretMatches, isUsername } from '@cairn/domain';
import type { LoginCredential, LoginService } from '../credentials/logins';
import type { UserRecord } from '../credentials/users';
import { rolesFor } from '../tokens/roles';
import type { IssueRequest } from '../tokens/service';
import type { ApplicationCredential, ApplicationCredentialStore } from './store';

/** `methods: ["application_credential"]` as V3 names it: by id, or by name with its user. */
export interface ApplicationCredentialIdentity {
  id?: string;
  name?: string;
  /** The owner by id or name (equal in Cairn); needed with `name`, ignored with `id` (Keystone binds to the owner). */
  user?: string;
  secret: string;
}

export type ApplicationCredentialResult =
  | { ok: true; user: UserRecord; issue: NonNullable<IssueRequest['applicationCredential']> }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'limited'; retryAfterSeconds: number; message: string };

/** Not expired at `nowMs`. */
export const isCurrent = (c: Pick<ApplicationCredential, 'expiresAt'>, nowMs: number): boolean =>
  c.expiresAt === null || Date.parse(c.expiresAt) > nowMs;

/**
 * Stand-ins for a lookup that cannot match: an id that breaks the table's id format, a username
 * with a '/' (no user has one). Asked instead of what the request held, so a malformed identity
 * costs the same query as a well-formed one, and nothing Postgres would refuse (a NUL) reaches it.
 */
const NO_ID = 'x'.repeat(32);
const NO_USER = '/';
const ID_FORMAT = /^[0-9a-f]{32}$/;
// eslint-disable-next-line no-control-regex -- what Postgres cannot hold in text
const NUL = /\u0000/;

/**
 * The application credential as a LoginCredential, so that its logins go through the one login
 * limiter (LoginService) with passwords. Counted under what the request names: the credential's
 * id (`appcred:<id>`: no username holds a ':'), or, by name, its user's name, whose password
 * logins count there too. So the counters touched, and the one query, are the same whether the
 * credential or the user exists.
 */
function applicationCredentialLogin(
  store: ApplicationCredentialStore,
  identity: ApplicationCredentialIdentity,
  nowMs: number,
) {
  let found: { credential: ApplicationCredential; user: UserRecord } | null = null;
  const byId = identity.id !== undefined;
  const subject = byId ? `appcred:${identity.id!}` : identity.user!;
  const credential: LoginCredential = {
    subject,
    find: async () => {
      if (byId) {
        found = await store.findForLogin({ id: ID_FORMAT.test(identity.id!) ? identity.id! : NO_ID });
      } else {
        const usable = isUsername(identity.user) && !NUL.test(identity.name!) && identity.name!.length <= 255;
        found = await store.findForLogin(
          usable ? { username: identity.user!, name: identity.name! } : { username: NO_USER, name: '-' },
        );
      }
      return found?.user ?? null;
    },
    // A secret is hashed once (no KDF), so nothing is worth remembering: every attempt is tracked.
    remembers: () => false,
    check: async (user) => {
      // Compared in constant time also when nothing was found.
      const matches = applicationCredentialSecretMatches(identity.secret, found?.credential.secretHash ?? null);
      return (
        matches &&
        found !== null &&
        user !== null &&
        user.enabled &&
        user.id === found.credential.userId &&
        isCurrent(found.credential, nowMs)
      );
    },
  };
  return { credential, found: () => found };
}

/**
 * Checks an application credential login under the failed-login limits: the credential and its
 * user (one fresh read), its secret (constant time), its expiry, its user enabled. The token's
 * roles are the credential's, less any its user no longer holds on its own account (a superuser
 * made an ordinary user keeps no ResellerAdmin through a credential).
 */
export async function authenticateApplicationCredential(
  logins: Pick<LoginService, 'loginWith'>,
  store: ApplicationCredentialStore,
  identity: ApplicationCredentialIdentity,
  clientAddress: string | undefined,
  nowMs: number,
): Promise<ApplicationCredentialResult> {
  if (identity.id === undefined && (identity.name === undefined || identity.user === undefined))
    return { ok: false, reason: 'invalid' };
  const login = applicationCredentialLogin(store, identity, nowMs);
  const result = await logins.loginWith(login.credential, clientAddress);
  if (!result.ok) return result;
  const { credential } = login.found()!;
  const user = result.user;
  const held = rolesFor(user, user.username);
  return {
    ok: true,
    user,
    issue: {
      credential: {
        id: credential.id,
        name: credential.name,
        restricted: !credential.unrestricted,
        ...(credential.accessRules && credential.accessRules.length > 0 ? { accessRules: credential.accessRules } : {}),
      },
      roles: credential.roles.filter((r) => held.includes(r)),
      notAfterMs: credential.expiresAt === null ? null : Date.parse(credential.expiresAt),
    },
  };
}
