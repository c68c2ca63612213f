import { AUDIT_ACTIONS, TABLES } from '@cairn/contract';
import type { HostCommandName } from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { listPage } from './list-planner';
import type { ListQuery, Ordering, Page } from './list-types';

/**
 * The audit trail. `recordAudit` takes the write's own transaction: the change and its record
 * commit together or not at all. Snapshots are public representations; `withoutSecrets` strips
 * anything named like a secret once more, whatever a caller passes.
 */

export type AuditAction = (typeof AUDIT_ACTIONS)[number];
export type Snapshot = Record<string, unknown>;

/** Who made a write: an authenticated operator over HTTP, or a command run on the host. */
export interface AuditActor {
  operatorId: number | null;
  operatorName: string;
  requestId: string | null;
}

/** A command run on the host; its names are reserved (no operator may take one, see HOST_COMMAND_NAMES). */
const hostActor = (name: HostCommandName): AuditActor =>
  Object.freeze({ operatorId: null, operatorName: name, requestId: null });

export const CLI_ACTOR = hostActor('cli');
export const BOOTSTRAP_ACTOR = hostActor('bootstrap');
/** The deployment's migrate job (its declared collectors). */
export const MIGRATE_ACTOR = hostActor('migrate');

/**
 * The quota reconciler, running inside the management API: it records the quotas it puts back in
 * Swift. Its name has a space, which no operator's name may have.
 */
export const QUOTA_RECONCILER_ACTOR: AuditActor = Object.freeze({
  operatorId: null,
  operatorName: 'quota reconciler',
  requestId: null,
});

export interface AuditTarget {
  /** The resource type, as in its URI: `users`, `clusters`, `operators`. */
  type: string;
  id: string | number;
  /** What a person calls it: a user name, a cluster or operator name. */
  name: string;
  uri: string;
}

export interface AuditChange {
  action: AuditAction;
  target: AuditTarget;
  before: Snapshot | null;
  after: Snapshot | null;
}

export interface AuditRecord {
  id: string;
  time: Date;
  operatorId: number | null;
  operatorName: string;
  action: string;
  targetType: string;
  targetId: string;
  targetName: string;
  targetUri: string;
  before: Snapshot | null;
  after: Snapshot | null;
  requestId: string | null;
}

/** Property names that hold a secret or something derived from one, in any spelling used here. */
const SECRET_NAME = /^(password|password_?hash|api_?key|key|key_?hash(es)?|secret|token)$/i;

/** A deep copy without secret-named properties; dates become ISO strings (what JSON would hold). */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value instanceof Date) return value.toISOString();
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return undefined;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (SECRET_NAME.test(k)) continue;
      const clean = withoutSecrets(v);
      if (clean !== undefined) out[k] = clean;
    }
    return out;
  }
  return value;
}

const snapshotJson = (s: Snapshot | null): string | null => (s === null ? null : JSON.stringify(withoutSecrets(s)));

const auditRow = (actor: AuditActor, change: AuditChange) => ({
  operator_id: actor.operatorId,
  operator_name: actor.operatorName,
  action: change.action,
  target_type: change.target.type,
  target_id: String(change.target.id),
  target_name: change.target.name,
  target_uri: change.target.uri,
  before: snapshotJson(change.before),
  after: snapshotJson(change.after),
  request_id: actor.requestId,
});

export async function recordAudit(db: Db, actor: AuditActor, change: AuditChange): Promise<string> {
  const [row] = await withDbErrors(() => db(TABLES.audit).insert(auditRow(actor, change)).returning('id'));
  return String((row as { id: string | number }).id);
}

/** One record per change, in statements of 1000 rows (a bulk create of users). */
export async function recordAudits(db: Db, actor: AuditActor, changes: AuditChange[]): Promise<void> {
  for (let i = 0; i < changes.length; i += 1000) {
    const rows = changes.slice(i, i + 1000).map((c) => auditRow(actor, c));
    await withDbErrors(() => db(TABLES.audit).insert(rows));
  }
}

interface AuditRow {
  id: string | number;
  occurred_at: Date | string;
  operator_id: number | null;
  operator_name: string;
  action: string;
  target_type: string;
  target_id: string;
  target_name: string;
  target_uri: string;
  before: unknown;
  after: unknown;
  request_id: string | null;
}

const COLUMNS = [
  'a.id',
  'a.occurred_at',
  'a.operator_id',
  'a.operator_name',
  'a.action',
  'a.target_type',
  'a.target_id',
  'a.target_name',
  'a.target_uri',
  'a.before',
  'a.after',
  'a.request_id',
];

/** node-postgres parses jsonb; other drivers may hand back its text. */
const json = (v: unknown): Snapshot | null =>
  v === null || v === undefined ? null : ((typeof v === 'string' ? JSON.parse(v) : v) as Snapshot);

const toRecord = (r: AuditRow): AuditRecord => ({
  id: String(r.id),
  time: new Date(r.occurred_at),
  operatorId: r.operator_id === null ? null : Number(r.operator_id),
  operatorName: r.operator_name,
  action: r.action,
  targetType: r.target_type,
  targetId: r.target_id,
  targetName: r.target_name,
  targetUri: r.target_uri,
  before: json(r.before),
  after: json(r.after),
  requestId: r.request_id,
});

/** Newest first unless the request orders otherwise; id breaks ties within one transaction. */
const NEWEST_FIRST: Ordering[] = [
  { alias: 'a', column: 'occurred_at', desc: true },
  { alias: 'a', column: 'id', desc: true },
];

export async function listAudit(db: Db, query: ListQuery): Promise<Page<AuditRecord>> {
  return withDbErrors(async () => {
    const page = await listPage<AuditRow>(
      { db, table: TABLES.audit, alias: 'a', columns: COLUMNS, defaultOrdering: NEWEST_FIRST },
      query,
    );
    return { total: page.total, rows: page.rows.map(toRecord) };
  });
}

export async function getAudit(db: Db, id: string): Promise<AuditRecord | null> {
  const row = await withDbErrors(() => db(`${TABLES.audit} as a`).select(COLUMNS).where('a.id', id).first());
  return row ? toRecord(row as AuditRow) : null;
}
