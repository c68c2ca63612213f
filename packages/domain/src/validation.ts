import Joi from 'joi';
import { compileCheck, compileFieldCheck, type CompiledCheck } from './compiled-check';
import { protoKeyLabels } from './proto-keys';
import { errors } from './errors';
import { echoName } from './escape';
import { OPERATOR_ROLES } from './models';
import { BCRYPT_MAX_COST, PBKDF2_MAX_ROUNDS, passwordHashCostProblem, passwordScheme } from './foreign-password-hash';
import { SCRYPT_MAX_MEMORY, SCRYPT_MAX_WORK } from './password-hash';
import { quotaKeys } from './quotas';

/**
 * Input rules shared by every entry point (HTTP bodies in any format, CLI arguments).
 * Messages are written for a person reading a 400; labels render as 'field'.
 */

export const USERNAME_RULE =
  "must be 1 to 255 characters with no '/', no ':' and no control characters (it becomes the Swift account AUTH_<user>)";

/**
 * A new user's name must also work as the Swift account AUTH_<user> on a stock Swift proxy:
 * - Swift refuses an account name longer than 256 characters (max_account_name_length; Python 3
 *   Swift counts characters), so at most 256 - 'AUTH_'.length characters;
 * - Swift up to 2.31 (Debian bookworm ships 2.30) cannot create an account whose name has a
 *   character beyond Latin-1: account_autocreate builds its request from the decoded name, which
 *   must be latin-1 there, and answers 500 to the first container PUT (fixed in Swift 2.32).
 * Either kind of name could log in but never store anything.
 */
export const NEW_USERNAME_MAX_LENGTH = 251;
export const NEW_USERNAME_RULE =
  `must be 1 to ${NEW_USERNAME_MAX_LENGTH} characters with no '/', no ':' and no control characters, ` +
  'each from ASCII or Latin-1 (letters such as é, ü, ß or ñ). It becomes the Swift account AUTH_<user>: ' +
  'Swift allows at most 256 characters in an account name, and Swift before 2.32 cannot create an account ' +
  'whose name has a character beyond Latin-1';
export const PASSWORD_MIN_LENGTH = 20;
export const PASSWORD_MAX_LENGTH = 1024;
export const API_KEY_MIN_LENGTH = 32;

// C0 controls, DEL and C1 controls: none of them survive an HTTP header or a Swift account path.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** Whether `text` holds a C0 or C1 control character or DEL: no name, key or password Cairn keeps does. */
export const hasControlCharacters = (text: string): boolean => CONTROL_CHARS.test(text);
// eslint-disable-next-line no-control-regex
const USERNAME_PATTERN = /^[^/:\u0000-\u001f\u007f-\u009f\ud800-\udfff\ufffe\uffff]{1,255}$/u;
// Printable ASCII and Latin-1 but '/' and ':'; 251 is NEW_USERNAME_MAX_LENGTH.
const NEW_USERNAME_PATTERN = /^[\u0020-\u002e\u0030-\u0039\u003b-\u007e\u00a0-\u00ff]{1,251}$/;

const common = {
  'any.required': "The {{#label}} field has no data and doesn't allow a default or null value.",
  'object.unknown': 'The {{#label}} field is not allowed here.',
  'any.unknown': 'The {{#label}} field is read-only and cannot be changed.',
  'boolean.base': 'The {{#label}} field must be a boolean (true/false, 1/0).',
  'string.base': 'The {{#label}} field must be a string.',
  'number.base': 'The {{#label}} field must be an integer.',
  'number.integer': 'The {{#label}} field must be an integer.',
  'object.base': 'The request body must be an object of fields.',
  'string.empty': 'The {{#label}} field must not be empty.',
  // Limits and shapes, in the same sentences whichever field carries them.
  'number.min': 'The {{#label}} field must be at least {{#limit}}.',
  'number.max': 'The {{#label}} field must be at most {{#limit}}.',
  'number.greater': 'The {{#label}} field must be greater than {{#limit}}.',
  'number.less': 'The {{#label}} field must be less than {{#limit}}.',
  'number.positive': 'The {{#label}} field must be greater than 0.',
  'number.unsafe': 'The {{#label}} field must be an integer of at most 9007199254740991.',
  'string.min': 'The {{#label}} field must be at least {{#limit}} characters long.',
  'string.max': 'The {{#label}} field must be at most {{#limit}} characters long.',
  'string.length': 'The {{#label}} field must be exactly {{#limit}} characters long.',
  'string.hex': 'The {{#label}} field must be hexadecimal digits.',
  'string.guid': 'The {{#label}} field must be a UUID such as 3f0c4a4e-2a7e-4d55-9a3b-1f2e3d4c5b6a.',
  'array.base': 'The {{#label}} field must be a list.',
  'array.min': 'The {{#label}} field must hold at least {{#limit}} item(s).',
  'array.max': 'The {{#label}} field must hold at most {{#limit}} items.',
  'any.only': 'The {{#label}} field must be one of: {{#valids}}.',
  'object.oxor': 'Give only one of the fields {{#peersWithLabels}}.',
  'object.xor': 'Give exactly one of the fields {{#peersWithLabels}}.',
  'object.missing': 'Give one of the fields {{#peersWithLabels}}.',
};

