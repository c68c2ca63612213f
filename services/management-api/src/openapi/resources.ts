import type { Schema as JoiSchema } from 'joi';
import { DEFAULT_LIMIT, MAX_LIMIT, type FieldDef, type Lookup, type ResourceDef } from '../http/resource';
import {
  envelope,
  inputFieldSchema,
  jsonOrXml,
  objectSchema,
  responseRef,
  schemaRef,
  type JsonSchema,
} from './schemas';

/**
 * The paths of one resource, generated from its ResourceDef (fields, filters, ordering, methods)
 * and the joi schemas that validate its bodies, so the document follows the code.
 */
export interface MountedResource {
  resource: ResourceDef;
  /** List path, e.g. `/api/v1/users/` or `/api/v1/clusters/{id}/devices/`. */
  list: string;
  /** Detail path, when the resource has one. */
  detail?: string;
  /** Only admins with access to every cluster may use it (403 for anyone else). */
  globalAdminOnly?: boolean;
  create?: JoiSchema;
  patch?: JoiSchema;
  /** One object of a bulk create (PATCH on the list with `{"objects": [...]}`). */
  bulkCreate?: JoiSchema;
  /** Keys added to the object in the answer to a create (an operator's first API key). */
  createdExtra?: Record<string, JsonSchema>;
  /** List query parameters of the route's own beyond the resource's filters. */
  listParameters?: JsonSchema[];
  tag: string;
}

const BOOLEAN_VALUES = ['true', 'True', '1', 'false', 'False', '0'];

const LOOKUP_HELP: Record<Lookup, string> = {
  exact: 'equal to',
  iexact: 'equal to, ignoring case',
  in: 'one of (comma-separated, or the key repeated)',
  startswith: 'starting with',
  istartswith: 'starting with, ignoring case',
  contains: 'containing',
  icontains: 'containing, ignoring case',
  gt: 'greater than',
  gte: 'greater than or equal to',
  lt: 'less than',
  lte: 'less than or equal to',
  isnull: 'null (true) or not null (false)',
  endswith: 'ending with',
  iendswith: 'ending with, ignoring case',
} as Record<Lookup, string>;

const HEX4 = '[0-9a-fA-F]{4}';
const UUID_PATTERN = `^(\\{${HEX4}(-?${HEX4}){7}\\}|${HEX4}(-?${HEX4}){7})$`;
const NO_CONTROL_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]*$';

/** The schema of one filter value (what parseListQuery accepts for this field and lookup). */
function filterValueSchema(f: FieldDef, lookup: Lookup): JsonSchema {
  if (lookup === 'isnull') return { type: 'string', enum: BOOLEAN_VALUES };
  if (lookup === 'in' && f.choices)
    return {
      type: 'string',
      pattern: `^(${f.choices.join('|')})(,(${f.choices.join('|')}))*$`,
      description: `Comma-separated, among ${f.choices.join(', ')}.`,
    };
  if (lookup === 'in')
    return {
      type: 'string',
      pattern: NO_CONTROL_PATTERN,
      ...(f.format === 'uuid' ? { description: 'UUIDs, comma-separated.' } : {}),
    };
  if (f.choices) return { type: 'string', enum: [...f.choices] };
  if (f.related) return { type: 'string', description: 'Resource URI or id.' };
  if (f.max !== undefined || f.type === 'integer') return { type: 'string', pattern: '^-?[0-9]{1,20}$' };
  if (f.type === 'boolean') return { type: 'string', enum: BOOLEAN_VALUES };
  if (f.type === 'datetime')
    return { type: 'string', description: 'ISO 8601 date or date-time; UTC when no offset is given.' };
  if (f.format === 'uuid')
    return {
      type: 'string',
      pattern: UUID_PATTERN,
      description: 'A UUID: 32 hex digits, hyphens optional (6ba7b810-9dad-11d1-80b4-00c04fd430c8).',
    };
  return { type: 'string', pattern: NO_CONTROL_PATTERN, description: 'Text without control characters.' };
}

