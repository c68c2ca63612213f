import { TABLES } from '@cairn/contract';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { deleteEndedSessions, fromNow, idleSecondsColumn, live, touchSession } from './sessions';

/**
 * Storage users' console sessions. Rows are found by the SHA-256 of the session id (the id itself is
 * never stored). Every time comparison uses the database's clock, so replicas with drifting clocks
 * agree; whether the user may still be signed in is decided by a join on every request.
 */

const TABLE = 'storage_user_sessions';

export interface StorageUserSessionRecord {
  id: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
}

/** A live session with the user it signs in: enough to answer for that user's account only. */
export interface LiveStorageUserSession extends StorageUserSessionRecord {
  username: string;
  clusterId: number;
  clusterName: string;
  /** Seconds since last_seen_at was last written. */
  idleSeconds: number;
}

interface Row {
  session_id: string | number;
  storage_user_id: string | number;
  created_at: Date | string;
  expires_at: Date | string;
}

const toRecord = (r: Row): StorageUserSessionRecord => ({
  id: String(r.session_id),
  userId: String(r.storage_user_id),
  createdAt: new Date(r.created_at),
  expiresAt: new Date(r.expires_at),
});

const RETURNING = ['id as session_id', 'storage_user_id', 'created_at', 'expires_at'];
const RETURNING_TOKEN = [...RETURNING, 'gateway_token_sealed', 'application_credential_id'];

/**
 * A new session for the user at `generation` (its row as the sign-in read it), with the gateway
 * token its sign-in got, sealed (services/storage-user-sessions.ts), and the application
 * credential it signed in with (null: a password).
 */
export async function insertStorageUserSession(
  db: Db,
  idHash: Buffer,
  userId: string,
  generation: string,
  maxSeconds: number,
  gatewayTokenSealed: string,
  applicationCredentialId: string | null,
): Promise<StorageUserSessionRecord> {
  const [row] = await withDbErrors(() =>
    db(TABLE)
      .insert({
        id_hash: idHash,
        storage_user_id: userId,
        user_generation: generation,
        expires_at: fromNow(db, maxSeconds),
        gateway_token_sealed: gatewayTokenSealed,
        application_credential_id: applicationCredentialId,
      })
      .returning(RETURNING),
  );
  return toRecord(row as Row);
}

/**
 * The session with this id hash and its user, in one round trip; null when there is none, it has
 * passed its end or been idle `idleSeconds`, its user is gone, disabled or changed since sign-in
 * (password, enabled or superuser: a new generation; a user deleted and made again is another
 * row, whose deletion took the session with it), or the application credential it signed in with
 * is gone or past its expiry (the gateway voids that credential's tokens at the same moment).
 * The credential is joined by its primary key: the check costs no second round trip.
 */
export async function findLiveStorageUserSession(
  db: Db,
  idHash: Buffer,
  idleSeconds: number,
): Promise<LiveStorageUserSession | null> {
  const row = await withDbErrors(() =>
    db(`${TABLE} as s`)
      .join(`${TABLES.storageUsers} as u`, 'u.id', 's.storage_user_id')
      .join(`${TABLES.clusters} as c`, 'c.id', 'u.cluster_id')
      .leftJoin(`${TABLES.applicationCredentials} as a`, 'a.id', 's.application_credential_id')
      .select(
        's.id as session_id',
        's.storage_user_id',
        's.created_at',
        's.expires_at',
        'u.username',
        'u.cluster_id',
        'c.name as cluster_name',
        idleSecondsColumn(db),
      )
      .where('s.id_hash', idHash)
      .andWhere('u.enabled', true)
      .andWhereRaw('u.generation = s.user_generation')
      .andWhereRaw(
        '(s.application_credential_id IS NULL OR (a.storage_user_id = s.storage_user_id AND (a.expires_at IS NULL OR a.expires_at > now())))',
      )
      .andWhere(live(db, idleSeconds, 's'))
      .first(),
  );
  if (!row) return null;
  const r = row as Row & { username: string; cluster_id: number | string; cluster_name: string; idle_seconds: number };
  return {
    ...toRecord(r),
    username: r.username,
    clusterId: Number(r.cluster_id),
    clusterName: r.cluster_name,
    idleSeconds: Number(r.idle_seconds),
  };
}

/** The sealed gateway token of the session with this row id; null when it has none (or is gone). */
export async function storageSessionGatewayToken(db: Db, id: string): Promise<string | null> {
  const row = (await withDbErrors(() => db(TABLE).select('gateway_token_sealed').where('id', id).first())) as
    { gateway_token_sealed: string | null } | undefined;
  return row?.gateway_token_sealed ?? null;
}

/** Ends the session with this row id (its gateway token no longer works); whether it was there. */
export async function deleteStorageUserSessionById(db: Db, id: string): Promise<boolean> {
  return (await withDbErrors(() => db(TABLE).where('id', id).delete())) > 0;
}

/** Marks the session as used now, unless another request already did within `withinSeconds`. */
export async function touchStorageUserSession(db: Db, id: string, withinSeconds: number): Promise<void> {
  await touchSession(db, TABLE, id, withinSeconds);
}

/**
 * Deletes the session with this id hash; its record, sealed gateway token and the application
 * credential it signed in with, or null when there was none.
 */
export async function deleteStorageUserSession(
  db: Db,
  idHash: Buffer,
): Promise<
  (StorageUserSessionRecord & { gatewayTokenSealed: string | null; applicationCredentialId: string | null }) | null
> {
  const [row] = await withDbErrors(() => db(TABLE).where('id_hash', idHash).delete().returning(RETURNING_TOKEN));
  if (!row) return null;
  const r = row as Row & { gateway_token_sealed: string | null; application_credential_id: string | null };
  return {
    ...toRecord(r),
    gatewayTokenSealed: r.gateway_token_sealed,
    applicationCredentialId: r.application_credential_id,
  };
}

/** Deletes sessions that have ended (past their end, or idle `idleSeconds`); how many. */
export async function deleteEndedStorageUserSessions(db: Db, idleSeconds: number): Promise<number> {
  return deleteEndedSessions(db, TABLE, idleSeconds);
}