/** Every sentence of an answer ends like one, whichever message produced it. */
const sentence = (message: string): string => (/[.!?]$/.test(message) ? message : `${message}.`);

const bool = () => Joi.boolean().truthy('1', 'True', 1).falsy('0', 'False', 0);

/** Any name a user may have, including users created before the rule for new names (logins, scopes). */
export const usernameSchema = Joi.string()
  .pattern(USERNAME_PATTERN)
  .messages({
    'string.pattern.base': `The {{#label}} field ${USERNAME_RULE}.`,
    'string.empty': `The {{#label}} field ${USERNAME_RULE}.`,
  });

/**
 * `schema`'s verdict on a value, with no message: its compiled check first (compiled-check.ts),
 * so that a value it covers costs a regular expression rather than a walk through joi; joi's own
 * answer otherwise. Compiled at the first question, not at module load: ajv's first compile takes
 * tens of milliseconds, which every command's start would pay.
 */
export function verdictOf(schema: Joi.Schema): (value: unknown) => boolean {
  let compiled: ((value: unknown) => boolean) | null | undefined;
  return (value) => {
    if (compiled === undefined) compiled = compileFieldCheck(schema);
    return compiled?.(value) === true || !schema.validate(value).error;
  };
}

/** Whether a login or a scope names a user that may exist: usernameSchema's verdict, asked of every login. */
export const isUsername = verdictOf(usernameSchema);

/** The name of a user being created: one whose Swift account a stock Swift proxy can create and use. */
export const newUsernameSchema = Joi.string()
  .pattern(NEW_USERNAME_PATTERN)
  .messages({
    'string.pattern.base': `The {{#label}} field ${NEW_USERNAME_RULE}.`,
    'string.empty': `The {{#label}} field ${NEW_USERNAME_RULE}.`,
  });

/** Swift's limit on an account name (max_account_name_length), in characters. */
export const SWIFT_ACCOUNT_MAX_LENGTH = 256;
export const SWIFT_ACCOUNT_RULE = `must be a Swift account name: 1 to ${SWIFT_ACCOUNT_MAX_LENGTH} characters with no '/' and no control characters`;
// Every AUTH_<user> a username can give, up to Swift's length: spaces, quotes, '%', '?', '#' and
// letters beyond Latin-1 included. Characters are counted as code points, as Swift counts them.
// eslint-disable-next-line no-control-regex
const SWIFT_ACCOUNT_PATTERN = /^[^/\u0000-\u001f\u007f-\u009f\ud800-\udfff\ufffe\uffff]{1,256}$/u;

/**
 * Whether `name` can be a Swift account: what utilization records may name (a user's AUTH_<user>, or any account a
 * proxy logged).
 */
export const isSwiftAccountName = (name: string): boolean => SWIFT_ACCOUNT_PATTERN.test(name);

export const swiftAccountSchema = Joi.string()
  .pattern(SWIFT_ACCOUNT_PATTERN)
  .messages({
    'string.pattern.base': `{{#label}} ${SWIFT_ACCOUNT_RULE}.`,
    'string.empty': `{{#label}} ${SWIFT_ACCOUNT_RULE}.`,
  });

