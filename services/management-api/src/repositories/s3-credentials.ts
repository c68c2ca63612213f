import { MAX_S3_CREDENTIALS_PER_USER, TABLES } from '@cairn/contract';
import { errors } from '@cairn/domain';
import type { Knex } from 'knex';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { listPage } from './list-planner';
import type { ListQuery, Page } from './list-types';

/** A credential as the API shows it (the sealed secret is read only by resealing and the gateway). */
export interface S3Credential {
  id: string;
  userId: string;
  /** The owner's cluster (users never move between clusters). */
  clusterId: number;
  accessKey: string;
  createdAt: Date;
  /** Null: never expires. */
  expiresAt: Date | null;
  /** The application credential it is bound to (made with its token through OS-EC2), or null. */
  applicationCredentialId: string | null;
}

type Row = {
  id: string | number;
  storage_user_id: string | number;
  cluster_id: number;
  access_key: string;
  created_at: Date | string;
  expires_at: Date | string | null;
  application_credential_id: string | null;
};
const toCredential = (r: Row): S3Credential => ({
  id: String(r.id),
  userId: String(r.storage_user_id),
  clusterId: Number(r.cluster_id),
  accessKey: r.access_key,
  createdAt: new Date(r.created_at),
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
  applicationCredentialId: r.application_credential_id,
});

const TABLE = TABLES.s3Credentials;
const COLUMNS = [
  's.id',
  's.storage_user_id',
  'u.cluster_id',
  's.access_key',
  's.created_at',
  's.expires_at',
  's.application_credential_id',
];
const withOwner = (db: Db) => db(`${TABLE} as s`).join(`${TABLES.storageUsers} as u`, 'u.id', 's.storage_user_id');

/**
 * Lists through the one list planner. Credentials have no cluster column of their own (a user never
 * changes cluster): the owner's cluster is read per row of the page, and an operator limited to
 * some clusters sees the credentials of its clusters' users only.
 */
export async function listS3Credentials(
  db: Db,
  query: ListQuery,
  visibleClusters?: number[],
): Promise<Page<S3Credential>> {
  return withDbErrors(async () => {
    const columns = [
      's.id',
      's.storage_user_id',
      db.raw(`(SELECT u.cluster_id FROM ${TABLES.storageUsers} AS u WHERE u.id = s.storage_user_id) AS cluster_id`),
      's.access_key',
      's.created_at',
      's.expires_at',
      's.application_credential_id',
    ];
    const scope = visibleClusters
      ? (qb: Knex.QueryBuilder) => {
          qb.whereExists((sub) => {
            sub
              .select(db.raw('1'))
              .from(`${TABLES.storageUsers} as u`)
              .whereRaw('u.id = s.storage_user_id')
              .whereIn('u.cluster_id', visibleClusters);
          });
        }
      : undefined;
    const related = { u: { table: TABLES.storageUsers, key: 'storage_user_id' } };
    const page = await listPage<Row>(
      { db, table: TABLE, alias: 's', columns, related, ...(scope ? { scope } : {}) },
      query,
    );
    return { total: page.total, rows: page.rows.map(toCredential) };
  });
}

export async function getS3Credential(db: Db, id: string): Promise<S3Credential | null> {
  const row = (await withDbErrors(() => withOwner(db).select(COLUMNS).where('s.id', id).first())) as Row | undefined;
  return row ? toCredential(row) : null;
}

/**
 * Inserts a credential for `userId` unless it already holds MAX_S3_CREDENTIALS_PER_USER. The
 * per-user advisory lock is the one the gateway's OS-EC2 creation takes, so two creations at once,
 * through either service, cannot pass the cap together. Call inside a transaction.
 */
export async function createS3Credential(
  trx: Knex.Transaction,
  userId: string,
  accessKey: string,
  sealedSecret: string,
  expiresAt: Date | null,
): Promise<S3Credential> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`cairn s3 credentials of user ${userId}`]);
  const [{ count }] = (await trx(TABLE).where('storage_user_id', userId).count({ count: '*' })) as [
    { count: string | number },
  ];
  if (Number(count) >= MAX_S3_CREDENTIALS_PER_USER) {
    throw errors.invalidInput(
      `This user already has ${MAX_S3_CREDENTIALS_PER_USER} S3 credentials, the most a user may hold; delete one first.`,
    );
  }
  const [inserted] = (await trx(TABLE)
    .insert({ storage_user_id: userId, access_key: accessKey, secret_sealed: sealedSecret, expires_at: expiresAt })
    .returning('id')) as Array<{ id: string | number }>;
  const created = await getS3Credential(trx, String(inserted!.id));
  return created!;
}

