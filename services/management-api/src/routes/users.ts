import { Router, type RequestHandler } from 'express';
import { errors, validate, userCreateSchema, userPatchSchema, type UserCreateInput, type UserPatchInput, escapeHtml } from '@cairn/domain';
import type { Db } from '../db/database';
import { operatorOf } from '../http/auth';
import { canSeeCluster, requireWriter, requireWriterOn, visibleClusters } from '../services/policy';
import { parseBody } from '../http/body';
import { dropUnchangedReadOnly, sameCluster, sameId, sameText, sameUri, type SameAs } from '../http/read-only';
import { EXACT_ONLY, INT8_MAX, NUMBER_LOOKUPS, RELATED_LOOKUPS, STRING_LOOKUPS, type ResourceDef } from '../http/resource';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { API_ROOT, clusterIdFromRef, parseBigId, userUri } from '../http/uris';
import { getCluster } from '../repositories/clusters';
import { createStorageUser, deleteStorageUser, getStorageUser, getStorageUserSummary, listStorageUsers, updateStorageUser } from '../repositories/storage-users';
import { recordAudit } from '../repositories/audit';
import { actorOf, userTarget } from './audit';
import { clustersResource } from './clusters';
import { sendList } from './list';
import { userJson, userJsonText } from './representations';

export const usersResource: ResourceDef = {
  name: 'users',
  alias: 'u',
  listMethods: ['GET', 'POST'],
  detailMethods: ['GET', 'PATCH', 'DELETE'],
  fields: {
    id: { type: 'string', help: 'Unicode string data. Ex: "12" (a bigint id, always a string)', readonly: true, unique: true, column: 'id', filtering: NUMBER_LOOKUPS, max: INT8_MAX, ordering: true },
    cluster: {
      type: 'related',
      help: 'The cluster this user logs in to, as a resource URI. Cannot change.',
      column: 'cluster_id',
      filtering: RELATED_LOOKUPS,
      ordering: true,
      related: { resource: () => clustersResource, alias: 'c', toId: (v) => (clusterIdFromRef(v) === null ? null : String(clusterIdFromRef(v))) },
    },
    user: { type: 'string', help: "Login name, 1-251 printable ASCII or Latin-1 characters without '/' or ':', so that a stock Swift can create and use the account AUTH_<user>. Cannot change.", column: 'username', filtering: STRING_LOOKUPS, ordering: true },
    password: { type: 'string', help: 'At least 20 characters. Write-only: shown only in the response that set it.' },
    is_superuser: { type: 'boolean', help: 'Superusers get ResellerAdmin: access to every account of the cluster.', default: false, column: 'is_superuser', filtering: EXACT_ONLY, ordering: true },
    enabled: { type: 'boolean', help: 'Disabled users cannot log in; their tokens stop working at once.', default: true, column: 'enabled', filtering: EXACT_ONLY, ordering: true },
    resource_uri: { type: 'string', help: 'URI of this user.', readonly: true },
  },
};

const LIST = `${API_ROOT}/users/`;

/** What a client may send back unchanged from a GET (see dropUnchangedReadOnly). */
const userReadOnly = (u: { id: string; clusterId: number; username: string }): Record<string, SameAs> => ({
  id: sameId(u.id),
  cluster: sameCluster(u.clusterId),
  user: sameText(u.username),
  resource_uri: sameUri(userUri(u.id)),
});

export type PasswordHasher = (password: string) => Promise<string>;

export function usersRouter(db: Db, auth: RequestHandler, hashPassword: PasswordHasher): Router {
  const router = Router();

  /** The user `raw` names, if the operator may see it: whole (`getStorageUser`) or what a GET shows. */
  const findVisible = async <U extends { clusterId: number }>(
    raw: string | undefined,
    canSee: (clusterId: number) => boolean,
    read: (db: Db, id: string) => Promise<U | null>,
  ): Promise<U> => {
    const id = parseBigId(raw);
    const user = id === null ? null : await read(db, id);
    if (!user || !canSee(user.clusterId)) throw errors.notFound(`No user with id '${escapeHtml(String(raw))}'.`);
    return user;
  };

  resourceRoute(router, '/users/', auth, {
    GET: (req, res) => sendList(req, res, usersResource, LIST, (q) => listStorageUsers(db, q, visibleClusters(operatorOf(res))), (u) => userJson(u), userJsonText),
    POST: async (req, res) => {
      const op = operatorOf(res);
      requireWriter(op);
      const input = validate<UserCreateInput>(userCreateSchema, await parseBody(req));
      const clusterId = clusterIdFromRef(input.cluster);
      const cluster = clusterId === null ? null : await getCluster(db, clusterId);
      if (!cluster || !canSeeCluster(op, cluster.id)) {
        throw errors.invalidInput(`Could not find the provided clusters object via resource URI '${escapeHtml(String(input.cluster))}'.`);
      }
      requireWriterOn(op, cluster.id);
      const passwordHash = await hashPassword(input.password);
      const user = await db.transaction(async (trx) => {
        const created = await createStorageUser(
          trx,
          { clusterId: cluster.id, username: input.user, passwordHash, isSuperuser: input.is_superuser, enabled: input.enabled },
          cluster.name,
        );
        await recordAudit(trx, actorOf(req, res), { action: 'create', target: userTarget(created), before: null, after: userJson(created) });
        return created;
      });
      res.set('Location', userUri(user.id));
      send(req, res, 201, userJson(user, input.password));
    },
  });

  // Routing is not strict, so this also serves /users/<id> without the slash (the controller's docs
  // DELETE that way).
  resourceRoute(router, '/users/:id/', auth, {
    GET: async (req, res) => {
      const op = operatorOf(res);
      send(req, res, 200, userJson(await findVisible(req.params.id, (c) => canSeeCluster(op, c), getStorageUserSummary)));
    },
    PATCH: async (req, res) => {
      const op = operatorOf(res);
      requireWriter(op);
      const existing = await findVisible(req.params.id, (c) => canSeeCluster(op, c), getStorageUser);
      requireWriterOn(op, existing.clusterId);
      const patch = validate<UserPatchInput>(userPatchSchema, dropUnchangedReadOnly(await parseBody(req), userReadOnly(existing)));
      const passwordHash = patch.password === undefined ? undefined : await hashPassword(patch.password);
      const updated = await db.transaction(async (trx) => {
        const before = await getStorageUser(trx, existing.id, true);
        const after = before && (await updateStorageUser(trx, before.id, { passwordHash, isSuperuser: patch.is_superuser, enabled: patch.enabled }));
        if (!before || !after) throw errors.notFound(`No user with id '${escapeHtml(existing.id)}'.`);
        // The password itself is never recorded, only that it changed.
        const changed = patch.password === undefined ? {} : { password_changed: true };
        await recordAudit(trx, actorOf(req, res), { action: 'update', target: userTarget(after), before: userJson(before), after: { ...userJson(after), ...changed } });
        return after;
      });
      send(req, res, 202, userJson(updated, patch.password));
    },
    DELETE: async (req, res) => {
      const op = operatorOf(res);
      requireWriter(op);
      const existing = await findVisible(req.params.id, (c) => canSeeCluster(op, c), getStorageUser);
      requireWriterOn(op, existing.clusterId);
      await db.transaction(async (trx) => {
        const deleted = await deleteStorageUser(trx, existing.id);
        if (!deleted) throw errors.notFound(`No user with id '${escapeHtml(existing.id)}'.`);
        await recordAudit(trx, actorOf(req, res), { action: 'delete', target: userTarget(deleted), before: userJson(deleted), after: null });
      });
      res.status(204).end();
    },
  });

  return router;
}