export const passwordSchema = Joi.string()
  .max(PASSWORD_MAX_LENGTH)
  .custom((value: string, helpers) => {
    if ([...value].length < PASSWORD_MIN_LENGTH) return helpers.error('string.min', { limit: PASSWORD_MIN_LENGTH });
    if (hasControlCharacters(value)) return helpers.error('password.control');
    // Swift V1 sends the password in X-Auth-Key, and HTTP drops a header value's outer spaces.
    return value.startsWith(' ') || value.endsWith(' ') ? helpers.error('password.spaces') : value;
  })
  .messages({
    'string.min': `The {{#label}} field must be at least ${PASSWORD_MIN_LENGTH} characters long.`,
    'string.empty': `The {{#label}} field must be at least ${PASSWORD_MIN_LENGTH} characters long.`,
    'string.max': `The {{#label}} field must be at most ${PASSWORD_MAX_LENGTH} characters long.`,
    'password.control': 'The {{#label}} field must not contain control characters.',
    'password.spaces':
      'The {{#label}} field must not begin or end with a space: Swift V1 clients send it in a header, which drops them.',
  });

/**
 * What a cluster URL may hold beyond letters and digits: what an http(s) URL of a host, a port and
 * a path needs. Shell syntax (`$ ( ) ; | & < > * ? ! ' " \`` and spaces) is refused: these URLs end
 * up in command lines that operators copy and paste (the console quotes them, other tools may not).
 */
const CLUSTER_URL_CHARACTERS = /^[A-Za-z0-9\-._~%/:@[\]+,=]*$/;

const URL_MESSAGE =
  'The {{#label}} field must be an http:// or https:// URL of a host, an optional port and a path, written as a browser writes it (e.g. https://auth.example.com/auth): with no user name or password, query, fragment, spaces, control characters or shell characters such as $ ( ) ; | & \' " `.';

/** An absolute http(s) URL that the WHATWG parser (`new URL`) accepts and leaves as written. */
const httpUrl = Joi.string()
  .max(2048)
  .custom((value: string, helpers) => {
    if (!CLUSTER_URL_CHARACTERS.test(value)) return helpers.error('clusterUrl.invalid');
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return helpers.error('clusterUrl.invalid');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return helpers.error('clusterUrl.invalid');
    if (url.username !== '' || url.password !== '') return helpers.error('clusterUrl.invalid');
    // The parser adds the '/' of an empty path; anything else it would change is refused.
    if (url.href !== value && url.href !== `${value}/`) return helpers.error('clusterUrl.invalid');
    return value;
  })
  .messages({ 'clusterUrl.invalid': URL_MESSAGE, 'string.empty': URL_MESSAGE });

const clusterName = Joi.string()
  .max(255)
  .pattern(/^[^/\u0000-\u001f\u007f-\u009f\ud800-\udfff\ufffe\uffff]+$/u) // eslint-disable-line no-control-regex
  .messages({
    'string.pattern.base': "The {{#label}} field must be 1 to 255 characters with no '/' and no control characters.",
    'string.max': "The {{#label}} field must be 1 to 255 characters with no '/' and no control characters.",
  });

const uuid = Joi.string()
  .guid({ version: ['uuidv1', 'uuidv4', 'uuidv5', 'uuidv7'] })
  .lowercase()
  .messages({ 'string.guid': 'The {{#label}} field must be a UUID.' });
const region = Joi.string()
  .max(255)
  .pattern(/^[\x21-\x7e]+$/)
  .messages({
    'string.pattern.base': 'The {{#label}} field must be printable ASCII without spaces.',
    'string.max': 'The {{#label}} field must be at most 255 characters.',
  });

/** The `cluster` reference of a user: a resource URI or a bare id; resolved by the service. */
const clusterRef = Joi.alternatives()
  .try(Joi.number().integer().min(1).max(2147483647), Joi.string().max(300))
  .messages({
    'alternatives.match': 'The {{#label}} field must be a cluster resource URI like /api/v1/clusters/1/ or an id.',
    'alternatives.types': 'The {{#label}} field must be a cluster resource URI like /api/v1/clusters/1/ or an id.',
  });

