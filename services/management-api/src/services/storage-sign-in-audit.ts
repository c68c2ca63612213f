import { STORAGE_USER_ACTOR_PREFIX } from '@cairn/contract';
import type { Cluster, StorageUser } from '@cairn/domain';
import type { Db } from '../db/database';
import { recordAudit, type AuditActor, type AuditTarget } from '../repositories/audit';
import { applicationCredentialUri, clusterUri, userUri } from '../resources/uris';

/**
 * Storage users' console sign-ins, sign-outs and failed sign-ins in the audit trail, as storage
 * users' own entries (`storage user <name>`, no operator id: kept for
 * CAIRN_AUDIT_STORAGE_USER_RETENTION_DAYS, as their OS-EC2 changes are).
 *
 * Never in a record: the password or credential secret, the session id or its hash, the gateway
 * token. Nor a user name nobody has: a failed sign-in names its user only when that user exists
 * (someone who typed a password into the name field must not find it in the trail), else the
 * cluster. Refusals past the gateway's failed-login limits (429) are not recorded, so a flood does
 * not grow the trail (the gateway's metrics count them); nor are sign-ins naming no cluster, which
 * reach no gateway and no account.
 */

/** Where a sign-in came from, for its record. */
export interface SignInOrigin {
  clientAddress: string | undefined;
  requestId: string | null;
}

/** How a sign-in was made: a password, or which application credential (its id is no secret). */
export type SignInMethod = { method: 'password' } | { method: 'application_credential'; id: string | null };

/** Why a sign-in was refused, in the record (the person refused is told one sentence for all). */
export type SignInFailure = 'wrong_credentials' | 'user_disabled_or_changed' | 'access_rules';

const UNKNOWN_USER = '(no such user)';

const actorOf = (username: string, origin: SignInOrigin): AuditActor => ({
  operatorId: null,
  operatorName: `${STORAGE_USER_ACTOR_PREFIX}${username}`.slice(0, 64),
  requestId: origin.requestId,
});

const userTarget = (user: Pick<StorageUser, 'id' | 'username'>): AuditTarget => ({
  type: 'users',
  id: user.id,
  name: user.username,
  uri: userUri(user.id),
});

const methodSnapshot = (how: SignInMethod) =>
  how.method === 'password'
    ? { method: 'password' }
    : {
        method: 'application_credential',
        application_credential_uri: how.id === null ? null : applicationCredentialUri(how.id),
      };

/** A session opened: in the transaction that inserts it. */
export async function auditSignIn(
  trx: Db,
  user: Pick<StorageUser, 'id' | 'username'>,
  cluster: Cluster,
  how: SignInMethod,
  session: { createdAt: Date; expiresAt: Date },
  origin: SignInOrigin,
): Promise<void> {
  await recordAudit(trx, actorOf(user.username, origin), {
    action: 'sign_in',
    target: userTarget(user),
    before: null,
    after: {
      cluster: cluster.name,
      ...methodSnapshot(how),
      client_address: origin.clientAddress ?? null,
      created_at: session.createdAt,
      expires_at: session.expiresAt,
    },
  });
}

/** A session closed by its user: in the transaction that deletes it. */
export async function auditSignOut(
  trx: Db,
  user: Pick<StorageUser, 'id' | 'username'>,
  cluster: Cluster,
  session: { createdAt: Date; expiresAt: Date; applicationCredentialId: string | null },
  origin: SignInOrigin,
): Promise<void> {
  const how: SignInMethod =
    session.applicationCredentialId === null
      ? { method: 'password' }
      : { method: 'application_credential', id: session.applicationCredentialId };
  await recordAudit(trx, actorOf(user.username, origin), {
    action: 'sign_out',
    target: userTarget(user),
    before: {
      cluster: cluster.name,
      ...methodSnapshot(how),
      created_at: session.createdAt,
      expires_at: session.expiresAt,
    },
    after: null,
  });
}

/**
 * A refused sign-in. `user`: the user it named (or whose credential it named) when there is one;
 * otherwise the record names the cluster and no user.
 */
export async function auditSignInFailure(
  db: Db,
  user: Pick<StorageUser, 'id' | 'username'> | null,
  cluster: Cluster,
  how: SignInMethod,
  reason: SignInFailure,
  origin: SignInOrigin,
): Promise<void> {
  await recordAudit(db, actorOf(user?.username ?? UNKNOWN_USER, origin), {
    action: 'sign_in_failed',
    target: user
      ? userTarget(user)
      : { type: 'clusters', id: cluster.id, name: cluster.name, uri: clusterUri(cluster.id) },
    before: null,
    after: {
      cluster: cluster.name,
      ...methodSnapshot(how),
      reason,
      client_address: origin.clientAddress ?? null,
    },
  });
}
