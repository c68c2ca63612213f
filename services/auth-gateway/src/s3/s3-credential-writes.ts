import { generateS3AccessKey, generateS3Secret, sealS3Secret, type S3SecretKeyring } from '@cairn/domain';
import type { Knex } from 'knex';
import { primaryUnreachable as unreachable } from '../credentials/unreachable';
import type { UserRecord } from '../credentials/users';
import {
  MAX_S3_CREDENTIALS_PER_USER,
  S3_CREDENTIAL_COLUMNS,
  STORAGE_USER_ACTOR_PREFIX,
  TABLES,
  type S3CredentialRow,
} from '@cairn/contract';

/** A user's credential as the OS-EC2 API shows it, its secret still sealed. */
export interface StoredS3Credential {
  id: string;
  accessKey: string;
  sealedSecret: string;
  createdAt: string;
  expiresAt: string | null;
  applicationCredentialId: string | null;
}

/** Who made an OS-EC2 write, for the audit record: the storage user whose token it was. */
export interface S3Actor {
  user: UserRecord;
  requestId: string | null;
}

type Row = S3CredentialRow;
const toStored = (r: Row): StoredS3Credential => ({
  id: String(r.id),
  accessKey: r.access_key,
  sealedSecret: r.secret_sealed,
  createdAt: new Date(r.created_at).toISOString(),
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at).toISOString(),
  applicationCredentialId: r.application_credential_id,
});
const COLUMNS = [...S3_CREDENTIAL_COLUMNS];

export class TooManyS3Credentials extends Error {}

/** The user was deleted after the request found it (its row, and so the foreign key's target, is gone). */
export class S3CredentialUserGone extends Error {}

/** Postgres's foreign_key_violation: the credential's storage_user_id no longer exists. */
const isUserGone = (e: unknown): boolean => (e as { code?: unknown } | null)?.code === '23503';

/**
 * The OS-EC2 credential API's reads and writes of `s3_credentials` (a user's own rows only: the
 * routes decide whose). Writes take the same transaction as their audit record, and a per-user
 * advisory lock so that two creations at once cannot pass the cap together.
 */
export class S3CredentialStore {
  constructor(
    private readonly db: Knex,
    /** The served cluster's id: the audit records name it, as the management API's do. */
    private readonly clusterId: number,
  ) {}

  async list(userId: string): Promise<StoredS3Credential[]> {
    const rows = (await this.db(TABLES.s3Credentials)
      .select(COLUMNS)
      .where('storage_user_id', userId)
      .orderBy('id')
      .catch(unreachable)) as Row[];
    return rows.map(toStored);
  }

  async get(userId: string, accessKey: string): Promise<StoredS3Credential | null> {
    const row = (await this.db(TABLES.s3Credentials)
      .select(COLUMNS)
      .where({ storage_user_id: userId, access_key: accessKey })
      .first()
      .catch(unreachable)) as Row | undefined;
    return row ? toStored(row) : null;
  }