const ACCEPTED_HASHES = `Cairn's $scrypt$, bcrypt ($2a$, $2b$, $2y$, cost 4 to ${BCRYPT_MAX_COST}), passlib's $pbkdf2-sha512$ (at most ${PBKDF2_MAX_ROUNDS.toLocaleString('en-US')} rounds) or passlib's $scrypt$ (N·r·p at most ${SCRYPT_MAX_WORK.toLocaleString('en-US')}, 128·N·r bytes at most ${SCRYPT_MAX_MEMORY / 2 ** 20} MiB)`;

/**
 * An existing hash of the user's password, for importing users from another system: in an accepted
 * format, and within the cost the gateway's verifier will compute (the same check: passwordScheme).
 */
export const passwordHashSchema = Joi.string()
  .max(1024)
  .custom((value: string, helpers) => {
    if (passwordScheme(value) !== null) return value;
    const reason = passwordHashCostProblem(value);
    return reason === null ? helpers.error('passwordHash.scheme') : helpers.error('passwordHash.cost', { reason });
  })
  .messages({
    'passwordHash.scheme': `The {{#label}} field must be a password hash in one of the accepted formats: ${ACCEPTED_HASHES}.`,
    'passwordHash.cost': 'The {{#label}} field holds a hash Cairn will not check: {{#reason}}.',
    'string.empty': `The {{#label}} field must be a password hash in one of the accepted formats: ${ACCEPTED_HASHES}.`,
    'string.max': `The {{#label}} field must be a password hash in one of the accepted formats: ${ACCEPTED_HASHES}.`,
  });

const userCreateFields = {
  cluster: clusterRef.required(),
  user: newUsernameSchema.required(),
  password: passwordSchema,
  password_hash: passwordHashSchema,
  is_superuser: bool().default(false),
  enabled: bool().default(true),
  /**
   * For a user imported from tempauth (`cairn users import --tempauth`): its tempauth user name,
   * with which V1 logins as `<user>:<tempauth_user>` keep working.
   */
  tempauth_user: Joi.string()
    .min(1)
    .max(255)
    // eslint-disable-next-line no-control-regex -- what no name a client sends holds
    .pattern(/^[^\u0000-\u001f\u007f]*$/)
    .allow(null)
    .messages({ 'string.pattern.base': 'The {{#label}} field must not contain control characters.' }),
};

/**
 * A password or, for an imported user, a password_hash: exactly one. Without either, tastypie's
 * wording for a missing password.
 */
export const userCreateSchema = Joi.object({
  ...userCreateFields,
  // Absent: the cluster's default quotas (see services/users.ts).
  ...quotaKeys(),
  password: passwordSchema.when('password_hash', {
    is: Joi.exist(),
    then: Joi.forbidden().messages({ 'any.unknown': 'Give either a password or a password_hash, not both.' }),
    otherwise: Joi.required(),
  }),
});

/** At most this many users in one bulk create (PATCH on the users' list). */
export const USER_BULK_MAX = 1000;

/**
 * A bulk create (PATCH on the users' list, tastypie's `{"objects": [...]}`): each object like a
 * create, but with a password_hash only: hashing a thousand passwords would hold the request (and
 * the API's threads) for minutes; `cairn users import` hashes them on the operator's machine.
 */
export const userBulkItemSchema = Joi.object({
  ...userCreateFields,
  password: Joi.any().forbidden().messages({
    'any.unknown':
      'A bulk create takes a password_hash, not a password: hash the password first, or create the user with POST.',
  }),
  password_hash: passwordHashSchema.required(),
});
export const userBulkCreateSchema = Joi.object({
  objects: Joi.array()
    .items(userBulkItemSchema)
    .min(1)
    .max(USER_BULK_MAX)
    .required()
    .messages({
      'array.max': `At most ${USER_BULK_MAX} users can be created in one request.`,
      'array.min': 'The objects list must hold at least one user.',
    }),
});

