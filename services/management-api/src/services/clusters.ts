import {
  errors,
  escapeHtml,
  QUOTA_FIELDS,
  quotasOfInput,
  type Cluster,
  type ClusterCreateInput,
  type ClusterPatchInput,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { recordAudit, type AuditTarget } from '../repositories/audit';
import {
  countClusters,
  createCluster,
  deleteCluster,
  findClusterByName,
  getCluster,
  listClusters,
  updateCluster,
} from '../repositories/clusters';
import type { ListQuery, Page } from '../repositories/list-types';
import { healthStatusOf } from '../repositories/health';
import { swiftInfosOf } from '../repositories/quotas';
import { quotaBytesPolicyTotalsOf, quotaBytesTotalsOf } from '../repositories/quota-usage';
import { clusterJson, type ClusterShown } from '../resources/representations';
import { clusterUri, parseIntId } from '../resources/uris';
import { auditActorOf, type Acting } from './context';
import { canSeeCluster, requireGlobalAdmin, visibleClusters } from './policy';
import { checkedQuotas } from './quotas';

export const clusterTarget = (c: Pick<Cluster, 'id' | 'name'>): AuditTarget => ({
  type: 'clusters',
  id: c.id,
  name: c.name,
  uri: clusterUri(c.id),
});

const notFound = (raw: unknown) => errors.notFound(`No cluster with id '${escapeHtml(String(raw))}'.`);

/**
 * The cluster a path names, if `op` may see it; a cluster hidden from the operator is simply not
 * found, so restricted operators cannot learn which ids exist.
 */
export async function findVisibleCluster(
  db: Db,
  op: Acting['operator'] | null,
  raw: string | undefined,
): Promise<Cluster> {
  const id = parseIntId(raw);
  const cluster = id === null || (op && !canSeeCluster(op, id)) ? null : await getCluster(db, id);
  if (!cluster) throw notFound(raw);
  return cluster;
}

/**
 * A cluster as the API shows it: with what its Swift's /info said (null: not read yet) and its
 * users' byte quotas added up (null: no user has one).
 */
export type ClusterView = Cluster & ClusterShown;

async function withSwiftInfo(db: Db, clusters: Cluster[]): Promise<ClusterView[]> {
  const ids = clusters.map((c) => c.id);
  const [infos, totals, policyTotals, health] = [
    await swiftInfosOf(db, ids),
    await quotaBytesTotalsOf(db, ids),
    await quotaBytesPolicyTotalsOf(db, ids),
    await healthStatusOf(db, ids),
  ];
  return clusters.map((c) => ({
    ...c,
    swiftInfo: infos.get(c.id) ?? null,
    quotaBytesTotal: totals.get(c.id) ?? null,
    quotaBytesPolicyTotal: policyTotals.get(c.id) ?? null,
    health: health.get(c.id) ?? 'unknown',
  }));
}

export async function list(db: Db, acting: Acting, query: ListQuery): Promise<Page<ClusterView>> {
  const page = await listClusters(db, query, visibleClusters(acting.operator));
  return { total: page.total, rows: await withSwiftInfo(db, page.rows) };
}

export async function show(db: Db, acting: Acting, rawId: string | undefined): Promise<ClusterView> {
  return (await withSwiftInfo(db, [await findVisibleCluster(db, acting.operator, rawId)]))[0]!;
}

/** `body` with its default quotas checked as a user's would be (policies named as the cluster names them). */
async function withCheckedDefaults<T extends ClusterPatchInput>(
  db: Db,
  cluster: { id: number; name: string },
  body: T,
): Promise<T> {
  const sent = quotasOfInput(body, 'default_');
  if (Object.keys(sent).length === 0) return body;
  const checked = await checkedQuotas(db, cluster, sent, 'default_');
  const fields = Object.entries(QUOTA_FIELDS).filter(([, key]) => checked[key] !== undefined);
  return { ...body, ...Object.fromEntries(fields.map(([field, key]) => [`default_${field}`, checked[key]])) };
}

/** A cluster by its name, as commands name it; null when there is none or the operator may not see it. */
export async function findByName(db: Db, acting: Acting, name: string): Promise<Cluster | null> {
  const cluster = await findClusterByName(db, name);
  return cluster && canSeeCluster(acting.operator, cluster.id) ? cluster : null;
}

/** The write and its audit record, in the caller's transaction. */
async function createAudited(trx: Db, acting: Acting, input: ClusterCreateInput): Promise<Cluster> {
  const created = await createCluster(trx, input);
  await recordAudit(trx, auditActorOf(acting), {
    action: 'create',
    target: clusterTarget(created),
    before: null,
    after: clusterJson(created),
  });
  return created;
}

async function updateAudited(
  trx: Db,
  acting: Acting,
  before: Cluster,
  patch: ClusterPatchInput,
): Promise<Cluster | null> {
  const after = await updateCluster(trx, before.id, patch);
  if (after)
    await recordAudit(trx, auditActorOf(acting), {
      action: 'update',
      target: clusterTarget(after),
      before: clusterJson(before),
      after: clusterJson(after),
    });
  return after;
}

/**
 * Inputs come as functions so the permission check runs before the request body is even read:
 * a reader gets 403 whatever it sends.
 */
export async function create(db: Db, acting: Acting, inputOf: () => Promise<ClusterCreateInput>): Promise<ClusterView> {
  requireGlobalAdmin(acting.operator);
  // A new cluster has reported no policies and no /info yet: per-policy defaults come later.
  const raw = await inputOf();
  const input = await withCheckedDefaults(db, { id: 0, name: raw.name }, raw);
  const created = await withDbErrors(() => db.transaction((trx) => createAudited(trx, acting, input)));
  return { ...created, swiftInfo: null, quotaBytesTotal: null, quotaBytesPolicyTotal: null, health: 'unknown' };
}

/**
 * First-start setup's default cluster: created only while there is no cluster at all (checked in
 * the same transaction). Null when one exists.
 */
export async function createIfNone(db: Db, acting: Acting, input: ClusterCreateInput): Promise<Cluster | null> {
  requireGlobalAdmin(acting.operator);
  return withDbErrors(() =>
    db.transaction(async (trx) => ((await countClusters(trx)) === 0 ? createAudited(trx, acting, input) : null)),
  );
}

export type EnsureOutcome = 'created' | 'updated' | 'unchanged';

/**
 * A declared cluster (the migrate job's --cluster): created when missing, its URLs and region
 * brought to the declared ones when they differ, left alone otherwise. Each change is audited.
 */
export async function ensure(
  db: Db,
  acting: Acting,
  wanted: ClusterCreateInput,
): Promise<{ cluster: Cluster; outcome: EnsureOutcome }> {
  requireGlobalAdmin(acting.operator);
  return withDbErrors(() =>
    db.transaction(async (trx) => {
      const found = await findClusterByName(trx, wanted.name);
      const before = found && (await getCluster(trx, found.id, true));
      if (!before) return { cluster: await createAudited(trx, acting, wanted), outcome: 'created' as const };
      if (
        before.authUrl === wanted.auth_url &&
        before.storageUrl === wanted.storage_url &&
        before.region === wanted.region
      ) {
        return { cluster: before, outcome: 'unchanged' as const };
      }
      const after = await updateAudited(trx, acting, before, {
        auth_url: wanted.auth_url,
        storage_url: wanted.storage_url,
        region: wanted.region,
      });
      if (!after) throw notFound(before.id);
      return { cluster: after, outcome: 'updated' as const };
    }),
  );
}

/**
 * `patchOf` turns the request body into a patch once the current row is known (read-only fields sent back unchanged are
 * dropped).
 */
export async function update(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  patchOf: (current: Cluster) => Promise<ClusterPatchInput>,
): Promise<ClusterView> {
  requireGlobalAdmin(acting.operator);
  const cluster = await findVisibleCluster(db, null, rawId);
  const patch = await withCheckedDefaults(db, cluster, await patchOf(cluster));
  const updated = await withDbErrors(() =>
    db.transaction(async (trx) => {
      const before = await getCluster(trx, cluster.id, true);
      const after = before && (await updateAudited(trx, acting, before, patch));
      if (!after) throw notFound(rawId);
      // Read inside the transaction: once it commits, nothing can fail an acknowledged write.
      return (await withSwiftInfo(trx, [after]))[0]!;
    }),
  );
  return updated;
}

export async function remove(db: Db, acting: Acting, rawId: string | undefined): Promise<void> {
  requireGlobalAdmin(acting.operator);
  const cluster = await findVisibleCluster(db, null, rawId);
  await withDbErrors(() =>
    db.transaction(async (trx) => {
      const deleted = await deleteCluster(trx, cluster.id);
      if (!deleted) throw notFound(rawId);
      await recordAudit(trx, auditActorOf(acting), {
        action: 'delete',
        target: clusterTarget(deleted),
        before: clusterJson(deleted),
        after: null,
      });
    }),
  );
}
