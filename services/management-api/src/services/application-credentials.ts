import { errors, escapeHtml } from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { recordAudit, type AuditTarget } from '../repositories/audit';
import {
  deleteApplicationCredential,
  getApplicationCredential,
  listApplicationCredentials,
  type ApplicationCredential,
} from '../repositories/application-credentials';
import type { ListQuery, Page } from '../repositories/list-types';
import { deleteS3CredentialsBoundTo } from '../repositories/s3-credentials';
import { applicationCredentialJson, s3CredentialJson } from '../resources/representations';
import { applicationCredentialUri } from '../resources/uris';
import { auditActorOf, type Acting } from './context';
import { canSeeCluster, requireWriterOn, requireWriter, visibleClusters } from './policy';
import { s3CredentialTarget } from './s3-credentials';

/**
 * Keystone application credentials, made by storage users through the gateway. Operators list
 * and revoke them (readers list only); they are never created or changed here. Revoking one ends
 * its tokens on every gateway within a second (the gateways check the row at each validation),
 * and deletes the S3 credentials made with its tokens.
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

export const show = (db: Db, acting: Acting, rawId: string | undefined): Promise<ApplicationCredential> =>
  findVisible(db, acting, rawId);

export async function remove(db: Db, acting: Acting, rawId: string | undefined): Promise<void> {
  requireWriter(acting.operator);
  const existing = await findVisible(db, acting, rawId);
  requireWriterOn(acting.operator, existing.clusterId);
  await withDbErrors(() =>
    db.transaction(async (trx) => {
      // The S3 keys made with its tokens end with it, each with its own audit record.
      const bound = await deleteS3CredentialsBoundTo(trx, existing.id, existing.userId);
      const deleted = await deleteApplicationCredential(trx, existing.id);
      if (!deleted) throw notFound(existing.id);
      const actor = auditActorOf(acting);
      for (const c of bound)
        await recordAudit(trx, actor, {
          action: 'delete',
          target: s3CredentialTarget(c),
          before: s3CredentialJson(c),
          after: null,
        });
      await recordAudit(trx, actor, {
        action: 'delete',
        target: applicationCredentialTarget(deleted),
        before: applicationCredentialJson(deleted),
        after: null,
      });
    }),
  );
}