/** The `user` reference of an S3 credential: a user resource URI or a bare id; resolved by the service. */
const userRef = Joi.alternatives()
  .try(Joi.number().integer().min(1).max(Number.MAX_SAFE_INTEGER), Joi.string().max(300))
  .messages({
    'alternatives.match': 'The {{#label}} field must be a user resource URI like /api/v1/users/1/ or an id.',
    'alternatives.types': 'The {{#label}} field must be a user resource URI like /api/v1/users/1/ or an id.',
  });

const EXPIRY_RULE =
  'must be an ISO 8601 date-time in the future, such as 2027-01-31T00:00:00Z, or null for a credential that never expires';

/**
 * The access key and secret are generated; an operator names whose credential it is and, if it
 * should end, when. `'now'` is read at each validation, so a date already past is refused.
 */
export const s3CredentialCreateSchema = Joi.object({
  user: userRef.required(),
  expires_at: Joi.date()
    .iso()
    .greater('now')
    .allow(null)
    .messages({
      'date.base': `The {{#label}} field ${EXPIRY_RULE}.`,
      'date.format': `The {{#label}} field ${EXPIRY_RULE}.`,
      'date.greater': `The {{#label}} field ${EXPIRY_RULE}.`,
    }),
});

export const userPatchSchema = Joi.object({
  password: passwordSchema,
  is_superuser: bool(),
  enabled: bool(),
  ...quotaKeys(),
  id: Joi.any().forbidden(),
  resource_uri: Joi.any().forbidden(),
  cluster: Joi.any().forbidden(),
  user: Joi.any().forbidden(),
});

export const clusterCreateSchema = Joi.object({
  name: clusterName.required(),
  uuid,
  auth_url: httpUrl.required(),
  storage_url: httpUrl.required(),
  region: region.default('RegionOne'),
  ...quotaKeys('default_'),
});

export const clusterPatchSchema = Joi.object({
  name: clusterName,
  auth_url: httpUrl,
  storage_url: httpUrl,
  region,
  ...quotaKeys('default_'),
  id: Joi.any().forbidden(),
  uuid: Joi.any().forbidden(),
  resource_uri: Joi.any().forbidden(),
});

/**
 * The names the audit trail gives commands run on the host (first-start setup, the migrate job, the
 * `cairn` commands) in its `operator` field. No operator may take one, or its writes would read as theirs.
 */
export const HOST_COMMAND_NAMES = ['bootstrap', 'migrate', 'cli'] as const;
export type HostCommandName = (typeof HOST_COMMAND_NAMES)[number];

export const operatorNameSchema = Joi.string()
  .pattern(/^[A-Za-z0-9_.@-]{1,64}$/)
  .custom((value: string, helpers) =>
    (HOST_COMMAND_NAMES as readonly string[]).includes(value.toLowerCase())
      ? helpers.error('operator.reserved')
      : value,
  )
  .messages({
    'string.pattern.base': 'The {{#label}} field must be 1 to 64 characters of letters, digits, _ . @ -.',
    'string.empty': 'The {{#label}} field must be 1 to 64 characters of letters, digits, _ . @ -.',
    'operator.reserved': `The {{#label}} field cannot be 'bootstrap', 'migrate' or 'cli' (in any letter case): the audit trail names commands run on the host so.`,
  });

const role = Joi.string()
  .valid(...OPERATOR_ROLES)
  .messages({ 'any.only': `The {{#label}} field must be one of: ${OPERATOR_ROLES.join(', ')}.` });

const clusterRefs = Joi.array()
  .items(clusterRef)
  .max(1000)
  .messages({ 'array.base': 'The {{#label}} field must be a list of cluster resource URIs (empty: every cluster).' });

export const operatorCreateSchema = Joi.object({
  name: operatorNameSchema.required(),
  role: role.required(),
  clusters: clusterRefs.default([]),
});

export const operatorPatchSchema = Joi.object({
  role,
  clusters: clusterRefs,
  id: Joi.any().forbidden(),
  name: Joi.any().forbidden(),
  resource_uri: Joi.any().forbidden(),
});

export const apiKeySchema = Joi.string()
  .min(API_KEY_MIN_LENGTH)
  .max(256)
  .pattern(/^[\x21-\x7e]+$/)
  .messages({
    'string.min': `An API key must be at least ${API_KEY_MIN_LENGTH} characters.`,
    'string.max': 'An API key must be at most 256 characters.',
    'string.pattern.base': 'An API key must be printable ASCII without spaces.',
  });

