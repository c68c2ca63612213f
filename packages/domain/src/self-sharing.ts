import { createHmac } from 'node:crypto';
import Joi from 'joi';
import { usernameSchema } from './validation';

/**
 * "Sharing": a storage user's container ACLs and temporary URLs, as Swift checks them.
 *
 * Cairn's clusters validate tokens with keystonemiddleware + Swift's `keystoneauth`, and the
 * gateway's tokens name the user and the project both by the user's name (`alice` of `AUTH_alice`).
 * keystoneauth grants a container ACL entry `<project>:<user>` (ids, names or `*`) to the token
 * that matches it; an entry `AUTH_bob` would be taken for a role name and match nobody. So another
 * user `bob` of the cluster is written `bob:bob`, and read back from `bob:bob` or `bob:*` (every
 * user of project bob, which in Cairn is bob alone). Names are percent-encoded as Swift's
 * `parse_acl` unquotes them, so a name with a comma stays one entry.
 */

/** `.r:*`: anyone, with no token, may read objects. */
export const PUBLIC_READ = '.r:*';
/** `.rlistings`: whoever may read may also list the container (with a referrer entry: anyone). */
export const LISTINGS = '.rlistings';

export interface ParsedAcl {
  /** Other users of the cluster, by name, in the order Swift keeps them. */
  users: string[];
  publicRead: boolean;
  listings: boolean;
  /** Entries none of the choices above means (another referrer, a role, another project's user): kept as they are. */
  other: string[];
}

const entryOfUser = (user: string) => {
  const q = encodeURIComponent(user);
  return `${q}:${q}`;
};

const decode = (s: string): string => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** An `X-Container-Read` or `X-Container-Write` value, split into the choices the console offers. */
export function parseContainerAcl(header: string | null | undefined): ParsedAcl {
  const acl: ParsedAcl = { users: [], publicRead: false, listings: false, other: [] };
  for (const raw of (header ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    if (entry === PUBLIC_READ || entry === '.referrer:*') acl.publicRead = true;
    else if (entry === LISTINGS) acl.listings = true;
    else {
      const m = /^([^:]+):([^:]+)$/.exec(entry);
      const project = m ? decode(m[1]!) : null;
      const user = m ? decode(m[2]!) : null;
      if (project !== null && (user === project || user === '*') && !entry.startsWith('.')) {
        if (!acl.users.includes(project)) acl.users.push(project);
      } else acl.other.push(entry);
    }
  }
  return acl;
}

/** The header value for these choices; an empty string removes the ACL. */
export function formatContainerAcl(acl: ParsedAcl): string {
  return [
    ...(acl.publicRead ? [PUBLIC_READ] : []),
    ...(acl.listings ? [LISTINGS] : []),
    ...acl.users.map(entryOfUser),
    ...acl.other,
  ].join(',');
}

const USERS_RULE = 'lists other users of your cluster by name, at most 100';

const usersSchema = Joi.array()
  .items(usernameSchema)
  .max(100)
  .unique()
  .default([])
  .messages({
    'array.base': `The {{#label}} field ${USERS_RULE}.`,
    'array.max': `The {{#label}} field ${USERS_RULE}.`,
    'array.unique': 'The {{#label}} field names the same user twice.',
  });

/** A container's ACLs as the console sets them (PUT /api/v1/self/containers/<name>/). */
export const containerAclSchema = Joi.object({
  read_users: usersSchema,
  write_users: usersSchema,
  public_read: Joi.boolean().default(false),
  public_listings: Joi.boolean()
    .default(false)
    .when('public_read', {
      is: false,
      then: Joi.valid(false).messages({
        'any.only':
          'Listing for everyone (public_listings) works only with public read (public_read): Swift lets a request without a token list a container only when it may also read it.',
      }),
    }),
});

export interface ContainerAclInput {
  read_users: string[];
  write_users: string[];
  public_read: boolean;
  public_listings: boolean;
}

/** What to do with the account's temp-URL keys (POST /api/v1/self/temp_url_keys/). */
export const tempUrlKeyActionSchema = Joi.object({
  action: Joi.string().valid('set', 'rotate', 'drop_previous').required().messages({
    'any.only':
      "The action field is 'set' (a new key; links made before stop working), 'rotate' (a new key; links made with the current one keep working until the next rotation) or 'drop_previous' (links made before the last rotation stop working).",
    'any.required': "The action field is required: 'set', 'rotate' or 'drop_previous'.",
  }),
});

export interface TempUrlKeyActionInput {
  action: 'set' | 'rotate' | 'drop_previous';
}

export const TEMP_URL_METHODS = ['GET', 'HEAD', 'PUT'] as const;
export type TempUrlMethod = (typeof TEMP_URL_METHODS)[number];

/** A temporary URL to make (POST /api/v1/self/temp_urls/); the lifetime's upper bound is the API's setting. */
export const tempUrlRequestSchema = Joi.object({
  container: Joi.string()
    .min(1)
    .max(256)
    .pattern(/^[^/]+$/)
    .required()
    .messages({
      'string.pattern.base': 'The container field is the name of one of your containers (no "/").',
      'string.max': 'The container field is the name of one of your containers (at most 256 characters).',
    }),
  object: Joi.string()
    .min(1)
    .max(1024)
    .required()
    .messages({ 'string.max': 'The object field is an object name of at most 1024 characters.' }),
  method: Joi.string()
    .valid(...TEMP_URL_METHODS)
    .default('GET')
    .messages({ 'any.only': 'The method field is GET (download), HEAD (look at) or PUT (upload).' }),
  lifetime_seconds: Joi.number().integer().min(1).required().messages({
    'number.base': 'The lifetime_seconds field is how many seconds the link works: a whole number, at least 1.',
    'number.integer': 'The lifetime_seconds field is how many seconds the link works: a whole number, at least 1.',
    'number.min': 'The lifetime_seconds field is how many seconds the link works: a whole number, at least 1.',
  }),
});

export interface TempUrlRequestInput {
  container: string;
  object: string;
  method: TempUrlMethod;
  lifetime_seconds: number;
}

/**
 * Swift's tempurl signature: HMAC-SHA256 of `<method>\n<expires>\n<path>` under the account's key,
 * in hex, where path is the object's path from `/v1/` on, not percent-encoded (what the middleware
 * rebuilds from the request's decoded path).
 */
export function tempUrlSignature(key: string, method: string, expires: number, path: string): string {
  return createHmac('sha256', key).update(`${method}\n${expires}\n${path}`).digest('hex');
}

/** The object's path as tempurl signs it: `/v1/AUTH_<user>/<container>/<object>`, decoded. */
export const tempUrlPath = (account: string, container: string, object: string): string =>
  `/v1/${account}/${container}/${object}`;

/**
 * The full temporary URL: the cluster's storage URL (which ends in `/v1`), the encoded path, and
 * the signature and expiry as query parameters.
 */
export function tempUrlOf(
  storageUrl: string,
  account: string,
  container: string,
  object: string,
  method: string,
  expires: number,
  key: string,
): string {
  const sig = tempUrlSignature(key, method, expires, tempUrlPath(account, container, object));
  const objectPath = object.split('/').map(encodeURIComponent).join('/');
  const base = storageUrl.replace(/\/+$/, '');
  return `${base}/${encodeURIComponent(account)}/${encodeURIComponent(container)}/${objectPath}?temp_url_sig=${sig}&temp_url_expires=${expires}`;
}
