import { errors, generateS3AccessKey, generateS3Secret, sealS3Secret, type S3SecretKeyring } from '@cairn/domain';
import { isDatabaseUnreachable } from '@cairn/runtime';
import type { Knex } from 'knex';
import type { UserRecord } from '../credentials/users';
import { AUDIT_TABLE, MAX_S3_CREDENTIALS_PER_USER, S3_CREDENTIAL_TABLE, S3_CREDENTIAL_USER_COLUMN } from './s3-contract';

const unreachable = (err: unknown): never => {
  if (isDatabaseUnreachable(err)) throw errors.unavailable('The user database (Postgres) is unavailable.', { cause: (err as Error).message });
  throw err;
};

/** A user's credential as the OS-EC2 API shows it, its secret still sealed. */
export interface StoredS3Credential {
  id: string;
  accessKey: string;
  sealedSecret: string;
  createdAt: string;
}

/** Who made an OS-EC2 write, for the audit record: the storage user whose token it was. */
export interface S3Actor {
  user: UserRecord;
  requestId: string | null;
}

type Row = { id: string | number; access_key: string; secret_sealed: string; created_at: Date | string };
const toStored = (r: Row): StoredS3Credential => ({
  id: String(r.id),
  accessKey: r.access_key,
  sealedSecret: r.secret_sealed,
  createdAt: new Date(r.created_at).toISOString(),
});
const COLUMNS = ['id', 'access_key', 'secret_sealed', 'created_at'];

export class TooManyS3Credentials extends Error {}

/**
 * The OS-EC2 credential API's reads and writes of `s3_credentials` (a user's own rows only: the
 * routes decide whose). Writes take the same transaction as their audit record, and a per-user
 * advisory lock so that two creations at once cannot pass the cap together.
 */
export class S3CredentialStore {
  constructor(private readonly db: Knex) {}

  async list(userId: string): Promise<StoredS3Credential[]> {
    const rows = (await this.db(S3_CREDENTIAL_TABLE).select(COLUMNS).where(S3_CREDENTIAL_USER_COLUMN, userId).orderBy('id').catch(unreachable)) as Row[];
    return rows.map(toStored);
  }

  async get(userId: string, accessKey: string): Promise<StoredS3Credential | null> {
    const row = (await this.db(S3_CREDENTIAL_TABLE)
      .select(COLUMNS)
      .where({ [S3_CREDENTIAL_USER_COLUMN]: userId, access_key: accessKey })
      .first()
      .catch(unreachable)) as Row | undefined;
    return row ? toStored(row) : null;
  }

  /** A new credential for `actor.user`; the secret is returned once, here, and stored sealed. */
  async create(keyring: S3SecretKeyring, actor: S3Actor): Promise<StoredS3Credential & { secret: string }> {
    const userId = actor.user.id;
    const accessKey = generateS3AccessKey();
    const secret = generateS3Secret();
    const sealedSecret = sealS3Secret(keyring, accessKey, secret);
    return this.db
      .transaction(async (trx) => {
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`cairn s3 credentials of user ${userId}`]);
        const [{ count }] = (await trx(S3_CREDENTIAL_TABLE).where(S3_CREDENTIAL_USER_COLUMN, userId).count({ count: '*' })) as [{ count: string | number }];
        if (Number(count) >= MAX_S3_CREDENTIALS_PER_USER) throw new TooManyS3Credentials();
        const [row] = (await trx(S3_CREDENTIAL_TABLE)
          .insert({ [S3_CREDENTIAL_USER_COLUMN]: userId, access_key: accessKey, secret_sealed: sealedSecret })
          .returning(COLUMNS)) as Row[];
        const stored = toStored(row!);
        await audit(trx, actor, 'create', stored, null, { access_key: accessKey, created_at: stored.createdAt });
        return { ...stored, secret };
      })
      .catch(unreachable);
  }

  /** True when the user's credential existed and is gone. */
  async delete(actor: S3Actor, accessKey: string): Promise<boolean> {
    return this.db
      .transaction(async (trx) => {
        const [row] = (await trx(S3_CREDENTIAL_TABLE)
          .where({ [S3_CREDENTIAL_USER_COLUMN]: actor.user.id, access_key: accessKey })
          .delete()
          .returning(COLUMNS)) as Row[];
        if (!row) return false;
        const stored = toStored(row);
        await audit(trx, actor, 'delete', stored, { access_key: accessKey, created_at: stored.createdAt }, null);
        return true;
      })
      .catch(unreachable);
  }
}

/** The audit record of an OS-EC2 write: the actor is the storage user, the snapshots hold no secret. */
async function audit(
  trx: Knex.Transaction,
  actor: S3Actor,
  action: 'create' | 'delete',
  credential: StoredS3Credential,
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): Promise<void> {
  await trx(AUDIT_TABLE).insert({
    operator_id: null,
    operator_name: `storage user ${actor.user.username}`.slice(0, 64),
    action,
    target_type: 's3_credentials',
    target_id: credential.id,
    target_name: credential.accessKey,
    target_uri: `/api/v1/s3_credentials/${credential.id}/`,
    before: before === null ? null : JSON.stringify(before),
    after: after === null ? null : JSON.stringify(after),
    request_id: actor.requestId,
  });
}
