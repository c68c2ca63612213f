import { Router, type RequestHandler } from 'express';
import { emptyBodySchema, errors, generateApiKey, hashApiKey, operatorCreateSchema, operatorPatchSchema, validate, type Operator, type OperatorCreateInput, type OperatorPatchInput, escapeHtml } from '@cairn/domain';
import type { Db } from '../db/database';
import { operatorOf } from '../http/auth';
import { requireGlobalAdmin } from '../services/policy';
import { parseBody } from '../http/body';
import { dropUnchangedReadOnly, sameId, sameText, sameUri, type SameAs } from '../http/read-only';
import { EXACT_ONLY, INT4_MAX, NUMBER_LOOKUPS, STRING_LOOKUPS, type ResourceDef } from '../http/resource';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { API_ROOT, apiKeyUri, operatorUri, parseBigId, parseIntId } from '../http/uris';
import {
  addApiKey,
  countAdmins,
  deleteApiKey,
  deleteOperator,
  getOperator,
  listApiKeys,
  listOperators,
  updateOperator,
} from '../repositories/operators';
import { recordAudit } from '../repositories/audit';
import { actorOf, operatorTarget } from './audit';
import { createOperatorWithKey, resolveClusterRefs } from '../services/operators';

export { createOperatorWithKey, resolveClusterRefs } from '../services/operators';
import { sendList } from './list';
import { apiKeyJson, operatorJson } from './representations';

export const operatorsResource: ResourceDef = {
  name: 'operators',
  alias: 'o',
  listMethods: ['GET', 'POST'],
  detailMethods: ['GET', 'PATCH', 'DELETE'],
  fields: {
    id: { type: 'integer', help: 'Integer data. Ex: 2673', readonly: true, unique: true, column: 'id', filtering: NUMBER_LOOKUPS, max: INT4_MAX, ordering: true },
    name: { type: 'string', help: 'Operator name used in "Authorization: ApiKey <name>:<key>". Cannot change.', unique: true, column: 'name', filtering: STRING_LOOKUPS, ordering: true },
    role: { type: 'string', help: "'admin' (every operation) or 'reader' (GET only).", column: 'role', filtering: EXACT_ONLY, ordering: true },
    clusters: { type: 'list', help: 'Cluster resource URIs this operator is limited to; empty means every cluster.', default: [] },
    resource_uri: { type: 'string', help: 'URI of this operator.', readonly: true },
  },
};

const LIST = `${API_ROOT}/operators/`;

/** What a client may send back unchanged from a GET (see dropUnchangedReadOnly). */
const operatorReadOnly = (o: Operator): Record<string, SameAs> => ({
  id: sameId(o.id),
  name: sameText(o.name),
  resource_uri: sameUri(operatorUri(o.id)),
});

const isGlobalAdmin = (o: Operator) => o.role === 'admin' && o.clusterIds.length === 0;


