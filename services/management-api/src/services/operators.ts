import {
  errors,
  escapeHtml,
  generateApiKey,
  hashApiKey,
  type Operator,
  type OperatorCreateInput,
  type OperatorPatchInput,
  type OperatorRole,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { withDbErrors } from '../db/errors';
import { apiKeyUri, clusterIdFromRef, operatorUri, parseBigId, parseIntId } from '../resources/uris';
import { recordAudit, type AuditTarget } from '../repositories/audit';
import { getCluster } from '../repositories/clusters';
import type { ListQuery, Page } from '../repositories/list-types';
import {
  addApiKey,
  countAdmins,
  countUsableAdmins,
  createOperator,
  deleteApiKey,
  deleteOperator,
  getOperator,
  listApiKeys,
  listOperators,
  updateOperator,
  type ApiKeyInfo,
} from '../repositories/operators';
import { findByName as findClusterByName } from './clusters';
import { SYSTEM_ACTING, auditActorOf, type Acting } from './context';
import { requireGlobalAdmin, requireGlobalAdminToRead, requireStepUp } from './policy';
import { apiKeyJson, operatorJson } from '../resources/representations';

export const operatorTarget = (o: Pick<Operator, 'id' | 'name'>): AuditTarget => ({
  type: 'operators',
  id: o.id,
  name: o.name,
  uri: operatorUri(o.id),
});

export async function resolveClusterRefs(db: Db, refs: Array<number | string>): Promise<number[]> {
  const ids: number[] = [];
  for (const ref of refs) {
    const id = clusterIdFromRef(ref);
    if (id === null || !(await getCluster(db, id))) {
      throw errors.invalidInput(
        `Could not find the provided clusters object via resource URI '${escapeHtml(String(ref))}'.`,
      );
    }
    ids.push(id);
  }
  return ids;
}

/**
 * Create an operator with its first API key, inside the caller's transaction, and record it in the
 * audit trail as done by `acting` (the `cairn operator create` command when not given). The
 * caller has checked the permission.
 */
export async function createOperatorWithKey(
  db: Db,
  input: { name: string; role: 'admin' | 'reader'; clusterIds: number[]; key?: string },
  acting: Acting = SYSTEM_ACTING.cli,
) {
  const operator = await createOperator(db, input);
  const key = input.key ?? generateApiKey();
  const keyInfo = await addApiKey(db, operator.id, hashApiKey(key));
  await recordAudit(db, auditActorOf(acting), {
    action: 'create',
    target: operatorTarget(operator),
    before: null,
    after: { ...operatorJson(operator), api_keys: [apiKeyJson(keyInfo)] },
  });
  return { operator, key, keyInfo };
}

const isGlobalAdmin = (o: Operator) => o.role === 'admin' && o.clusterIds.length === 0;

/**
 * Whether a change gives the operator more than it had: a reader made admin, or clusters it could
 * not reach before (limited to fewer clusters, or to none, which means every cluster).
 */
export function widens(before: Operator, role: OperatorRole | undefined, clusterIds: number[] | undefined): boolean {
  if (before.role === 'reader' && role === 'admin') return true;
  if (clusterIds === undefined || before.clusterIds.length === 0) return false;
  return clusterIds.length === 0 || clusterIds.some((id) => !before.clusterIds.includes(id));
}

async function findOperator(db: Db, raw: string | undefined): Promise<Operator> {
  const id = parseIntId(raw);
  const op = id === null ? null : await getOperator(db, id);
  if (!op) throw errors.notFound(`No operator with id '${escapeHtml(String(raw))}'.`);
  return op;
}

const LAST_ADMIN =
  'This is the last admin operator with access to every cluster and an API key; create another one first.';
const LAST_ADMIN_KEY =
  'This is the last API key of the last admin operator with access to every cluster; add another key (POST /api/v1/operators/<id>/keys/) first.';

/**
 * Refuses a change that would leave no admin able to manage clusters and operators: one limited to
 * no cluster and holding an API key to sign in with. Called inside the change's transaction, after it.
 */
async function keepOneGlobalAdmin(trx: Db, before: Operator, message = LAST_ADMIN): Promise<void> {
  if (isGlobalAdmin(before) && (await countUsableAdmins(trx)) === 0) throw errors.inUse(message);
}

/** Managing operators needs an admin with access to every cluster; called before the query or body is read. */
export const authorize = (acting: Acting): void => requireGlobalAdmin(acting.operator);

/** Reading operators and their keys: the same admins, with a refusal that speaks of reading. */
export const authorizeRead = (acting: Acting): void => requireGlobalAdminToRead(acting.operator, 'the operators');

export async function list(db: Db, acting: Acting, query: ListQuery): Promise<Page<Operator>> {
  authorizeRead(acting);
  return listOperators(db, query);
}

export async function show(db: Db, acting: Acting, rawId: string | undefined): Promise<Operator> {
  authorizeRead(acting);
  return findOperator(db, rawId);
}

export async function create(db: Db, acting: Acting, inputOf: () => Promise<OperatorCreateInput>) {
  authorize(acting);
  requireStepUp(acting);
  const input = await inputOf();
  const clusterIds = await resolveClusterRefs(db, input.clusters);
  return withDbErrors(() =>
    db.transaction((trx) => createOperatorWithKey(trx, { name: input.name, role: input.role, clusterIds }, acting)),
  );
}

/**
 * `cairn operator create`: clusters as a person types them, an id (digits) or a name. The key is
 * returned once, here.
 */
export async function createWithClusterNames(
  db: Db,
  acting: Acting,
  input: { name: string; role: OperatorRole; clusters: string[] },
) {
  authorize(acting);
  const clusterIds: number[] = [];
  for (const ref of input.clusters) {
    const byId = /^\d+$/.test(ref);
    const cluster = byId ? await getCluster(db, Number(ref)) : await findClusterByName(db, acting, ref);
    if (!cluster) throw errors.invalidInput(byId ? `No cluster with id ${ref}.` : `No cluster named '${ref}'.`);
    clusterIds.push(cluster.id);
  }
  return withDbErrors(() =>
    db.transaction((trx) => createOperatorWithKey(trx, { name: input.name, role: input.role, clusterIds }, acting)),
  );
}

/**
 * First-start setup's admin: created only while no admin with access to every cluster exists
 * (checked in the same transaction), with `key` or a generated one. Null when there is one.
 */
export async function ensureFirstAdmin(db: Db, acting: Acting, input: { name: string; key?: string }) {
  authorize(acting);
  return withDbErrors(() =>
    db.transaction(async (trx) =>
      (await countAdmins(trx)) === 0
        ? createOperatorWithKey(trx, { name: input.name, role: 'admin', clusterIds: [], key: input.key }, acting)
        : null,
    ),
  );
}

export async function update(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  patchOf: (current: Operator) => Promise<OperatorPatchInput>,
): Promise<Operator> {
  authorize(acting);
  const found = await findOperator(db, rawId);
  const patch = await patchOf(found);
  const clusterIds = patch.clusters ? await resolveClusterRefs(db, patch.clusters) : undefined;
  return withDbErrors(() =>
    db.transaction(async (trx) => {
      const before = await getOperator(trx, found.id, true);
      // More power for an operator is a lasting credential too: from a console session, confirm it.
      if (before && widens(before, patch.role, clusterIds)) requireStepUp(acting);
      const result = before && (await updateOperator(trx, before.id, { role: patch.role, clusterIds }));
      if (!before || !result) throw errors.notFound(`No operator with id '${escapeHtml(String(rawId))}'.`);
      await keepOneGlobalAdmin(trx, before);
      await recordAudit(trx, auditActorOf(acting), {
        action: 'update',
        target: operatorTarget(result),
        before: operatorJson(before),
        after: operatorJson(result),
      });
      return result;
    }),
  );
}

export async function remove(db: Db, acting: Acting, rawId: string | undefined): Promise<void> {
  authorize(acting);
  const found = await findOperator(db, rawId);
  await withDbErrors(() =>
    db.transaction(async (trx) => {
      const before = await getOperator(trx, found.id, true);
      const gone = before !== null && (await deleteOperator(trx, before.id));
      if (!before || !gone) throw errors.notFound(`No operator with id '${escapeHtml(String(rawId))}'.`);
      await keepOneGlobalAdmin(trx, before);
      await recordAudit(trx, auditActorOf(acting), {
        action: 'delete',
        target: operatorTarget(before),
        before: operatorJson(before),
        after: null,
      });
    }),
  );
}

export async function listKeys(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  query: ListQuery,
): Promise<Page<ApiKeyInfo>> {
  authorizeRead(acting);
  const op = await findOperator(db, rawId);
  return listApiKeys(db, op.id, query);
}

/** The new key is returned once, here, and stored only as a hash. */
export async function addKey(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  checkBody: () => Promise<void>,
): Promise<{ info: ApiKeyInfo; key: string }> {
  authorize(acting);
  const op = await findOperator(db, rawId);
  requireStepUp(acting);
  await checkBody();
  const key = generateApiKey();
  const info = await withDbErrors(() =>
    db.transaction(async (trx) => {
      const added = await addApiKey(trx, op.id, hashApiKey(key));
      const target = { ...operatorTarget(op), uri: apiKeyUri(op.id, added.id) };
      await recordAudit(trx, auditActorOf(acting), {
        action: 'add_key',
        target,
        before: null,
        after: apiKeyJson(added),
      });
      return added;
    }),
  );
  return { info, key };
}

export async function removeKey(
  db: Db,
  acting: Acting,
  rawId: string | undefined,
  rawKeyId: string | undefined,
): Promise<void> {
  authorize(acting);
  const op = await findOperator(db, rawId);
  const keyId = parseBigId(rawKeyId);
  await withDbErrors(() =>
    db.transaction(async (trx) => {
      const deleted = keyId === null ? null : await deleteApiKey(trx, op.id, keyId);
      if (!deleted) throw errors.notFound(`No API key with id '${escapeHtml(String(rawKeyId))}' for this operator.`);
      await keepOneGlobalAdmin(trx, op, LAST_ADMIN_KEY);
      const target = { ...operatorTarget(op), uri: apiKeyUri(op.id, deleted.id) };
      await recordAudit(trx, auditActorOf(acting), {
        action: 'delete_key',
        target,
        before: apiKeyJson(deleted),
        after: null,
      });
    }),
  );
}
