import { errors, escapeHtml } from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { recordAudit, type AuditTarget } from '../repositories/audit';
import { deleteApplicationCredential, getApplicationCredential, listApplicationCredentials, type ApplicationCredential } from '../repositories/application-credentials';
import type { ListQuery, Page } from '../repositories/list-types';
import { applicationCredentialJson } from '../resources/representations';
import { applicationCredentialUri } from '../resources/uris';
import { auditActorOf, type Acting } from './context';
import { canSeeCluster, requireWriterOn, requireWriter, visibleClusters } from './policy';

/**
 * Keystone application credentials, made by storage users through the gateway. Operators list
 * and revoke them (readers list only); they are never created or changed here. Revoking one ends
 * its tokens on every gateway within a second (the gateways check the row at each validation).
 */

export const applicationCredentialTarget = (c: Pick<ApplicationCredential, 'id' | 'name'>): AuditTarget => ({
  type: 'application_credentials',
  id: c.id,
  name: c.name,
  uri: applicationCredentialUri(c.id),
});

const notFound = (raw: unknown) => errors.notFound(`No application credential with id '${escapeHtml(String(raw))}'.`);
const isId = (raw: string | undefined): raw is string => raw !== undefined && /^[0-9a-f]{32}$/.test(raw);

async function findVisible(db: Db, acting: Acting, raw: string | undefined): Promise<ApplicationCredential> {
  const credential = isId(raw) ? await getApplicationCredential(db, raw) : null;
  if (!credential || !canSeeCluster(acting.operator, credential.clusterId)) throw notFound(raw);
  return credential;
}

/** `cluster`: only the credentials of that cluster's users (the `cluster` filter). */
export function list(db: Db, acting: Acting, query: ListQuery, cluster?: number): Promise<Page<ApplicationCredential>> {
  const visible = visibleClusters(acting.operator);
  const clusters = cluster === undefined ? visible : (visible ?? [cluster]).filter((c) => c === cluster);
  return listApplicationCredentials(db, query, clusters);
}

export const show = (db: Db, acting: Acting, rawId: string | undefined): Promise<ApplicationCredential> => findVisible(db, acting, rawId);

export async function remove(db: Db, acting: Acting, rawId: string | undefined): Promise<void> {
  requireWriter(acting.operator);
  const existing = await findVisible(db, acting, rawId);
  requireWriterOn(acting.operator, existing.clusterId);
  await withDbErrors(() =>
    db.transaction(async (trx) => {
      const deleted = await deleteApplicationCredential(trx, existing.id);
      if (!deleted) throw notFound(existing.id);
      await recordAudit(trx, auditActorOf(acting), { action: 'delete', target: applicationCredentialTarget(deleted), before: applicationCredentialJson(deleted), after: null });
    }),
  );
}
