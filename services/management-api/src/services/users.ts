import {
  errors,
  escapeHtml,
  quotasOfInput,
  sameQuotas,
  type StorageUser,
  type UserBulkCreateInput,
  type UserCreateInput,
  type UserPatchInput,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { clusterIdFromRef, parseBigId, userUri } from '../resources/uris';
import { recordAudit, recordAudits, type AuditTarget } from '../repositories/audit';
import { getCluster } from '../repositories/clusters';
import { deleteS3CredentialsOfUser } from '../repositories/s3-credentials';
import { deleteApplicationCredentialsOfUser } from '../repositories/application-credentials';
import type { ListQuery, Page } from '../repositories/list-types';
import {
  createStorageUser,
  createStorageUsersSkippingExisting,
  deleteStorageUser,
  getStorageUser,
  getStorageUserView,
  listStorageUsers,
  updateStorageUser,
  viewsOf,
  type StorageUserView,
} from '../repositories/storage-users';
import { wantQuotas } from '../repositories/quotas';
import { applicationCredentialJson, s3CredentialJson, userJson } from '../resources/representations';
import { auditActorOf, type Acting } from './context';
import { canSeeCluster, requireWriter, requireWriterOn, visibleClusters } from './policy';
import { s3CredentialTarget } from './s3-credentials';
import { applicationCredentialTarget } from './application-credentials';
import { checkedQuotas } from './quotas';
import { quotaChanged } from './quota-wake';

export type PasswordHasher = (password: string) => Promise<string>;

/** What the users resource declares its quota-state filters with (routes reach repositories through here). */
export { QUOTA_STATE_ALIAS } from '../repositories/storage-users';
export { QUOTA_STATUSES } from '../repositories/quotas';

export const userTarget = (u: Pick<StorageUser, 'id' | 'username'>): AuditTarget => ({
  type: 'users',
  id: u.id,
  name: u.username,
  uri: userUri(u.id),
});

const notFound = (raw: unknown) => errors.notFound(`No user with id '${escapeHtml(String(raw))}'.`);

/** The user `raw` names, if the operator may see its cluster; anything else is simply not found. */
async function findVisible<U extends { clusterId: number }>(
  db: Db,
  acting: Acting,
  raw: string | undefined,
  read: (db: Db, id: string) => Promise<U | null>,
): Promise<U> {
  const id = parseBigId(raw);
  const user = id === null ? null : await read(db, id);
  if (!user || !canSeeCluster(acting.operator, user.clusterId)) throw notFound(raw);
  return user;
}

/**
 * A user as the API shows it: with where its quotas stand in Swift and its latest storage sample,
 * read with the user (see StorageUserView).
 */
export type UserView = StorageUserView;

export async function list(db: Db, acting: Acting, query: ListQuery): Promise<Page<UserView>> {
  return listStorageUsers(db, query, visibleClusters(acting.operator));
}

export async function show(db: Db, acting: Acting, rawId: string | undefined): Promise<UserView> {
  return findVisible(db, acting, rawId, getStorageUserView);
}

/** The cluster `ref` names, if the operator may write to it. */
async function writableCluster(db: Db, acting: Acting, ref: number | string) {
  const clusterId = clusterIdFromRef(ref);
  const cluster = clusterId === null ? null : await getCluster(db, clusterId);
  if (!cluster || !canSeeCluster(acting.operator, cluster.id)) {
    throw errors.invalidInput(
      `Could not find the provided clusters object via resource URI '${escapeHtml(String(ref))}'.`,
    );
  }
  requireWriterOn(acting.operator, cluster.id);
  return cluster;
}

export interface BulkOutcome {
  created: UserView[];
  /** Those whose name was taken in their cluster (by an existing user or earlier in the list). */
  skipped: Array<{ user: string; clusterId: number }>;
}

/**
 * Creates many users with existing hashes (an import) in one transaction, each with its own audit
 * record; a name already taken is skipped and reported, so an import can be run again.
 */
export async function createMany(
  db: Db,
  acting: Acting,
  inputOf: () => Promise<UserBulkCreateInput>,
): Promise<BulkOutcome> {
  requireWriter(acting.operator);
  const { objects } = await inputOf();
  const clusters = new Map<string, Awaited<ReturnType<typeof writableCluster>>>();
  for (const o of objects) {
    const key = String(o.cluster);
    if (!clusters.has(key)) clusters.set(key, await writableCluster(db, acting, o.cluster));
  }
  // Imported users get their cluster's default quotas, as users created one by one do.
  const wanted = objects.map((o) => {
    const cluster = clusters.get(String(o.cluster))!;
    return {
      clusterId: cluster.id,
      username: o.user,
      passwordHash: o.password_hash,
      isSuperuser: o.is_superuser,
      enabled: o.enabled,
      tempauthUser: o.tempauth_user ?? null,
      quotas: cluster.defaultQuotas,
    };
  });
  const created = await withDbErrors(() =>
    db.transaction(async (trx) => {
      const rows = await createStorageUsersSkippingExisting(trx, wanted);
      for (const u of rows)
        if (Object.values(u.quotas).some((v) => v !== null)) await wantQuotas(trx, u.id, u.clusterId);
      await recordAudits(
        trx,
        auditActorOf(acting),
        rows.map((u) => ({ action: 'create', target: userTarget(u), before: null, after: userJson(u) })),
      );
      // Read inside the transaction: once it commits, nothing can fail an acknowledged write.
      return viewsOf(trx, rows);
    }),
  );
  if (created.some((u) => Object.values(u.quotas).some((v) => v !== null))) quotaChanged(db);
  const made = new Set(created.map((u) => `${u.clusterId}\0${u.username}`));
  const skipped = wanted
    .filter((w) => !made.delete(`${w.clusterId}\0${w.username}`))
    .map((w) => ({ user: w.username, clusterId: w.clusterId }));
  return { created, skipped };
}

/** Inputs come as functions so a reader is refused before the body is read (see services/clusters). */
export async function create(
  db: Db,
  acting: Acting,
  inputOf: () => Promise<UserCreateInput>,
  hashPassword: PasswordHasher,
): Promise<{ user: UserView; input: UserCreateInput }> {
  const op = acting.operator;
  requireWriter(op);
  const input = await inputOf();
  const cluster = await writableCluster(db, acting, input.cluster);
  // The quotas sent, checked; the cluster's defaults for those not sent.
  const quotas = { ...cluster.defaultQuotas, ...(await checkedQuotas(db, cluster, quotasOfInput(input))) };
  // An imported user's hash was validated (an accepted scheme); it is stored as it is.
  const passwordHash = input.password_hash ?? (await hashPassword(input.password));
  const hasQuota = Object.values(quotas).some((v) => v !== null);
  const user = await withDbErrors(() =>
    db.transaction(async (trx) => {
      const created = await createStorageUser(
        trx,
        {
          clusterId: cluster.id,
          username: input.user,
          passwordHash,
          isSuperuser: input.is_superuser,
          enabled: input.enabled,
          tempauthUser: input.tempauth_user ?? null,
          quotas,
        },
        cluster.name,
      );
      if (hasQuota) await wantQuotas(trx, created.id, cluster.id);
      await recordAudit(trx, auditActorOf(acting), {
        action: 'create',
        target: userTarget(created),
        before: null,
        after: userJson(created),
      });
      // Read inside the transaction: a 503 after the commit would report a write that was made.
      return (await viewsOf(trx, [created]))[0]!;
    }),
  );
  if (hasQuota) quotaChanged(db);
  return { user, input };
}

export async function update(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  patchOf: (current: StorageUser) => Promise<UserPatchInput>,
  hashPassword: PasswordHasher,
): Promise<{ user: UserView; patch: UserPatchInput }> {
  requireWriter(acting.operator);
  const existing = await findVisible(db, acting, rawId, getStorageUser);
  requireWriterOn(acting.operator, existing.clusterId);
  const patch = await patchOf(existing);
  const sent = quotasOfInput(patch);
  const cluster = Object.keys(sent).length > 0 ? await getCluster(db, existing.clusterId) : null;
  const quotas = cluster ? await checkedQuotas(db, cluster, sent) : undefined;
  const passwordHash = patch.password === undefined ? undefined : await hashPassword(patch.password);
  let quotasChanged = false;
  const user = await withDbErrors(() =>
    db.transaction(async (trx) => {
      const before = await getStorageUser(trx, existing.id, true);
      const after =
        before &&
        (await updateStorageUser(trx, before.id, {
          passwordHash,
          isSuperuser: patch.is_superuser,
          enabled: patch.enabled,
          quotas,
        }));
      if (!before || !after) throw notFound(existing.id);
      quotasChanged = !sameQuotas(before.quotas, after.quotas);
      if (quotasChanged) await wantQuotas(trx, after.id, after.clusterId);
      // The password itself is never recorded, only that it changed.
      const changed = patch.password === undefined ? {} : { password_changed: true };
      await recordAudit(trx, auditActorOf(acting), {
        action: 'update',
        target: userTarget(after),
        before: userJson(before),
        after: { ...userJson(after), ...changed },
      });
      return (await viewsOf(trx, [after]))[0]!;
    }),
  );
  if (quotasChanged) quotaChanged(db);
  return { user, patch };
}

export async function remove(db: Db, acting: Acting, rawId: string | undefined): Promise<void> {
  requireWriter(acting.operator);
  const existing = await findVisible(db, acting, rawId, getStorageUser);
  requireWriterOn(acting.operator, existing.clusterId);
  await withDbErrors(() =>
    db.transaction(async (trx) => {
      // Its S3 credentials go with it, each with its own audit record (access key, never the secret).
      const credentials = await deleteS3CredentialsOfUser(trx, existing.id);
      // Its application credentials too, likewise.
      const appCredentials = await deleteApplicationCredentialsOfUser(trx, existing.id);
      const deleted = await deleteStorageUser(trx, existing.id);
      if (!deleted) throw notFound(existing.id);
      const actor = auditActorOf(acting);
      for (const c of credentials) {
        await recordAudit(trx, actor, {
          action: 'delete',
          target: s3CredentialTarget(c),
          before: s3CredentialJson(c),
          after: null,
        });
      }
      for (const c of appCredentials) {
        await recordAudit(trx, actor, {
          action: 'delete',
          target: applicationCredentialTarget(c),
          before: applicationCredentialJson(c),
          after: null,
        });
      }
      await recordAudit(trx, actor, {
        action: 'delete',
        target: userTarget(deleted),
        before: userJson(deleted),
        after: null,
      });
    }),
  );
}