function filterParameters(resource: ResourceDef): JsonSchema[] {
  const params: JsonSchema[] = [];
  const add = (prefix: string, shown: string, f: FieldDef) => {
    for (const lookup of f.filtering ?? []) {
      const names = lookup === 'exact' ? [prefix, `${prefix}__exact`] : [`${prefix}__${lookup}`];
      for (const name of names) {
        params.push({
          name,
          in: 'query',
          required: false,
          description: `Only objects whose ${shown} is ${LOOKUP_HELP[lookup] ?? lookup} this value.`,
          schema: filterValueSchema(f, lookup),
        });
      }
    }
  };
  for (const [name, f] of Object.entries(resource.fields)) {
    if (!f.filtering || !f.column) continue;
    add(name, `\`${name}\``, f);
    if (f.related) {
      for (const [relatedName, rf] of Object.entries(f.related.resource().fields)) {
        // A field of a table the related list joins (FieldDef.alias) is not reached through a chain.
        if (rf.filtering && rf.column && !rf.alias) add(`${name}__${relatedName}`, `${name}'s \`${relatedName}\``, rf);
      }
    }
  }
  return params;
}

function listParameters(resource: ResourceDef): JsonSchema[] {
  const orderable = Object.entries(resource.fields)
    .filter(([, f]) => f.ordering && f.column && !f.alias)
    .map(([name]) => name);
  return [
    { $ref: '#/components/parameters/limit' },
    { $ref: '#/components/parameters/offset' },
    { $ref: '#/components/parameters/format' },
    {
      name: 'order_by',
      in: 'query',
      required: false,
      description: 'Order by a field, descending with a leading `-`; repeat the key to order by several.',
      style: 'form',
      explode: true,
      schema: { type: 'array', items: { enum: orderable.flatMap((n) => [n, `-${n}`]) } },
    },
    ...filterParameters(resource),
  ];
}

export const COMMON_PARAMETERS: Record<string, JsonSchema> = {
  limit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: `Objects per page; ${DEFAULT_LIMIT} by default, 0 or anything above ${MAX_LIMIT} means ${MAX_LIMIT}.`,
    schema: { type: 'integer', minimum: 0 },
  },
  offset: {
    name: 'offset',
    in: 'query',
    required: false,
    description: 'Objects to skip.',
    schema: { type: 'integer', minimum: 0 },
  },
  format: {
    name: 'format',
    in: 'query',
    required: false,
    description:
      'Answer as JSON or XML; other values are ignored (then `Accept` decides: `application/xml` or `text/xml` give XML).',
    schema: { type: 'string', enum: ['json', 'xml'] },
  },
};

/** A `{name}` path parameter holding a numeric id. */
export const idParameter = (name: string, description: string): JsonSchema => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string', pattern: '^[0-9]+$' },
});

/** A Swift ring's name in a path (packages/domain's RING_NAME). */
const RING_PARAMETER: JsonSchema = {
  name: 'ring',
  in: 'path',
  required: true,
  description: "The ring: 'account', 'container', 'object' or 'object-<n>'.",
  schema: { type: 'string', pattern: '^(account|container|object(-[1-9][0-9]{0,9})?)$' },
};

/** Path parameters of a templated path (every one an id but a ring's name). */
export const pathParameters = (path: string): JsonSchema[] =>
  [...path.matchAll(/\{(\w+)\}/g)].map((m) =>
    m[1] === 'ring' ? RING_PARAMETER : idParameter(m[1]!, m[1] === 'id' ? 'Id of the object.' : `Id (${m[1]}).`),
  );

/** The keys a joi object schema requires. */
const requiredKeys = (joi: JoiSchema): Set<string> =>
  new Set(
    Object.entries((joi.describe() as { keys?: Record<string, { flags?: { presence?: string } }> }).keys ?? {})
      .filter(([, d]) => d.flags?.presence === 'required')
      .map(([k]) => k),
  );

/**
 * The body of a create or PATCH: the keys the joi schema takes (never a forbidden one), typed by the resource's fields.
 */
