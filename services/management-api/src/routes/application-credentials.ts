import { errors, escapeHtml } from '@cairn/domain';
import { Router, type RequestHandler } from 'express';
import type { Db } from '../db/database';
import { actingOf } from '../http/acting';
import { queryPairs } from '../http/filters';
import { EXACT_ONLY, RELATED_LOOKUPS, type Lookup, type ResourceDef } from '../http/resource';
import { send } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { applicationCredentialJson } from '../resources/representations';
import { API_ROOT, clusterIdFromRef, userIdFromRef } from '../resources/uris';
import * as applicationCredentials from '../services/application-credentials';
import { sendList } from './list';
import { usersResource } from './users';

/** What `user__…` may filter on: the user's id and exact name (as s3_credentials' owner filter). */
const ownerResource: ResourceDef = {
  ...usersResource,
  fields: { id: usersResource.fields.id!, user: { ...usersResource.fields.user!, filtering: ['exact', 'in'] } },
};

const TIME_LOOKUPS: readonly Lookup[] = ['exact', 'gt', 'gte', 'lt', 'lte'];

export const applicationCredentialsResource: ResourceDef = {
  name: 'application_credentials',
  alias: 'a',
  listMethods: ['GET'],
  detailMethods: ['GET', 'DELETE'],
  fields: {
    id: {
      type: 'string',
      help: 'Unicode string data. Ex: "5f7c…" (32 hex digits, Keystone\'s id)',
      readonly: true,
      unique: true,
      column: 'id',
      filtering: EXACT_ONLY.concat(['in']),
      ordering: true,
    },
    user: {
      type: 'related',
      help: 'The storage user who made the credential, as a resource URI.',
      readonly: true,
      column: 'storage_user_id',
      filtering: RELATED_LOOKUPS,
      ordering: true,
      related: { resource: () => ownerResource, alias: 'u', toId: (v) => userIdFromRef(v) },
    },
    cluster: {
      type: 'string',
      help: "The user's cluster, as a resource URI. Filter with ?cluster=<id or URI>.",
      readonly: true,
    },
    name: {
      type: 'string',
      help: 'The name its user gave it (unique per user).',
      readonly: true,
      column: 'name',
      filtering: EXACT_ONLY,
      ordering: true,
    },
    description: { type: 'string', help: 'What its user wrote about it.', readonly: true, nullable: true },
    expires_at: {
      type: 'datetime',
      help: 'When it stops working, ISO 8601 UTC; null: never.',
      readonly: true,
      nullable: true,
      column: 'expires_at',
      filtering: TIME_LOOKUPS.concat(['isnull']),
      ordering: true,
    },
    roles: {
      type: 'list',
      help: "The roles its tokens carry (swiftoperator, ResellerAdmin), a subset of its user's.",
      readonly: true,
    },
    unrestricted: {
      type: 'boolean',
      help: 'Whether its tokens may make further application or EC2 credentials.',
      readonly: true,
    },
    access_rules: {
      type: 'list',
      help: 'Keystone access rules ({id, service, method, path}) a Swift proxy enforces; empty: the whole account.',
      readonly: true,
    },
    created_at: {
      type: 'datetime',
      help: 'When it was made, ISO 8601 UTC.',
      readonly: true,
      column: 'created_at',
      filtering: TIME_LOOKUPS,
      ordering: true,
    },
    resource_uri: { type: 'string', help: 'URI of this credential.', readonly: true },
  },
};

const LIST = `${API_ROOT}/application_credentials/`;

/** `?cluster=` (an id or a cluster URI): the credentials of that cluster's users. */
function clusterParam(originalUrl: string): number | undefined {
  const values = queryPairs(originalUrl).filter(([k]) => k === 'cluster');
  if (values.length === 0) return undefined;
  const raw = values[values.length - 1]![1];
  const id = clusterIdFromRef(raw);
  if (id === null)
    throw errors.invalidInput(`Invalid cluster '${escapeHtml(raw)}': give a cluster id or its resource URI.`);
  return id;
}

/**
 * `/api/v1/application_credentials/`: operators list a user's application credentials and revoke
 * them. They are made by storage users through the gateway, so there is no POST or PATCH.
 */
export function applicationCredentialsRouter(db: Db, auth: RequestHandler): Router {
  const router = Router();
  resourceRoute(router, '/application_credentials/', auth, {
    GET: (req, res) => {
      const cluster = clusterParam(req.originalUrl);
      return sendList(
        req,
        res,
        applicationCredentialsResource,
        LIST,
        (q) => applicationCredentials.list(db, actingOf(req, res), q, cluster),
        (c) => applicationCredentialJson(c),
        undefined,
        ['cluster'],
      );
    },
  });
  resourceRoute(router, '/application_credentials/:id/', auth, {
    GET: async (req, res) =>
      send(
        req,
        res,
        200,
        applicationCredentialJson(await applicationCredentials.show(db, actingOf(req, res), req.params.id)),
      ),
    DELETE: async (req, res) => {
      await applicationCredentials.remove(db, actingOf(req, res), req.params.id);
      res.status(204).end();
    },
  });
  return router;
}
