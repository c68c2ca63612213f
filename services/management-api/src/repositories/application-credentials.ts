import { TABLES, type ApplicationCredentialAccessRule } from '@cairn/contract';
import type { Knex } from 'knex';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { listPage } from './list-planner';
import type { ListQuery, Page } from './list-types';

/** An application credential as operators see it: never the secret's hash. */
export interface ApplicationCredential {
  id: string;
  userId: string;
  /** The owner's cluster (users never move between clusters). */
  clusterId: number;
  name: string;
  description: string | null;
  expiresAt: Date | null;
  roles: string[];
  unrestricted: boolean;
  accessRules: ApplicationCredentialAccessRule[] | null;
  createdAt: Date;
}

type Row = {
  id: string;
  storage_user_id: string | number;
  cluster_id: number;
  name: string;
  description: string | null;
  expires_at: Date | string | null;
  roles: unknown;
  unrestricted: boolean;
  access_rules: unknown;
  created_at: Date | string;
};
const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));
const toCredential = (r: Row): ApplicationCredential => ({
  id: r.id,
  userId: String(r.storage_user_id),
  clusterId: Number(r.cluster_id),
  name: r.name,
  description: r.description,
  expiresAt: r.expires_at === null ? null : new Date(r.expires_at),
  roles: json<string[]>(r.roles),
  unrestricted: r.unrestricted,
  accessRules: json<ApplicationCredential['accessRules']>(r.access_rules),
  createdAt: new Date(r.created_at),
});

const TABLE = TABLES.applicationCredentials;
const OWN = [
  'a.id',
  'a.storage_user_id',
  'a.name',
  'a.description',
  'a.expires_at',
  'a.roles',
  'a.unrestricted',
  'a.access_rules',
  'a.created_at',
];
const withOwner = (db: Db) => db(`${TABLE} as a`).join(`${TABLES.storageUsers} as u`, 'u.id', 'a.storage_user_id');

/**
 * Lists through the one list planner. The table has no cluster column (a user never changes
 * cluster): `clusters` narrows by the owners' cluster, as does an operator's own limit.
 */
export async function listApplicationCredentials(
  db: Db,
  query: ListQuery,
  clusters?: number[],
): Promise<Page<ApplicationCredential>> {
  return withDbErrors(async () => {
    const columns = [
      ...OWN,
      db.raw(`(SELECT u.cluster_id FROM ${TABLES.storageUsers} AS u WHERE u.id = a.storage_user_id) AS cluster_id`),
    ];
    const scope = clusters
      ? (qb: Knex.QueryBuilder) => {
          qb.whereExists((sub) => {
            sub
              .select(db.raw('1'))
              .from(`${TABLES.storageUsers} as u`)
              .whereRaw('u.id = a.storage_user_id')
              .whereIn('u.cluster_id', clusters);
          });
        }
      : undefined;
    const related = { u: { table: TABLES.storageUsers, key: 'storage_user_id' } };
    const page = await listPage<Row>(
      { db, table: TABLE, alias: 'a', columns, related, ...(scope ? { scope } : {}) },
      query,
    );
    return { total: page.total, rows: page.rows.map(toCredential) };
  });
}

export async function getApplicationCredential(db: Db, id: string): Promise<ApplicationCredential | null> {
  const row = (await withDbErrors(() =>
    withOwner(db)
      .select([...OWN, 'u.cluster_id'])
      .where('a.id', id)
      .first(),
  )) as Row | undefined;
  return row ? toCredential(row) : null;
}

/** The deleted credential, or null when there was none. */
export async function deleteApplicationCredential(
  trx: Knex.Transaction,
  id: string,
): Promise<ApplicationCredential | null> {
  const existing = (await withOwner(trx)
    .select([...OWN, 'u.cluster_id'])
    .where('a.id', id)
    .forUpdate('a')
    .first()) as Row | undefined;
  if (!existing) return null;
  await trx(TABLE).where('id', id).delete();
  return toCredential(existing);
}

/**
 * Deletes every credential of a user about to be deleted, and returns them for the audit trail
 * (the foreign key would take them with the user, unrecorded). Takes the per-user lock the
 * gateway's creation takes, so none is added after this read. Call inside the user's delete.
 */
export async function deleteApplicationCredentialsOfUser(
  trx: Knex.Transaction,
  userId: string,
): Promise<ApplicationCredential[]> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [
    `cairn application credentials of user ${userId}`,
  ]);
  const rows = (await withOwner(trx)
    .select([...OWN, 'u.cluster_id'])
    .where('a.storage_user_id', userId)
    .orderBy('a.id')) as Row[];
  if (rows.length > 0) await trx(TABLE).where('storage_user_id', userId).delete();
  return rows.map(toCredential);
}