export function bodySchema(resource: ResourceDef, joi: JoiSchema, patch: boolean): JsonSchema {
  const keys = (joi.describe() as { keys?: Record<string, { flags?: { presence?: string } }> }).keys ?? {};
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, described] of Object.entries(keys)) {
    if (described.flags?.presence === 'forbidden') continue;
    const field = resource.fields[name];
    if (!field) throw new Error(`OpenAPI: ${resource.name} body takes '${name}', which is not a field of the resource`);
    properties[name] = inputFieldSchema(field);
    if (described.flags?.presence === 'required') required.push(name);
  }
  return {
    type: 'object',
    ...(required.length ? { required } : {}),
    additionalProperties: false,
    properties,
    description: patch
      ? 'Only the fields to change. Read-only fields of a GET answer may be sent back unchanged (GET, modify, PATCH); changing one is a 400.'
      : 'A field the resource does not have is a 400.',
  };
}

/**
 * The same fields as form values, which are all text: booleans as true/false/1/0, numbers as digits (a
 * decimal point where fractions are allowed), a list as the key
 * repeated (once for a list of one).
 */
function asForm(schema: JsonSchema): JsonSchema {
  const text = (s: JsonSchema): JsonSchema => {
    const types = ([] as unknown[]).concat(s.type);
    if (types.includes('array')) return { ...s, items: text(s.items as JsonSchema) };
    if (types.includes('boolean'))
      return {
        ...s,
        type: 'string',
        enum: BOOLEAN_VALUES,
        ...(s.default !== undefined ? { default: String(s.default) } : {}),
      };
    if (types.includes('integer') || types.includes('number')) return { ...s, type: 'string' };
    return s;
  };
  const properties = Object.fromEntries(
    Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>).map(([k, v]) => [k, text(v)]),
  );
  return { ...schema, properties };
}

/** Bodies are JSON, form-encoded or tastypie XML (`<object>` with typed children), all with the same fields. */
export const requestBody = (schema: JsonSchema): JsonSchema => ({
  required: true,
  content: {
    'application/json': { schema },
    'application/x-www-form-urlencoded': { schema: asForm(schema) },
    'application/xml': {},
  },
});

const ok = (description: string, schema: JsonSchema): JsonSchema => ({ description, content: jsonOrXml(schema) });

export const LOCATION = {
  Location: { required: true, description: 'URI of the new object.', schema: { type: 'string' } },
};

/**
 * Errors any /api/v1/ operation can answer: a malformed Accept header or query string, a body over the limit (even on a
 * GET), a failure.
 */
export const API_ERRORS: Record<string, JsonSchema> = {
  400: responseRef('BadRequest'),
  413: responseRef('PayloadTooLarge'),
  500: responseRef('InternalError'),
};

/** Errors every authenticated operation can answer. */
export const authenticatedErrors = (extra: Record<string, string> = {}): Record<string, JsonSchema> => ({
  ...API_ERRORS,
  401: responseRef('Unauthorized'),
  503: responseRef('Unavailable'),
  ...Object.fromEntries(Object.entries(extra).map(([status, name]) => [status, responseRef(name)])),
});

export const WRITE_ERRORS = { 403: 'Forbidden', 413: 'PayloadTooLarge', 415: 'UnsupportedMediaType' };