/** The deleted credential, or null when there was none. */
export async function deleteS3Credential(trx: Knex.Transaction, id: string): Promise<S3Credential | null> {
  const existing = (await withOwner(trx).select(COLUMNS).where('s.id', id).forUpdate('s').first()) as Row | undefined;
  if (!existing) return null;
  await trx(TABLE).where('id', id).delete();
  return toCredential(existing);
}

/**
 * Deletes every credential of a user about to be deleted, and returns them for the audit trail
 * (the foreign key would take them with the user, unrecorded). Takes the per-user lock a creation
 * takes, so none is added after this read: one that waited fails on the deleted user instead.
 * Call inside the transaction that deletes the user.
 */
export async function deleteS3CredentialsOfUser(trx: Knex.Transaction, userId: string): Promise<S3Credential[]> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`cairn s3 credentials of user ${userId}`]);
  const rows = (await withOwner(trx).select(COLUMNS).where('s.storage_user_id', userId).orderBy('s.id')) as Row[];
  if (rows.length > 0) await trx(TABLE).where('storage_user_id', userId).delete();
  return rows.map(toCredential);
}

/**
 * Deletes the credentials bound to an application credential about to be deleted, and returns
 * them for the audit trail (the foreign key's cascade would take them unrecorded). Call inside
 * the transaction that deletes the application credential.
 */
export async function deleteS3CredentialsBoundTo(
  trx: Knex.Transaction,
  applicationCredentialId: string,
  userId: string,
): Promise<S3Credential[]> {
  // The lock every creation takes (here and at the gateway), so no key is bound to it meanwhile.
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`cairn s3 credentials of user ${userId}`]);
  const rows = (await withOwner(trx)
    .select(COLUMNS)
    .where('s.application_credential_id', applicationCredentialId)
    .orderBy('s.id')
    .forUpdate('s')) as Row[];
  if (rows.length > 0)
    await trx(TABLE)
      .whereIn(
        'id',
        rows.map((r) => r.id),
      )
      .delete();
  return rows.map(toCredential);
}

/** A batch of sealed secrets after `afterId`, in id order, for resealing under a new key. */
export async function sealedSecretsAfter(
  db: Db,
  afterId: string,
  limit: number,
): Promise<Array<{ id: string; accessKey: string; sealed: string }>> {
  const rows = (await withDbErrors(() =>
    db(TABLE).select('id', 'access_key', 'secret_sealed').where('id', '>', afterId).orderBy('id').limit(limit),
  )) as Array<{
    id: string | number;
    access_key: string;
    secret_sealed: string;
  }>;
  return rows.map((r) => ({ id: String(r.id), accessKey: r.access_key, sealed: r.secret_sealed }));
}

/** Replaces a sealed secret only if it is still the one read (a concurrent delete or reseal wins). */
export async function replaceSealedSecret(db: Db, id: string, was: string, now: string): Promise<boolean> {
  const n = await withDbErrors(() => db(TABLE).where({ id, secret_sealed: was }).update({ secret_sealed: now }));
  return Number(n) === 1;
}

/**
 * For each key id the stored secrets name (`v1:<key id>:…`): how many secrets it seals and the
 * first `samples` of them, to check at start that the keyring opens them. None when the
 * table is not there yet (a database before its first migration).
 */
export async function sealedSecretsByKeyId(
  db: Db,
  samples: number,
): Promise<Array<{ keyId: string; count: number; samples: Array<{ accessKey: string; sealed: string }> }>> {
  const exists = (await withDbErrors(() => db.raw('SELECT to_regclass(?) AS t', [TABLE]))) as {
    rows: Array<{ t: string | null }>;
  };
  if (!exists.rows[0]?.t) return [];
  const rows = (await withDbErrors(() =>
    db.raw(
      `SELECT key_id, count, access_key, secret_sealed FROM (
         SELECT split_part(secret_sealed, ':', 2) AS key_id, access_key, secret_sealed,
                count(*) OVER w AS count, row_number() OVER (w ORDER BY id) AS n
         FROM ${TABLE} WINDOW w AS (PARTITION BY split_part(secret_sealed, ':', 2))
       ) s WHERE n <= ? ORDER BY key_id, n`,
      [samples],
    ),
  )) as { rows: Array<{ key_id: string; count: string | number; access_key: string; secret_sealed: string }> };
  const byKeyId = new Map<
    string,
    { keyId: string; count: number; samples: Array<{ accessKey: string; sealed: string }> }
  >();
  for (const r of rows.rows) {
    const group = byKeyId.get(r.key_id) ?? { keyId: r.key_id, count: Number(r.count), samples: [] };
    group.samples.push({ accessKey: r.access_key, sealed: r.secret_sealed });
    byKeyId.set(r.key_id, group);
  }
  return [...byKeyId.values()];
}
