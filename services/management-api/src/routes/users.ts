import { Router, type RequestHandler } from 'express';
import {
  PASSWORD_SCHEMES,
  validate,
  userBulkCreateSchema,
  userCreateSchema,
  userPatchSchema,
  type StorageUser,
  type UserBulkCreateInput,
  type UserCreateInput,
  type UserPatchInput,
} from '@cairn/domain';
import type { Db } from '../db/database';
import { parseBody } from '../http/body';
import {
  anyValue,
  dropUnchangedReadOnly,
  sameCluster,
  sameId,
  sameText,
  sameUri,
  type SameAs,
} from '../http/read-only';
import { EXACT_ONLY, NUMBER_LOOKUPS, RELATED_LOOKUPS, STRING_LOOKUPS, type ResourceDef } from '../http/resource';
import { quotaFields } from './quota-fields';
import { INT8_MAX, API_ROOT, clusterIdFromRef, clusterUri, userUri } from '../resources/uris';
import { formatOf, send, sendSecret } from '../http/respond';
import { resourceRoute } from '../http/routing';
import * as users from '../services/users';
import type { PasswordHasher } from '../services/users';
import { actingOf } from '../http/acting';
import { clustersResource } from './clusters';
import { sendList } from './list';
import { userJson, userJsonText } from '../resources/representations';

/** A bulk create of users (an import) holds up to 1000 names and password hashes. */
export const USER_BULK_LIMIT = '1mb';

export const usersResource: ResourceDef = {
  name: 'users',
  alias: 'u',
  listMethods: ['GET', 'POST', 'PATCH'],
  detailMethods: ['GET', 'PATCH', 'DELETE'],
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
    cluster: {
      type: 'related',
      help: 'The cluster this user logs in to, as a resource URI. Cannot change.',
      column: 'cluster_id',
      filtering: RELATED_LOOKUPS,
      ordering: true,
      related: {
        resource: () => clustersResource,
        alias: 'c',
        toId: (v) => {
          const id = clusterIdFromRef(v);
          return id === null ? null : String(id);
        },
      },
    },
    user: {
      type: 'string',
      help: "Login name, 1-251 printable ASCII or Latin-1 characters without '/' or ':', so that a stock Swift can create and use the account AUTH_<user>. Cannot change.",
      column: 'username',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    password: {
      type: 'string',
      help: 'At least 20 characters. Write-only: shown only in the response that set it. On create, either this or password_hash.',
      writeOnly: true,
    },
    password_hash: {
      type: 'string',
      help: "On create only, instead of password: the user's existing hash from another system (bcrypt $2a$/$2b$/$2y$, passlib $pbkdf2-sha512$ or $scrypt$, or Cairn's own $scrypt$). Replaced by Cairn's scrypt hash at the user's first login. Write-only: never shown.",
      writeOnly: true,
      neverShown: true,
    },
    tempauth_user: {
      type: 'string',
      help: "On create only, for a user imported from tempauth (cairn users import --tempauth): its tempauth user name, from user_<account>_<user> where <account> is this user's name. V1 logins as <user>:<tempauth_user> then work as they did with tempauth. Write-only: never shown.",
      writeOnly: true,
      neverShown: true,
      nullable: true,
    },
    password_scheme: {
      type: 'string',
      help: `Whose hash the user's password has: ${PASSWORD_SCHEMES.join(', ')}. Anything but scrypt means an imported user who has not logged in since.`,
      readonly: true,
      column: 'password_scheme',
      filtering: ['exact', 'in'],
    },
    is_superuser: {
      type: 'boolean',
      help: 'Superusers get ResellerAdmin: access to every account of the cluster.',
      default: false,
      column: 'is_superuser',
      filtering: EXACT_ONLY,
      ordering: true,
    },
    enabled: {
      type: 'boolean',
      help: 'Disabled users cannot log in; their tokens stop working at once.',
      default: true,
      column: 'enabled',
      filtering: EXACT_ONLY,
      ordering: true,
    },
    ...quotaFields('', "the user's"),
    // Filtered through the list's join of the users' quota state; not orderable (the page's order
    // is applied outside that join).
    quota_status: {
      type: 'string',
      help: "Where the user's quotas stand in Swift: applied, pending (not yet applied), error (see quota_error; retried), or null when the user never had a quota. Reported state: sent back unchanged or not, it is ignored.",
      readonly: true,
      nullable: true,
      column: 'status',
      alias: users.QUOTA_STATE_ALIAS,
      choices: users.QUOTA_STATUSES,
      filtering: ['exact', 'in', 'isnull'],
    },
    quota_error: {
      type: 'string',
      help: 'Why the quotas are not applied, in one sentence; null unless quota_status is error.',
      readonly: true,
      nullable: true,
    },
    quota_applied_at: {
      type: 'datetime',
      help: 'When Swift last accepted the quotas (a repair after drift included); null before.',
      readonly: true,
      nullable: true,
      column: 'applied_at',
      alias: users.QUOTA_STATE_ALIAS,
      filtering: ['gt', 'gte', 'lt', 'lte', 'isnull'],
    },
    bytes_used: {
      type: 'integer',
      bigNumber: true,
      help: "Bytes the user's account held at the latest storage sample of the utilization collector (its totals over every policy); null before the first, or once its samples are past the hourly retention. Reported state, ignored when sent back.",
      readonly: true,
      nullable: true,
    },
    object_count: {
      type: 'integer',
      bigNumber: true,
      help: "Objects the user's account held at that sample; null likewise.",
      readonly: true,
      nullable: true,
    },
    usage_sampled_at: {
      type: 'datetime',
      help: 'The hour of that sample; null likewise.',
      readonly: true,
      nullable: true,
    },
    resource_uri: { type: 'string', help: 'URI of this user.', readonly: true },
  },
};