const PREFERENCES: Joi.ValidationOptions = {
  abortEarly: false,
  convert: true,
  // Lists (allowed values, peers) as `'a', 'b'` rather than Joi's `[a, b]`.
  errors: { wrap: { label: "'", array: false } },
  messages: common,
};

/**
 * Each schema prepared once, twice: joi compiles preferences' messages on every validate() that is
 * given them, and merges the common messages into each field's own at every field it validates,
 * each several times the cost of the validation itself (an import validates 100,000 users). So a
 * value is first checked quickly, without messages; only one with a problem is checked again with
 * them, to say what is wrong. The quick check is the schema compiled where it is an object of
 * plain fields (compiled-check.ts: its yes is joi's), joi without messages otherwise. The full one
 * is concatenated onto `any` so that a schema's own messages still win over the common ones, as
 * they do over validate()'s options.
 */
const prepared = new WeakMap<Joi.Schema, { quick: CompiledCheck; full: Joi.Schema }>();

function quickCheck(schema: Joi.Schema): CompiledCheck {
  const compiled = compileCheck(schema);
  // A compiled yes needs no '__proto__' search: its objects hold only their declared keys, and
  // what it takes as anything (`any()`) was searched by the check itself.
  if (compiled) return compiled;
  const quick = Joi.any().prefs({ abortEarly: true, convert: true }).concat(schema);
  return (value) => {
    const { error, value: converted } = quick.validate(value);
    return error || protoKeyLabels(value).length > 0 ? null : { value: converted };
  };
}

/**
 * Validates `value` against `schema`, reporting every problem in one message.
 * Throws INVALID_INPUT; returns the converted value (defaults applied, booleans parsed).
 */
export function validate<T>(schema: Joi.Schema, value: unknown): T {
  let ready = prepared.get(schema);
  if (!ready) {
    ready = { quick: quickCheck(schema), full: Joi.any().prefs(PREFERENCES).concat(schema) };
    prepared.set(schema, ready);
  }
  const quick = ready.quick(value);
  if (quick) return quick.value as T;
  const { error, value: converted } = ready.full.validate(value);
  const proto = protoKeyLabels(value);
  if (error || proto.length > 0) {
    // A label is a key the client sent (an unknown field): echo it HTML-escaped, as every other
    // echoed value, and cut when long.
    const messages = [
      ...new Set([
        ...(error?.details ?? []).map((d) => {
          const label = d.context?.label;
          return sentence(label ? d.message.split(`'${label}'`).join(`'${echoName(label)}'`) : d.message);
        }),
        ...proto.map((label) => `The '${echoName(label)}' field is not allowed here.`),
      ]),
    ];
    const fields = [...(error?.details ?? []).map((d) => d.path.join('.')), ...proto];
    throw errors.invalidInput(messages.join(' '), { fields });
  }
  return converted as T;
}

export type UserCreateInput = {
  cluster: number | string;
  user: string;
  is_superuser: boolean;
  enabled: boolean;
  tempauth_user?: string | null;
  quota_bytes?: string | null;
  quota_count?: string | null;
  quota_bytes_policy?: Record<string, string> | null;
  quota_count_policy?: Record<string, string> | null;
} & ({ password: string; password_hash?: undefined } | { password?: undefined; password_hash: string });
export interface UserBulkCreateInput {
  objects: Array<{
    cluster: number | string;
    user: string;
    password_hash: string;
    is_superuser: boolean;
    enabled: boolean;
    tempauth_user?: string | null;
  }>;
}
export interface S3CredentialCreateInput {
  user: number | string;
  /** Null or absent: never expires. */
  expires_at?: Date | null;
}
export interface UserPatchInput {
  password?: string;
  is_superuser?: boolean;
  enabled?: boolean;
  quota_bytes?: string | null;
  quota_count?: string | null;
  quota_bytes_policy?: Record<string, string> | null;
  quota_count_policy?: Record<string, string> | null;
}
export interface ClusterCreateInput {
  name: string;
  uuid?: string;
  auth_url: string;
  storage_url: string;
  region: string;
  default_quota_bytes?: string | null;
  default_quota_count?: string | null;
  default_quota_bytes_policy?: Record<string, string> | null;
  default_quota_count_policy?: Record<string, string> | null;
}
export type ClusterPatchInput = Partial<Omit<ClusterCreateInput, 'uuid'>>;
export interface OperatorCreateInput {
  name: string;
  role: 'admin' | 'reader';
  clusters: Array<number | string>;
}
export interface OperatorPatchInput {
  role?: 'admin' | 'reader';
  clusters?: Array<number | string>;
}