/** `onChange` runs after every write, before the answer: it forgets remembered credentials. */
export function operatorsRouter(db: Db, auth: RequestHandler, onChange: () => void): Router {
  const router = Router();

  const findOperator = async (raw: string | undefined): Promise<Operator> => {
    const id = parseIntId(raw);
    const op = id === null ? null : await getOperator(db, id);
    if (!op) throw errors.notFound(`No operator with id '${escapeHtml(String(raw))}'.`);
    return op;
  };

  /** Refuses a change that would leave no admin able to manage clusters and operators. */
  const keepOneGlobalAdmin = async (trx: Db, before: Operator) => {
    if (isGlobalAdmin(before) && (await countAdmins(trx)) === 0) {
      throw errors.inUse('This is the last admin operator with access to every cluster; create another one first.');
    }
  };

  resourceRoute(router, '/operators/', auth, {
    GET: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      await sendList(req, res, operatorsResource, LIST, (q) => listOperators(db, q), operatorJson);
    },
    POST: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      const input = validate<OperatorCreateInput>(operatorCreateSchema, await parseBody(req));
      const clusterIds = await resolveClusterRefs(db, input.clusters);
      const { operator, key } = await db.transaction((trx) => createOperatorWithKey(trx, { name: input.name, role: input.role, clusterIds }, actorOf(req, res)));
      onChange();
      res.set('Location', operatorUri(operator.id));
      send(req, res, 201, { ...operatorJson(operator), api_key: key });
    },
  });

  resourceRoute(router, '/operators/:id/', auth, {
    GET: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      send(req, res, 200, operatorJson(await findOperator(req.params.id)));
    },
    PATCH: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      const found = await findOperator(req.params.id);
      const patch = validate<OperatorPatchInput>(operatorPatchSchema, dropUnchangedReadOnly(await parseBody(req), operatorReadOnly(found)));
      const clusterIds = patch.clusters ? await resolveClusterRefs(db, patch.clusters) : undefined;
      const updated = await db.transaction(async (trx) => {
        const before = await getOperator(trx, found.id, true);
        const result = before && (await updateOperator(trx, before.id, { role: patch.role, clusterIds }));
        if (!before || !result) throw errors.notFound(`No operator with id '${escapeHtml(String(req.params.id))}'.`);
        await keepOneGlobalAdmin(trx, before);
        await recordAudit(trx, actorOf(req, res), { action: 'update', target: operatorTarget(result), before: operatorJson(before), after: operatorJson(result) });
        return result;
      });
      onChange();
      send(req, res, 202, operatorJson(updated));
    },
    DELETE: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      const found = await findOperator(req.params.id);
      await db.transaction(async (trx) => {
        const before = await getOperator(trx, found.id, true);
        const gone = before !== null && (await deleteOperator(trx, before.id));
        if (!before || !gone) throw errors.notFound(`No operator with id '${escapeHtml(String(req.params.id))}'.`);
        await keepOneGlobalAdmin(trx, before);
        await recordAudit(trx, actorOf(req, res), { action: 'delete', target: operatorTarget(before), before: operatorJson(before), after: null });
      });
      onChange();
      res.status(204).end();
    },
  });

  resourceRoute(router, '/operators/:id/keys/', auth, {
    GET: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      const op = await findOperator(req.params.id);
      const keys = await listApiKeys(db, op.id);
      send(req, res, 200, {
        meta: { limit: keys.length, next: null, offset: 0, previous: null, total_count: keys.length },
        objects: keys.map((k) => apiKeyJson(k)),
      });
    },
    POST: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      const op = await findOperator(req.params.id);
      validate(emptyBodySchema, await parseBody(req));
      const key = generateApiKey();
      const info = await db.transaction(async (trx) => {
        const added = await addApiKey(trx, op.id, hashApiKey(key));
        const target = { ...operatorTarget(op), uri: apiKeyUri(op.id, added.id) };
        await recordAudit(trx, actorOf(req, res), { action: 'add_key', target, before: null, after: apiKeyJson(added) });
        return added;
      });
      onChange();
      res.set('Location', apiKeyUri(op.id, info.id));
      send(req, res, 201, apiKeyJson(info, key));
    },
  });

  resourceRoute(router, '/operators/:id/keys/:keyId/', auth, {
    DELETE: async (req, res) => {
      requireGlobalAdmin(operatorOf(res));
      const op = await findOperator(req.params.id);
      const keyId = parseBigId(req.params.keyId);
      await db.transaction(async (trx) => {
        const deleted = keyId === null ? null : await deleteApiKey(trx, op.id, keyId);
        if (!deleted) throw errors.notFound(`No API key with id '${escapeHtml(String(req.params.keyId))}' for this operator.`);
        const target = { ...operatorTarget(op), uri: apiKeyUri(op.id, deleted.id) };
        await recordAudit(trx, actorOf(req, res), { action: 'delete_key', target, before: apiKeyJson(deleted), after: null });
      });
      onChange();
      res.status(204).end();
    },
  });

  return router;
}
