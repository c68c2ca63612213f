import { Router, type RequestHandler } from 'express';
import { s3CredentialCreateSchema, validate, type S3CredentialCreateInput, type S3SecretKeyring } from '@cairn/domain';
import type { Db } from '../db/database';
import { actingOf } from '../http/acting';
import { parseBody } from '../http/body';
import { EXACT_ONLY, NUMBER_LOOKUPS, RELATED_LOOKUPS, type Lookup, type ResourceDef } from '../http/resource';
import { send, sendSecret } from '../http/respond';
import { resourceRoute } from '../http/routing';
import { s3CredentialJson } from '../resources/representations';
import { API_ROOT, INT8_MAX, s3CredentialUri, userIdFromRef } from '../resources/uris';
import * as s3Credentials from '../services/s3-credentials';
import { sendList } from './list';
import { usersResource } from './users';

/**
 * What `user__…` may filter on: the user's id and exact name. Related filters are resolved to the
 * matching users' ids first, so a chain that could match millions (`user__cluster`) is not offered.
 */
const ownerResource: ResourceDef = {
  ...usersResource,
  fields: { id: usersResource.fields.id!, user: { ...usersResource.fields.user!, filtering: ['exact', 'in'] } },
};

const TIME_LOOKUPS: readonly Lookup[] = ['exact', 'gt', 'gte', 'lt', 'lte'];

export const s3CredentialsResource: ResourceDef = {
  name: 's3_credentials',
  alias: 's',
  listMethods: ['GET', 'POST'],
  detailMethods: ['GET', 'DELETE'],
  fields: {
    id: {
      type: 'string',
      help: 'Unicode string data. Ex: "12" (a bigint id, always a string)',
      readonly: true,
      unique: true,
      column: 'id',
      filtering: NUMBER_LOOKUPS,
      max: INT8_MAX,
      ordering: true,
    },
    user: {
      type: 'related',
      help: 'The storage user whose Swift account these S3 keys reach, as a resource URI. Cannot change.',
      column: 'storage_user_id',
      filtering: RELATED_LOOKUPS,
      ordering: true,
      related: { resource: () => ownerResource, alias: 'u', toId: (v) => userIdFromRef(v) },
    },
    access_key: {
      type: 'string',
      help: 'The access key id S3 clients send (20 characters A-Z, 0-9), generated. Unique.',
      readonly: true,
      unique: true,
      column: 'access_key',
      filtering: EXACT_ONLY.concat(['in']),
      ordering: true,
    },
    secret: {
      type: 'string',
      help: 'The secret access key (40 characters), generated. Shown only in the response that created the credential; stored encrypted.',
      readonly: true,
      writeOnly: true,
    },
    cluster: { type: 'string', help: "The user's cluster, as a resource URI.", readonly: true },
    created_at: {
      type: 'datetime',
      help: 'When the credential was created, ISO 8601 UTC.',
      readonly: true,
      column: 'created_at',
      filtering: TIME_LOOKUPS,
      ordering: true,
    },
    expires_at: {
      type: 'datetime',
      help: 'When the credential stops signing requests, ISO 8601 (UTC unless an offset is given); null: never. Set when creating, in the future. Cannot change.',
      nullable: true,
      column: 'expires_at',
      filtering: TIME_LOOKUPS.concat(['isnull']),
      ordering: true,
    },
    application_credential: {
      type: 'string',
      help: "The application credential whose token made this key through the gateway's OS-EC2 API, as a resource URI; null for none. A bound key signs with that credential's roles, fails once it expires, and is deleted with it.",
      readonly: true,
      nullable: true,
    },
    resource_uri: { type: 'string', help: 'URI of this credential.', readonly: true },
  },
};

const LIST = `${API_ROOT}/s3_credentials/`;

export function s3CredentialsRouter(db: Db, auth: RequestHandler, keyring: S3SecretKeyring | undefined): Router {
  const router = Router();

  resourceRoute(router, '/s3_credentials/', auth, {
    GET: (req, res) =>
      sendList(
        req,
        res,
        s3CredentialsResource,
        LIST,
        (q) => s3Credentials.list(db, actingOf(req, res), q),
        (c) => s3CredentialJson(c),
      ),
    POST: async (req, res) => {
      const inputOf = async () =>
        validate<S3CredentialCreateInput>(s3CredentialCreateSchema, await parseBody(req, s3CredentialsResource));
      const { credential, secret } = await s3Credentials.create(db, actingOf(req, res), inputOf, keyring);
      res.set('Location', s3CredentialUri(credential.id));
      sendSecret(req, res, 201, s3CredentialJson(credential, secret));
    },
  });

  resourceRoute(router, '/s3_credentials/:id/', auth, {
    GET: async (req, res) =>
      send(req, res, 200, s3CredentialJson(await s3Credentials.show(db, actingOf(req, res), req.params.id))),
    DELETE: async (req, res) => {
      await s3Credentials.remove(db, actingOf(req, res), req.params.id);
      res.status(204).end();
    },
  });

  return router;
}