/** For POSTs that take no fields (e.g. issuing a new API key). */
export const emptyBodySchema = Joi.object({});

/**
 * POST session/step_up/: the operator's API key, typed again. Any non-empty text up to the longest
 * key: a wrong one is refused by the key check (403), not here.
 */
export const stepUpSchema = Joi.object({
  api_key: Joi.string().min(1).max(256).required().messages({
    'any.required': 'api_key is required: your API key, typed again.',
    'string.empty': 'api_key is required: your API key, typed again.',
    'string.max': 'An API key must be at most 256 characters.',
  }),
});
export interface StepUpInput {
  api_key: string;
}

/** What a sign-in must hold besides the cluster: one way of signing in, whole. */
const SIGN_IN_WAYS =
  'Sign in with user and password, or with application_credential_secret and either application_credential_id or application_credential_name with user.';

/**
 * POST self/session/: a storage user signing in to the console. The cluster by name, then either
 * the user and the password as a Swift client sends them, or an application credential as a V3
 * client sends it (by id, or by name with its user); whether they are right is for the cluster's
 * gateway to say (its one login flow, under its limits), so nothing here tells a name that exists
 * from one that does not.
 */
export const storageSignInSchema = Joi.object({
  cluster: clusterName.required().messages({
    'any.required': 'cluster is required: the name of the cluster your account is on.',
    'string.empty': 'cluster is required: the name of the cluster your account is on.',
  }),
  user: Joi.string().min(1).max(255).messages({
    'string.empty': 'user is required: your user name.',
    'string.max': 'A user name is at most 255 characters.',
  }),
  password: Joi.string().min(1).max(1024).messages({
    'string.empty': 'password is required.',
    'string.max': 'A password is at most 1024 characters.',
  }),
  application_credential_id: Joi.string()
    .pattern(/^[A-Za-z0-9_-]{1,64}$/)
    .messages({
      'string.empty': 'application_credential_id must not be empty.',
      'string.pattern.base': 'An application credential id is 1 to 64 letters, digits, - or _.',
    }),
  application_credential_name: Joi.string().min(1).max(255).messages({
    'string.empty': 'application_credential_name must not be empty.',
    'string.max': 'An application credential name is at most 255 characters.',
  }),
  application_credential_secret: Joi.string().min(1).max(1024).messages({
    'string.empty': 'application_credential_secret is required: the secret shown when the credential was made.',
    'string.max': 'An application credential secret is at most 1024 characters.',
  }),
})
  .xor('password', 'application_credential_secret')
  .oxor('application_credential_id', 'application_credential_name')
  .with('password', 'user')
  .with('application_credential_name', 'user')
  .with('application_credential_id', 'application_credential_secret')
  .with('application_credential_name', 'application_credential_secret')
  .when(Joi.object({ application_credential_secret: Joi.exist() }).unknown(), {
    then: Joi.object().or('application_credential_id', 'application_credential_name').messages({
      'object.missing':
        'application_credential_secret needs application_credential_id, or application_credential_name with user.',
    }),
  })
  .messages({
    'object.missing': `password or application_credential_secret is required. ${SIGN_IN_WAYS}`,
    'object.xor': 'Give a password or an application credential secret, not both.',
    'object.oxor': 'Give application_credential_id or application_credential_name, not both.',
    'object.with': '{{#main}} needs {{#peer}} with it.',
  });
export type StorageSignInInput =
  | { cluster: string; user: string; password: string }
  | {
      cluster: string;
      application_credential_secret: string;
      application_credential_id?: string;
      application_credential_name?: string;
      user?: string;
    };
