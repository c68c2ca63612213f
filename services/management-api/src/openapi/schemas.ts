import { INTERNAL_ERROR_BODY } from '../http/errors';
import type { FieldDef, ResourceDef } from '../http/resource';

/** Pieces of the OpenAPI document shared by every path: error shapes, the list envelope, field types. */

export type JsonSchema = Record<string, unknown>;

export const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
export const responseRef = (name: string): JsonSchema => ({ $ref: `#/components/responses/${name}` });

/** Every answer under /api/v1/ is JSON by default, XML on request; the XML mirrors the JSON. */
export const jsonOrXml = (schema: JsonSchema): JsonSchema => ({
  'application/json': { schema },
  'application/xml': {},
});

const header = (description: string, schema: JsonSchema = { type: 'string' }): JsonSchema => ({
  required: true,
  description,
  schema,
});

const errorResponse = (description: string, headers?: JsonSchema): JsonSchema => ({
  description,
  ...(headers ? { headers } : {}),
  content: jsonOrXml(schemaRef('Error')),
});

export const ERROR_RESPONSES: Record<string, JsonSchema> = {
  BadRequest: errorResponse(
    'The request is not valid: a field, filter, ordering, limit or offset, a malformed body, query string or Accept header. The message says which.',
  ),
  Unauthorized: errorResponse(
    'No key, a malformed Authorization header, an unknown operator or a wrong key (also a key sent in the query string).',
    {
      'WWW-Authenticate': header('Always `ApiKey`.', { const: 'ApiKey' }),
    },
  ),
  Forbidden: errorResponse(
    'The key is valid but this operator may not do this (a reader writing, or an admin limited to some clusters); or a console session writes from another origin, without its X-Cairn-CSRF token, or mints credentials without a fresh step-up (`code` step_up_required).',
  ),
  NotFound: errorResponse('No such object, or not one this operator may see.'),
  MethodNotAllowed: errorResponse('The path does not take this method; checked before the key.', {
    Allow: header('The methods the path takes, comma-separated, e.g. `GET,POST`.'),
  }),
  PayloadTooLarge: errorResponse('The body is over 64 KiB (200 MB for device reports).'),
  UnsupportedMediaType: errorResponse(
    'The body is not JSON, form-encoded or XML, its charset is not UTF-8, or it is JSON sent as form-encoded (send `Content-Type: application/json`).',
  ),
  Conflict: errorResponse(
    "The request is valid but the state of what it names forbids it: a ring whose part power is not the current version's, a rollback with no older version.",
  ),
  TooManyRequests: errorResponse(
    "Too many failed sign-ins: the cluster's auth gateway refuses this user or address for now (its failed-login limits).",
    { 'Retry-After': header('Seconds to wait.') },
  ),
  Unavailable: errorResponse('The database is unreachable; retry shortly.', {
    'Retry-After': header('Seconds to wait: `1`.'),
  }),
  InternalError: {
    description: 'An unexpected failure (logged with the request id).',
    content: jsonOrXml(schemaRef('InternalError')),
  },
  Options: {
    description: 'The methods the path takes (no key needed).',
    headers: { Allow: header('The methods, comma-separated.') },
    content: { 'text/plain': { schema: { type: 'string' } } },
  },
};

export const SHARED_SCHEMAS: Record<string, JsonSchema> = {
  Error: {
    type: 'object',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'string',
        description: 'What was wrong, in sentences; text taken from the request has `<`, `>` and `&` escaped.',
      },
      code: {
        enum: ['step_up_required'],
        description:
          'Present on refusals a client acts on by itself. `step_up_required` (403): a console session must re-enter its API key (`POST /api/v1/session/step_up/`) before minting an API key or an operator, widening an operator, or taking a backup.',
      },
    },
  },
  InternalError: {
    type: 'object',
    required: ['error_message'],
    additionalProperties: false,
    properties: { error_message: { const: INTERNAL_ERROR_BODY.error_message } },
  },
  ListMeta: {
    type: 'object',
    required: ['limit', 'next', 'offset', 'previous', 'total_count'],
    additionalProperties: false,
    properties: {
      limit: { type: 'integer', minimum: 0 },
      next: { type: ['string', 'null'], description: 'Relative URL of the next page, or null on the last page.' },
      offset: {
        type: ['integer', 'string'],
        description: 'A string only above 2^53, where a JSON number would lose digits.',
      },
      previous: {
        type: ['string', 'null'],
        description: 'Relative URL of the previous page, or null on the first page.',
      },
      total_count: { type: 'integer', minimum: 0 },
    },
  },
  SchemaDocument: {
    type: 'object',
    description: "Tastypie's description of a resource.",
    required: [
      'allowed_detail_http_methods',
      'allowed_list_http_methods',
      'default_format',
      'default_limit',
      'fields',
      'filtering',
      'ordering',
    ],
    additionalProperties: false,
    properties: {
      allowed_detail_http_methods: { type: 'array', items: { type: 'string' } },
      allowed_list_http_methods: { type: 'array', items: { type: 'string' } },
      default_format: { const: 'application/json' },
      default_limit: { type: 'integer' },
      fields: {
        type: 'object',
        additionalProperties: {
          type: 'object',
          required: [
            'blank',
            'default',
            'help_text',
            'nullable',
            'primary_key',
            'readonly',
            'type',
            'unique',
            'verbose_name',
          ],
          additionalProperties: false,
          properties: {
            blank: { type: 'boolean' },
            default: {},
            help_text: { type: 'string' },
            nullable: { type: 'boolean' },
            primary_key: { type: 'boolean' },
            readonly: { type: 'boolean' },
            related_type: { const: 'to_one' },
            type: { enum: ['integer', 'string', 'boolean', 'related', 'list', 'datetime', 'dict'] },
            unique: { type: 'boolean' },
            verbose_name: { type: 'string' },
          },
        },
      },
      filtering: {
        type: 'object',
        description:
          "Each field's lookups; `2` for a relation (its own lookups, and the related resource's filters after `__`).",
        additionalProperties: { oneOf: [{ type: 'array', items: { type: 'string' } }, { const: 2 }] },
      },
      ordering: { type: 'array', items: { type: 'string' } },
    },
  },
};