  /**
   * A new credential for `actor.user`; the secret is returned once, here, and stored sealed.
   * `applicationCredentialId`: the application credential whose token asked, to which it is bound;
   * `expiresAt`: when it stops working (null: never).
   */
  async create(
    keyring: S3SecretKeyring,
    actor: S3Actor,
    applicationCredentialId: string | null = null,
    expiresAt: Date | null = null,
  ): Promise<StoredS3Credential & { secret: string }> {
    const userId = actor.user.id;
    const accessKey = generateS3AccessKey();
    const secret = generateS3Secret();
    const sealedSecret = sealS3Secret(keyring, accessKey, secret);
    return this.db
      .transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
          `cairn s3 credentials of user ${userId}`,
        ]);
        const [{ count }] = (await trx(TABLES.s3Credentials)
          .where('storage_user_id', userId)
          .count({ count: '*' })) as [{ count: string | number }];
        if (Number(count) >= MAX_S3_CREDENTIALS_PER_USER) throw new TooManyS3Credentials();
        const [row] = (await trx(TABLES.s3Credentials)
          .insert({
            storage_user_id: userId,
            access_key: accessKey,
            secret_sealed: sealedSecret,
            application_credential_id: applicationCredentialId,
            expires_at: expiresAt,
          })
          .returning(COLUMNS)) as Row[];
        const stored = toStored(row!);
        await audit(trx, actor, 'create', null, this.snapshot(actor, stored));
        return { ...stored, secret };
      })
      .catch((e: unknown) => {
        if (isUserGone(e)) throw new S3CredentialUserGone();
        return unreachable(e);
      });
  }

  /** True when the user's credential existed and is gone. */
  async delete(actor: S3Actor, accessKey: string): Promise<boolean> {
    return this.db
      .transaction(async (trx) => {
        const [row] = (await trx(TABLES.s3Credentials)
          .where({ storage_user_id: actor.user.id, access_key: accessKey })
          .delete()
          .returning(COLUMNS)) as Row[];
        if (!row) return false;
        const stored = toStored(row);
        await audit(trx, actor, 'delete', this.snapshot(actor, stored), null);
        return true;
      })
      .catch(unreachable);
  }

  /**
   * The credential as the management API shows it (its `s3_credentials` resource, whose URIs these
   * are), so that its audit trail reads the same whoever made the write. No secret, sealed or not.
   */
  private snapshot(actor: S3Actor, c: StoredS3Credential): CredentialSnapshot {
    return snapshotOf(actor.user.id, this.clusterId, c);
  }
}

const snapshotOf = (userId: string, clusterId: number, c: StoredS3Credential): CredentialSnapshot => ({
  access_key: c.accessKey,
  application_credential:
    c.applicationCredentialId === null ? null : `${API_ROOT}/application_credentials/${c.applicationCredentialId}/`,
  cluster: `${API_ROOT}/clusters/${clusterId}/`,
  created_at: c.createdAt,
  expires_at: c.expiresAt,
  id: c.id,
  resource_uri: `${API_ROOT}/s3_credentials/${c.id}/`,
  user: `${API_ROOT}/users/${userId}/`,
});

/**
 * Deletes the S3 credentials bound to an application credential about to be deleted, each with
 * its audit record (the foreign key's cascade would take them unrecorded), and returns their
 * access keys. Call inside the transaction that deletes the application credential.
 */
export async function deleteS3CredentialsBoundTo(
  trx: Knex.Transaction,
  actor: S3Actor,
  clusterId: number,
  applicationCredentialId: string,
): Promise<string[]> {
  const rows = (await trx(TABLES.s3Credentials)
    .where({ application_credential_id: applicationCredentialId })
    .delete()
    .returning(COLUMNS)) as Row[];
  for (const row of rows)
    await audit(trx, actor, 'delete', snapshotOf(String(row.storage_user_id), clusterId, toStored(row)), null);
  return rows.map((r) => r.access_key);
}

/** The management API's root, where the audit records' URIs point. */
const API_ROOT = '/api/v1';

interface CredentialSnapshot {
  access_key: string;
  application_credential: string | null;
  cluster: string;
  created_at: string;
  expires_at: string | null;
  id: string;
  resource_uri: string;
  user: string;
}

/**
 * The audit record of an OS-EC2 write, in the management API's trail: no operator made it, so the
 * actor is the storage user whose token it was (`storage user <name>`, no operator id).
 */
async function audit(
  trx: Knex.Transaction,
  actor: S3Actor,
  action: 'create' | 'delete',
  before: CredentialSnapshot | null,
  after: CredentialSnapshot | null,
): Promise<void> {
  const credential = (before ?? after)!;
  await trx(TABLES.audit).insert({
    operator_id: null,
    operator_name: `${STORAGE_USER_ACTOR_PREFIX}${actor.user.username}`.slice(0, 64),
    action,
    target_type: 's3_credentials',
    target_id: credential.id,
    target_name: credential.access_key,
    target_uri: credential.resource_uri,
    before: before === null ? null : JSON.stringify(before),
    after: after === null ? null : JSON.stringify(after),
    request_id: actor.requestId,
  });
}
