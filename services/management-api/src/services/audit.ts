import { errors, escapeHtml } from '@cairn/domain';
import type { Db } from '../db/database';
import { parseBigId } from '../resources/uris';
import { getAudit, listAudit, type AuditRecord } from '../repositories/audit';
import type { ListQuery, Page } from '../repositories/list-types';
import type { Acting } from './context';
import { requireGlobalAdminToRead } from './policy';

export type { AuditRecord };

/** Admins with access to every cluster only: the trail shows every cluster and every operator. */
export const authorize = (acting: Acting): void => requireGlobalAdminToRead(acting.operator, 'the audit trail');

export async function list(db: Db, acting: Acting, query: ListQuery): Promise<Page<AuditRecord>> {
  authorize(acting);
  return listAudit(db, query);
}

export async function show(db: Db, acting: Acting, rawId: string | undefined): Promise<AuditRecord> {
  authorize(acting);
  const id = parseBigId(rawId);
  const record = id === null ? null : await getAudit(db, id);
  if (!record) throw errors.notFound(`No audit entry with id '${escapeHtml(String(rawId))}'.`);
  return record;
}
