import { applicationCredentialSecretMatches } from '@cairn/domain';
import type { UserDirectory, UserRecord } from '../credentials/users';
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

export type ApplicationCredentialResult = { ok: true; user: UserRecord; issue: NonNullable<IssueRequest['applicationCredential']> } | { ok: false };

/** Not expired at `nowMs`. */
export const isCurrent = (c: Pick<ApplicationCredential, 'expiresAt'>, nowMs: number): boolean => c.expiresAt === null || Date.parse(c.expiresAt) > nowMs;

/**
 * Checks an application credential login: the credential (read afresh), its secret (compared in
 * constant time, also when no credential was found), its expiry, and its user (enabled, the same
 * row). The token's roles are the credential's, less any its user no longer holds on its own
 * account (a superuser made an ordinary user keeps no ResellerAdmin through a credential).
 *
 * Not under the password limits: a generated secret is 512 random bits and a chosen one at least
 * 32 characters, so guessing is hopeless, and no KDF runs that a flood could exhaust.
 */
export async function authenticateApplicationCredential(
  store: ApplicationCredentialStore,
  users: UserDirectory,
  identity: ApplicationCredentialIdentity,
  nowMs: number,
): Promise<ApplicationCredentialResult> {
  let credential: ApplicationCredential | null = null;
  let user: UserRecord | null = null;
  if (identity.id !== undefined) {
    credential = await store.findById(identity.id);
    user = credential ? await users.findForLogin(credential.username) : null;
  } else if (identity.name !== undefined && identity.user !== undefined) {
    user = await users.findForLogin(identity.user);
    credential = user ? await store.findByName(user.id, identity.name) : null;
  }
  const secretMatches = applicationCredentialSecretMatches(identity.secret, credential?.secretHash ?? null);
  if (!secretMatches || !credential || !user || !user.enabled || user.id !== credential.userId || !isCurrent(credential, nowMs)) return { ok: false };
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