/** A list answer: the envelope around objects of `item`. */
export const envelope = (item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['meta', 'objects'],
  additionalProperties: false,
  properties: { meta: schemaRef('ListMeta'), objects: { type: 'array', items: item } },
});

/** A field as it appears in a response. */
export function fieldSchema(f: FieldDef): JsonSchema {
  const base: Record<FieldDef['type'], JsonSchema> = {
    integer: { type: 'integer' },
    float: { type: 'number' },
    string: { type: 'string' },
    boolean: { type: 'boolean' },
    related: { type: 'string', format: 'uri-reference', description: 'Resource URI.' },
    list: { type: 'array', items: { type: 'string' } },
    datetime: { type: 'string', format: 'date-time' },
    dict: { type: 'object' },
  };
  if (f.bigNumber) {
    const big = { type: ['integer', 'string'], pattern: '^[0-9]+$' };
    base.integer = big;
    base.dict = { type: 'object', additionalProperties: big };
  }
  if (f.itemFields) {
    const fields = Object.entries(f.itemFields);
    base.list = {
      type: 'array',
      items: {
        type: 'object',
        required: fields.map(([k]) => k),
        additionalProperties: false,
        properties: Object.fromEntries(fields.map(([k, t]) => [k, base[t]])),
      },
    };
  }
  const typed = base[f.type];
  return {
    ...(f.nullable ? { ...typed, type: [...([] as unknown[]).concat(typed.type), 'null'] } : typed),
    ...(f.choices ? { enum: f.nullable ? [...f.choices, null] : [...f.choices] } : {}),
    description: f.help,
    ...(f.readonly ? { readOnly: true } : {}),
    ...(f.default !== undefined ? { default: f.default } : {}),
  };
}

/** A field as a client sends it: relations (and lists of them) as a resource URI or a bare id. */
export function inputFieldSchema(f: FieldDef): JsonSchema {
  const ref = { type: ['string', 'integer'], description: 'Resource URI (`/api/v1/clusters/1/`) or id.' };
  if (f.type === 'related') return { ...ref, description: f.help };
  if (f.type === 'list')
    return {
      type: 'array',
      items: { type: ['string', 'integer'] },
      description: f.help,
      ...(f.default !== undefined ? { default: f.default } : {}),
    };
  const { readOnly: _readOnly, ...rest } = fieldSchema(f);
  return rest;
}

/**
 * A resource's object. Write-only fields (a password) are left out of what a GET shows; the
 * response to the write that set one carries it (`writeOnly: 'required'` or `'optional'`).
 */
export function objectSchema(
  resource: ResourceDef,
  writeOnly: 'omit' | 'optional' | 'required',
  extra: Record<string, JsonSchema> = {},
  /** With 'required': the input fields the create requires (a generated, read-only one always is). */
  requiredInput: ReadonlySet<string> = new Set(),
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, f] of Object.entries(resource.fields)) {
    if (f.neverShown || (f.writeOnly && writeOnly === 'omit')) continue;
    properties[name] = fieldSchema(f);
    if (!f.writeOnly || (writeOnly === 'required' && (f.readonly || requiredInput.has(name)))) required.push(name);
  }
  for (const [name, schema] of Object.entries(extra)) {
    properties[name] = schema;
    required.push(name);
  }
  return { type: 'object', required: required.sort(), additionalProperties: false, properties };
}
