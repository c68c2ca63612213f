import type { Operator } from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { operatorFromRow, selectOperators, type OperatorRow } from './operators';
import { deleteEndedSessions, fromNow, idleSecondsColumn, live, touchSession } from './sessions';

/**
 * The console's sessions. Rows are found by the SHA-256 of the session id (the id itself is never
 * stored). Every time comparison uses the database's clock, so replicas with drifting clocks agree.
 */

const TABLE = 'console_sessions';

export interface ConsoleSessionRecord {
  id: string;
  apiKeyId: string;
  createdAt: Date;
  expiresAt: Date;
  lastSeenAt: Date;
  /** Until when the session may mint lasting credentials (see stepUpConsoleSession); null: never stepped up. */
  steppedUpUntil: Date | null;
}

export interface LiveConsoleSession extends ConsoleSessionRecord {
  operator: Operator;
  /** Seconds since last_seen_at was last written. */
  idleSeconds: number;
  /** Whether stepped_up_until is still ahead, by the database's clock. */
  steppedUp: boolean;
}

interface SessionRow {
  session_id: string | number;
  api_key_id: string | number;
  session_created_at: Date | string;
  expires_at: Date | string;
  last_seen_at: Date | string;
  stepped_up_until: Date | string | null;
}

const toRecord = (r: SessionRow): ConsoleSessionRecord => ({
  id: String(r.session_id),
  apiKeyId: String(r.api_key_id),
  createdAt: new Date(r.session_created_at),
  expiresAt: new Date(r.expires_at),
  lastSeenAt: new Date(r.last_seen_at),
  steppedUpUntil: r.stepped_up_until === null ? null : new Date(r.stepped_up_until),
});

const RETURNING = [
  'id as session_id',
  'api_key_id',
  'created_at as session_created_at',
  'expires_at',
  'last_seen_at',
  'stepped_up_until',
];

export async function insertConsoleSession(
  db: Db,
  idHash: Buffer,
  apiKeyId: string,
  maxSeconds: number,
): Promise<ConsoleSessionRecord> {
  const [row] = await withDbErrors(() =>
    db(TABLE)
      .insert({ id_hash: idHash, api_key_id: apiKeyId, expires_at: fromNow(db, maxSeconds) })
      .returning(RETURNING),
  );
  return toRecord(row as SessionRow);
}

/**
 * The session with this id hash, with its operator, in one round trip; null when there is none,
 * it has passed its end or been idle `idleSeconds`, or its API key (or operator) is gone: the joins
 * decide that on every request, whatever any cache holds.
 */
export async function findLiveConsoleSession(
  db: Db,
  idHash: Buffer,
  idleSeconds: number,
): Promise<LiveConsoleSession | null> {
  const row = await withDbErrors(() =>
    selectOperators(db)
      .join('api_keys as k', 'k.operator_id', 'o.id')
      .join(`${TABLE} as s`, 's.api_key_id', 'k.id')
      .select(
        's.id as session_id',
        's.api_key_id',
        's.created_at as session_created_at',
        's.expires_at',
        's.last_seen_at',
        's.stepped_up_until',
        idleSecondsColumn(db),
        db.raw('coalesce(s.stepped_up_until > now(), false) AS stepped_up'),
      )
      .where('s.id_hash', idHash)
      .andWhere(live(db, idleSeconds, 's'))
      .first(),
  );
  if (!row) return null;
  const r = row as SessionRow & OperatorRow & { idle_seconds: number | string; stepped_up: boolean };
  return {
    ...toRecord(r),
    operator: operatorFromRow(r),
    idleSeconds: Number(r.idle_seconds),
    steppedUp: r.stepped_up === true,
  };
}

/** Marks the session as used now, unless another request already did within `withinSeconds`. */
export async function touchConsoleSession(db: Db, id: string, withinSeconds: number): Promise<void> {
  await touchSession(db, TABLE, id, withinSeconds);
}

/**
 * Marks the session as stepped up (its operator has just re-entered an API key) for `forSeconds` from
 * now, and as used now; its record, or null when it has ended meanwhile.
 */
export async function stepUpConsoleSession(
  db: Db,
  id: string,
  forSeconds: number,
  idleSeconds: number,
): Promise<ConsoleSessionRecord | null> {
  const [row] = await withDbErrors(() =>
    db(TABLE)
      .where('id', id)
      .andWhere(live(db, idleSeconds))
      .update({ stepped_up_until: fromNow(db, forSeconds), last_seen_at: db.fn.now() })
      .returning(RETURNING),
  );
  return row ? toRecord(row as SessionRow) : null;
}

/** Deletes the session with this id hash; its record, or null when there was none. */
export async function deleteConsoleSession(db: Db, idHash: Buffer): Promise<ConsoleSessionRecord | null> {
  const [row] = await withDbErrors(() => db(TABLE).where('id_hash', idHash).delete().returning(RETURNING));
  return row ? toRecord(row as SessionRow) : null;
}

/** Deletes sessions that have ended (past their end, or idle `idleSeconds`); how many. */
export async function deleteEndedConsoleSessions(db: Db, idleSeconds: number): Promise<number> {
  return deleteEndedSessions(db, TABLE, idleSeconds);
}
