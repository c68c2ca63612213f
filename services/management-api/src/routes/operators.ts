import { Router, type RequestHandler } from 'express';
import {
  emptyBodySchema,
  operatorCreateSchema,
  operatorPatchSchema,
  validate,
  type Operator,
  type OperatorCreateInput,
  type OperatorPatchInput,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { parseBody } from '../http/body';
import { dropUnchangedReadOnly, sameId, sameText, sameUri, type SameAs } from '../http/read-only';
import { EXACT_ONLY, NUMBER_LOOKUPS, STRING_LOOKUPS, type ResourceDef } from '../http/resource';
import { INT4_MAX, API_ROOT, apiKeyUri, operatorUri } from '../resources/uris';
import { send, sendSecret } from '../http/respond';
import { resourceRoute } from '../http/routing';
import * as operators from '../services/operators';
import { actingOf } from '../http/acting';
import { sendList } from './list';
import { apiKeyJson, operatorJson } from '../resources/representations';

export { createOperatorWithKey, resolveClusterRefs } from '../services/operators';

export const operatorsResource: ResourceDef = {
  name: 'operators',
  alias: 'o',
  listMethods: ['GET', 'POST'],
  detailMethods: ['GET', 'PATCH', 'DELETE'],
  fields: {
    id: {
      type: 'integer',
      help: 'Integer data. Ex: 2673',
      readonly: true,
      unique: true,
      column: 'id',
      filtering: NUMBER_LOOKUPS,
      max: INT4_MAX,
      ordering: true,
    },
    name: {
      type: 'string',
      help: 'Operator name used in "Authorization: ApiKey <name>:<key>". Cannot change.',
      unique: true,
      column: 'name',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    role: {
      type: 'string',
      help: "'admin' (every operation) or 'reader' (GET only).",
      column: 'role',
      filtering: EXACT_ONLY,
      ordering: true,
    },
    clusters: {
      type: 'list',
      help: 'Cluster resource URIs this operator is limited to; empty means every cluster.',
      default: [],
    },
    resource_uri: { type: 'string', help: 'URI of this operator.', readonly: true },
  },
};

/**
 * An operator's API keys, as a list: paged like every list, by id; no filters, no ordering (the
 * keys themselves are never shown, only their ids and dates).
 */
export const apiKeysResource: ResourceDef = {
  name: 'keys',
  alias: 'k',
  listMethods: ['GET', 'POST'],
  detailMethods: ['DELETE'],
  fields: {
    id: { type: 'string', help: 'Id of the key (a bigint, always a string).', readonly: true, unique: true },
    created_at: { type: 'datetime', help: 'When the key was issued, ISO 8601 UTC.', readonly: true },
    operator: { type: 'string', help: 'URI of the operator the key belongs to.', readonly: true },
    resource_uri: { type: 'string', help: 'URI of this key.', readonly: true },
  },
};

const LIST = `${API_ROOT}/operators/`;

/** What a client may send back unchanged from a GET (see dropUnchangedReadOnly). */
const operatorReadOnly = (o: Operator): Record<string, SameAs> => ({
  id: sameId(o.id),
  name: sameText(o.name),
  resource_uri: sameUri(operatorUri(o.id)),
});

/** `onChange` runs after every write, before the answer: it forgets remembered credentials. */
export function operatorsRouter(db: Db, auth: RequestHandler, onChange: () => void): Router {
  const router = Router();

  resourceRoute(router, '/operators/', auth, {
    GET: async (req, res) => {
      const acting = actingOf(req, res);
      operators.authorizeRead(acting); // before the query string is parsed: a reader gets 403 whatever it sends
      await sendList(req, res, operatorsResource, LIST, (q) => operators.list(db, acting, q), operatorJson);
    },
    POST: async (req, res) => {
      const inputOf = async () =>
        validate<OperatorCreateInput>(operatorCreateSchema, await parseBody(req, operatorsResource));
      const { operator, key } = await operators.create(db, actingOf(req, res), inputOf);
      onChange();
      res.set('Location', operatorUri(operator.id));
      sendSecret(req, res, 201, { ...operatorJson(operator), api_key: key });
    },
  });

  resourceRoute(router, '/operators/:id/', auth, {
    GET: async (req, res) =>
      send(req, res, 200, operatorJson(await operators.show(db, actingOf(req, res), req.params.id))),
    PATCH: async (req, res) => {
      const patchOf = async (current: Operator) =>
        validate<OperatorPatchInput>(
          operatorPatchSchema,
          dropUnchangedReadOnly(await parseBody(req, operatorsResource), operatorReadOnly(current)),
        );
      const updated = await operators.update(db, actingOf(req, res), req.params.id, patchOf);
      onChange();
      send(req, res, 202, operatorJson(updated));
    },
    DELETE: async (req, res) => {
      await operators.remove(db, actingOf(req, res), req.params.id);
      onChange();
      res.status(204).end();
    },
  });

  resourceRoute(router, '/operators/:id/keys/', auth, {
    GET: async (req, res) => {
      const acting = actingOf(req, res);
      operators.authorizeRead(acting); // before the query string is parsed, as for the operators list
      const id = req.params.id;
      await sendList(
        req,
        res,
        apiKeysResource,
        `${operatorUri(Number(id))}keys/`,
        (q) => operators.listKeys(db, acting, id, q),
        (k) => apiKeyJson(k),
      );
    },
    POST: async (req, res) => {
      const checkBody = async () => void validate(emptyBodySchema, await parseBody(req));
      const { info, key } = await operators.addKey(db, actingOf(req, res), req.params.id, checkBody);
      onChange();
      res.set('Location', apiKeyUri(info.operatorId, info.id));
      sendSecret(req, res, 201, apiKeyJson(info, key));
    },
  });

  resourceRoute(router, '/operators/:id/keys/:keyId/', auth, {
    DELETE: async (req, res) => {
      await operators.removeKey(db, actingOf(req, res), req.params.id, req.params.keyId);
      onChange();
      res.status(204).end();
    },
  });

  return router;
}