export function resourcePaths(m: MountedResource): Record<string, Record<string, JsonSchema>> {
  const { resource: r } = m;
  const name = r.name;
  const componentName = `${name}`;
  const nested = m.list.includes('{');
  const readErrors = { ...(m.globalAdminOnly ? { 403: 'Forbidden' } : {}) };
  const paths: Record<string, Record<string, JsonSchema>> = {};

  const list: Record<string, JsonSchema> = {};
  if (r.listMethods.includes('GET')) {
    list.get = {
      tags: [m.tag],
      operationId: `list_${name}`,
      summary: `List ${name}`,
      parameters: [...listParameters(r), ...(m.listParameters ?? [])],
      responses: {
        200: ok('One page of objects.', envelope(schemaRef(componentName))),
        ...authenticatedErrors({ ...readErrors, ...(nested ? { 404: 'NotFound' } : {}) }),
      },
    };
  }
  if (r.listMethods.includes('POST') && m.create) {
    list.post = {
      tags: [m.tag],
      operationId: `create_${name}`,
      summary: `Create one of ${name}`,
      requestBody: requestBody(bodySchema(r, m.create, false)),
      responses: {
        201: {
          description: 'Created.',
          headers: LOCATION,
          content: jsonOrXml(objectSchema(r, 'required', m.createdExtra, requiredKeys(m.create))),
        },
        ...authenticatedErrors({ ...WRITE_ERRORS, ...(nested ? { 404: 'NotFound' } : {}) }),
      },
    };
  }
  if (r.listMethods.includes('PATCH') && m.bulkCreate) {
    const skipped = {
      type: 'object',
      required: ['cluster', 'reason', 'user'],
      additionalProperties: false,
      properties: { cluster: { type: 'string' }, reason: { type: 'string' }, user: { type: 'string' } },
    };
    list.patch = {
      tags: [m.tag],
      operationId: `bulk_create_${name}`,
      summary: `Create many of ${name}`,
      description:
        "Tastypie's bulk write, for creates only: every object is created in one transaction, except those whose name is taken, which are skipped and listed.",
      requestBody: {
        required: true,
        content: {
          'application/json': {
            schema: {
              type: 'object',
              required: ['objects'],
              additionalProperties: false,
              properties: {
                objects: { type: 'array', minItems: 1, maxItems: 1000, items: bodySchema(r, m.bulkCreate, false) },
              },
            },
          },
        },
      },
      responses: {
        202: ok('The objects created, and those skipped.', {
          type: 'object',
          required: ['objects', 'skipped'],
          additionalProperties: false,
          properties: {
            objects: { type: 'array', items: objectSchema(r, 'omit') },
            skipped: { type: 'array', items: skipped },
          },
        }),
        ...authenticatedErrors(WRITE_ERRORS),
      },
    };
  }
  paths[m.list] = list;

  if (m.detail) {
    const detail: Record<string, JsonSchema> = {};
    if (r.detailMethods.includes('GET')) {
      detail.get = {
        tags: [m.tag],
        operationId: `get_${name}`,
        summary: `Get one of ${name}`,
        parameters: [{ $ref: '#/components/parameters/format' }],
        responses: {
          200: ok('The object.', schemaRef(componentName)),
          ...authenticatedErrors({ ...readErrors, 404: 'NotFound' }),
        },
      };
    }
    if (r.detailMethods.includes('PATCH') && m.patch) {
      detail.patch = {
        tags: [m.tag],
        operationId: `update_${name}`,
        summary: `Change one of ${name}`,
        requestBody: requestBody(bodySchema(r, m.patch, true)),
        responses: {
          202: ok('Changed; the object as it is now.', objectSchema(r, 'optional')),
          ...authenticatedErrors({ ...WRITE_ERRORS, 404: 'NotFound' }),
        },
      };
    }
    if (r.detailMethods.includes('DELETE')) {
      detail.delete = {
        tags: [m.tag],
        operationId: `delete_${name}`,
        summary: `Delete one of ${name}`,
        responses: { 204: { description: 'Deleted.' }, ...authenticatedErrors({ 403: 'Forbidden', 404: 'NotFound' }) },
      };
    }
    paths[m.detail] = detail;
  }
  return paths;
}

/** `/api/v1/<resource>/schema/`: tastypie's description, behind the key as in tastypie. */
export const schemaPath = (m: MountedResource): Record<string, JsonSchema> => ({
  get: {
    tags: ['discovery'],
    operationId: `schema_${m.resource.name}`,
    summary: `Describe ${m.resource.name} (tastypie schema)`,
    parameters: [{ $ref: '#/components/parameters/format' }],
    responses: { 200: ok("Tastypie's schema document.", schemaRef('SchemaDocument')), ...authenticatedErrors() },
  },
});