const LIST = `${API_ROOT}/users/`;

/** What a client may send back unchanged from a GET (see dropUnchangedReadOnly). */
const userReadOnly = (u: {
  id: string;
  clusterId: number;
  username: string;
  passwordScheme: string;
}): Record<string, SameAs> => ({
  id: sameId(u.id),
  password_scheme: sameText(u.passwordScheme),
  cluster: sameCluster(u.clusterId),
  user: sameText(u.username),
  resource_uri: sameUri(userUri(u.id)),
  // Reported state, which moves on its own between a GET and the PATCH that sends it back.
  quota_status: anyValue,
  quota_error: anyValue,
  quota_applied_at: anyValue,
  bytes_used: anyValue,
  object_count: anyValue,
  usage_sampled_at: anyValue,
});

export type { PasswordHasher } from '../services/users';

export function usersRouter(db: Db, auth: RequestHandler, hashPassword: PasswordHasher): Router {
  const router = Router();

  resourceRoute(router, '/users/', auth, {
    GET: (req, res) =>
      sendList(
        req,
        res,
        usersResource,
        LIST,
        (q) => users.list(db, actingOf(req, res), q),
        (u) => userJson(u),
        userJsonText,
      ),
    POST: async (req, res) => {
      const inputOf = async () => validate<UserCreateInput>(userCreateSchema, await parseBody(req, usersResource));
      const { user, input } = await users.create(db, actingOf(req, res), inputOf, hashPassword);
      res.set('Location', userUri(user.id));
      sendSecret(req, res, 201, userJson(user, input.password));
    },
    // Tastypie's bulk write on a list: {"objects": [...]}, here creates only, with password hashes
    // (an import). Names already taken are skipped and listed, so an import can be run again.
    PATCH: async (req, res) => {
      const inputOf = async () =>
        validate<UserBulkCreateInput>(userBulkCreateSchema, await parseBody(req, usersResource, USER_BULK_LIMIT));
      const { created, skipped } = await users.createMany(db, actingOf(req, res), inputOf);
      send(req, res, 202, {
        objects: created.map((u) => userJson(u)),
        skipped: skipped.map((s) => ({
          cluster: clusterUri(s.clusterId),
          reason: 'A user of that name already exists in the cluster.',
          user: s.user,
        })),
      });
    },
  });

  // Routing is not strict, so this also serves /users/<id> without the slash (the controller's docs
  // DELETE that way).
  resourceRoute(router, '/users/:id/', auth, {
    // JSON answers written directly, as the list writes its rows (same text as toJson(userJson(u))).
    GET: async (req, res) => {
      const user = await users.show(db, actingOf(req, res), req.params.id);
      send(req, res, 200, formatOf(req) === 'json' ? userJsonText(user) : userJson(user));
    },
    PATCH: async (req, res) => {
      const patchOf = async (current: StorageUser) =>
        validate<UserPatchInput>(
          userPatchSchema,
          dropUnchangedReadOnly(await parseBody(req, usersResource), userReadOnly(current)),
        );
      const { user, patch } = await users.update(db, actingOf(req, res), req.params.id, patchOf, hashPassword);
      (patch.password === undefined ? send : sendSecret)(req, res, 202, userJson(user, patch.password));
    },
    DELETE: async (req, res) => {
      await users.remove(db, actingOf(req, res), req.params.id);
      res.status(204).end();
    },
  });

  return router;
}
