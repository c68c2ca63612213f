import {
  clusterCreateSchema,
  clusterPatchSchema,
  operatorCreateSchema,
  operatorPatchSchema,
  ringPlanCreateSchema,
  s3CredentialCreateSchema,
  userBulkItemSchema,
  userCreateSchema,
  userPatchSchema,
  TRANSFER_DETAIL_FIELDS,
  TRANSFER_DETAIL_FIELD_NAMES,
} from '@cairn/domain';
import { API_ROOT } from '../resources/uris';
import {
  POLICY_HEADERS_PARAMETER,
  POLICY_SUMMARY_FIELDS,
  SUMMARY_FIELDS,
  type SummaryField,
} from '../resources/utilization-summary';
import { auditResource } from '../routes/audit';
import { clustersResource } from '../routes/clusters';
import { devicesResource } from '../routes/devices';
import { ringPlansResource } from '../routes/ring-plans';
import { ringsResource } from '../routes/rings';
import { ringPaths } from './rings';
import { healthFindingsResource } from '../routes/health-resources';
import { HEALTH_SCHEMAS, healthPaths } from './health';
import { SELF_SERVICE_SCHEMAS, selfServicePaths } from './self-service';
import { operatorsResource } from '../routes/operators';
import { s3CredentialsResource } from '../routes/s3-credentials';
import { applicationCredentialsResource } from '../routes/application-credentials';
import { usersResource } from '../routes/users';
import type { ResourceDef } from '../http/resource';
import {
  API_ERRORS,
  authenticatedErrors,
  COMMON_PARAMETERS,
  LOCATION,
  pathParameters,
  requestBody,
  resourcePaths,
  schemaPath,
  WRITE_ERRORS,
  type MountedResource,
} from './resources';
import {
  ERROR_RESPONSES,
  jsonOrXml,
  objectSchema,
  responseRef,
  schemaRef,
  SHARED_SCHEMAS,
  envelope,
  type JsonSchema,
} from './schemas';

/**
 * The OpenAPI 3.1 description of the management API. The resources' paths, fields, filters,
 * ordering and bodies are generated from their ResourceDefs and joi schemas; the routes that are
 * not resources (capacity, device reports, API keys, discovery, probes) are described here by hand.
 */

export const MOUNTED: MountedResource[] = [
  {
    resource: usersResource,
    list: `${API_ROOT}/users/`,
    detail: `${API_ROOT}/users/{id}/`,
    create: userCreateSchema,
    patch: userPatchSchema,
    bulkCreate: userBulkItemSchema,
    tag: 'users',
  },
  {
    resource: clustersResource,
    list: `${API_ROOT}/clusters/`,
    detail: `${API_ROOT}/clusters/{id}/`,
    create: clusterCreateSchema,
    patch: clusterPatchSchema,
    tag: 'clusters',
  },
  {
    resource: operatorsResource,
    list: `${API_ROOT}/operators/`,
    detail: `${API_ROOT}/operators/{id}/`,
    create: operatorCreateSchema,
    patch: operatorPatchSchema,
    globalAdminOnly: true,
    createdExtra: { api_key: { type: 'string', description: "The operator's first API key; shown only here." } },
    tag: 'operators',
  },
  {
    resource: s3CredentialsResource,
    list: `${API_ROOT}/s3_credentials/`,
    detail: `${API_ROOT}/s3_credentials/{id}/`,
    create: s3CredentialCreateSchema,
    tag: 's3_credentials',
  },
  {
    resource: applicationCredentialsResource,
    list: `${API_ROOT}/application_credentials/`,
    detail: `${API_ROOT}/application_credentials/{id}/`,
    listParameters: [
      {
        name: 'cluster',
        in: 'query',
        required: false,
        description: "Only the credentials of this cluster's users (an id or a cluster URI).",
        schema: { type: 'string' },
      },
    ],
    tag: 'application_credentials',
  },
  {
    resource: auditResource,
    list: `${API_ROOT}/audit/`,
    detail: `${API_ROOT}/audit/{id}/`,
    globalAdminOnly: true,
    tag: 'audit',
  },
  {
    resource: devicesResource,
    list: `${API_ROOT}/clusters/{id}/devices/`,
    listParameters: [
      {
        name: 'policy',
        in: 'query',
        required: false,
        description: 'Only devices in the object ring of the storage policy with this name.',
        schema: { type: 'string' },
      },
    ],
    tag: 'capacity',
  },
  {
    resource: ringsResource,
    list: `${API_ROOT}/clusters/{id}/rings/`,
    tag: 'rings',
  },
  {
    resource: ringPlansResource,
    list: `${API_ROOT}/clusters/{id}/ring_plans/`,
    detail: `${API_ROOT}/clusters/{id}/ring_plans/{plan}/`,
    create: ringPlanCreateSchema,
    tag: 'rings',
  },
  {
    resource: healthFindingsResource,
    list: `${API_ROOT}/clusters/{id}/health/history/`,
    listParameters: [
      {
        name: 'open',
        in: 'query',
        required: false,
        description: 'Only open (true) or closed (false) findings.',
        schema: { type: 'string', enum: ['true', 'True', '1', 'false', 'False', '0'] },
      },
    ],
    tag: 'health',
  },
];

/** A storage policy as a device report sends it and the policies list answers it. */
const POLICY_PROPERTIES: Record<string, JsonSchema> = {
  index: { type: 'integer', minimum: 0 },
  name: {
    type: 'string',
    pattern: '^[A-Za-z0-9-]{1,255}$',
    description:
      "Swift's rule: letters, digits and '-'. Unique in the report without regard to case, as Swift requires: 'gold' and 'GOLD' are refused together.",
  },
  default: { type: 'boolean' },
};

const pctStats: JsonSchema = {
  type: 'object',
  required: ['avg', 'count', 'max', 'min', 'pct_95', 'stddev'],
  additionalProperties: false,
  properties: {
    count: { type: 'integer', minimum: 0 },
    ...Object.fromEntries(['avg', 'max', 'min', 'pct_95', 'stddev'].map((k) => [k, { type: ['number', 'null'] }])),
  },
};

const HAND_KEPT_SCHEMAS: Record<string, JsonSchema> = {
  ApiKey: {
    type: 'object',
    required: ['created_at', 'id', 'operator', 'resource_uri'],
    additionalProperties: false,
    properties: {
      created_at: { type: 'string', format: 'date-time' },
      id: { type: 'string', description: 'A bigint id, as a string.' },
      key: { type: 'string', description: 'The key itself; only in the answer that created it.' },
      operator: { type: 'string', format: 'uri-reference' },
      resource_uri: { type: 'string', format: 'uri-reference' },
    },
  },
  CapacityElement: {
    type: 'object',
    required: ['pct_used_stats', 'ring_set', 'total_free_tb', 'total_raw_tb', 'total_used_pct', 'total_used_tb'],
    additionalProperties: false,
    properties: {
      ring_set: { type: 'string', description: "Policy names sorted by policy index, joined with ','." },
      total_raw_tb: { type: 'number' },
      total_used_tb: { type: 'number' },
      total_free_tb: { type: 'number' },
      total_used_pct: { type: ['number', 'null'], description: 'Null when the raw total is 0.' },
      pct_used_stats: pctStats,
    },
  },
  DeviceReport: {
    type: 'object',
    description: 'Every device of the cluster and the storage policies of its rings; replaces the previous report.',
    required: ['devices', 'policies'],
    properties: {
      policies: {
        type: 'array',
        items: {
          type: 'object',
          required: ['index', 'name'],
          properties: POLICY_PROPERTIES,
        },
      },
      devices: {
        type: 'array',
        maxItems: 1_000_000,
        items: {
          type: 'object',
          required: ['device', 'mounted', 'node', 'policies'],
          properties: {
            node: { type: 'string' },
            device: { type: 'string' },
            policies: { type: 'array', items: { type: 'string' } },
            size_bytes: { type: ['integer', 'null'] },
            used_bytes: { type: ['integer', 'null'] },
            avail_bytes: { type: ['integer', 'null'] },
            mounted: { type: 'boolean' },
          },
        },
      },
    },
  },
  Probe: {
    type: 'object',
    required: ['status'],
    additionalProperties: { type: 'string' },
    properties: { status: { enum: ['ok', 'unavailable'] } },
  },
};

const PUBLIC: JsonSchema[] = [];
const format = { $ref: '#/components/parameters/format' };

const utilParameters: JsonSchema[] = [
  {
    name: 'start',
    in: 'query',
    required: true,
    description:
      'Start of the range: an ISO 8601 date or date-time, UTC unless it names an offset (2026-11-24, 2026-11-24T22:00:00Z). Rounded down to the half hour; meta.start gives the result.',
    schema: { type: 'string' },
  },
  {
    name: 'end',
    in: 'query',
    required: false,
    description:
      'End of the range (exclusive), same forms as start; default now. Rounded up to a whole number of hours after the rounded start; meta.end gives the result. Not after start.',
    schema: { type: 'string' },
  },
  { $ref: '#/components/parameters/limit' },
  { $ref: '#/components/parameters/offset' },
  {
    name: 'format',
    in: 'query',
    required: false,
    description: 'JSON, XML or CSV (also `Accept: text/csv`); CSV is the whole range unless limit or offset is given.',
    schema: { type: 'string', enum: ['json', 'xml', 'csv'] },
  },
  ...['account', 'account__startswith', 'account__gt'].map((name) => ({
    name,
    in: 'query',
    required: false,
    description: 'Only accounts matching (AUTH_<user>).',
    schema: { type: 'string' },
  })),
];
const policyParameter: JsonSchema = {
  name: 'policy',
  in: 'path',
  required: true,
  description: "A storage policy index or 'total'.",
  schema: { type: 'string', pattern: '^([0-9]{1,5}|total)$' },
};
const accountParameter: JsonSchema = {
  name: 'account',
  in: 'path',
  required: true,
  description: 'Swift account, AUTH_<user>, percent-encoded (AUTH_a%20b).',
  schema: { type: 'string' },
};
/** What a collector may name: every AUTH_<user> (see SWIFT_ACCOUNT_RULE in the domain). */
const swiftAccount: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 256,
  pattern: '^[^/\\u0000-\\u001f\\u007f-\\u009f]+$',
  description:
    "A Swift account name: AUTH_<user> for any username, spaces and other characters included; at most 256 characters (Swift's limit), no '/' and no control characters.",
};
const writeCount: JsonSchema = { type: 'integer', minimum: 0 };
const collectorTime = (description: string): JsonSchema => ({
  type: 'string',
  maxLength: 40,
  description: `${description}, ISO 8601 UTC; within GET .../utilization/window/.`,
});
const storageWrite: JsonSchema = {
  type: 'object',
  required: ['sampled_at', 'samples'],
  additionalProperties: false,
  properties: {
    interval: {
      type: 'integer',
      minimum: 60,
      maximum: 3600,
      default: 3600,
      description: 'Seconds between collection rounds; must divide 3600.',
    },
    sampled_at: collectorTime('When the round began'),
    samples: {
      type: 'array',
      maxItems: 20_000,
      items: {
        type: 'object',
        required: ['account', 'bytes_used', 'container_count', 'object_count'],
        additionalProperties: false,
        properties: {
          account: swiftAccount,
          bytes_used: writeCount,
          object_count: writeCount,
          container_count: writeCount,
          policies: {
            type: 'array',
            maxItems: 64,
            items: {
              type: 'object',
              required: ['bytes_used', 'container_count', 'object_count'],
              additionalProperties: false,
              oneOf: [{ required: ['index'] }, { required: ['name'] }],
              properties: {
                index: {
                  type: 'integer',
                  minimum: 0,
                  maximum: 32767,
                  description: "The index of one of the cluster's storage policies (GET .../utilization/policies/).",
                },
                name: {
                  type: 'string',
                  maxLength: 255,
                  description: "The name of one of the cluster's storage policies, matched without regard to case.",
                },
                bytes_used: writeCount,
                object_count: writeCount,
                container_count: writeCount,
              },
            },
          },
        },
      },
    },
  },
};
const transferWrite: JsonSchema = {
  type: 'object',
  required: ['batch_id', 'records'],
  additionalProperties: false,
  properties: {
    batch_id: {
      type: 'string',
      minLength: 8,
      maxLength: 128,
      pattern: '^[\\w.:-]+$',
      description: 'Counted once: a batch id already recorded is acknowledged as a duplicate.',
    },
    covered: {
      type: 'object',
      required: ['end', 'start'],
      additionalProperties: false,
      properties: {
        start: collectorTime('First request of the batch'),
        end: collectorTime('Last request of the batch'),
      },
    },
    records: {
      type: 'array',
      maxItems: 20_000,
      items: {
        type: 'object',
        required: ['account', 'bytes_in', 'bytes_out', 'hour', 'req_count'],
        additionalProperties: false,
        properties: {
          account: swiftAccount,
          policy_index: {
            type: ['integer', 'null'],
            minimum: 0,
            maximum: 32767,
            description: 'The policy the proxy logged; null for requests without one.',
          },
          hour: collectorTime('The start of the hour'),
          bytes_in: writeCount,
          bytes_out: writeCount,
          req_count: writeCount,
          ...Object.fromEntries(
            Object.entries(TRANSFER_DETAIL_FIELDS).map(([name, description]) => [
              name,
              { ...writeCount, description: `${description} Optional: 0 when not sent.` },
            ]),
          ),
        },
      },
    },
  },
};
const transferWriteResult: JsonSchema = {
  type: 'object',
  required: ['accepted', 'duplicate'],
  properties: {
    accepted: { type: 'integer', minimum: 0, description: 'Records counted (0 for a duplicate batch).' },
    duplicate: { type: 'boolean', description: 'The batch id was already counted; nothing was counted again.' },
    refused: {
      type: 'array',
      maxItems: 100,
      description: 'Only when records were refused: the first 100 of them, left out of the batch.',
      items: {
        type: 'object',
        required: ['index', 'reason'],
        properties: {
          index: { type: 'integer', minimum: 0, description: 'Position in records.' },
          reason: { type: 'string' },
        },
      },
    },
    refused_count: { type: 'integer', minimum: 1, description: 'Only when records were refused: how many.' },
    unattributed: {
      type: 'object',
      required: ['records', 'requests'],
      description:
        'Records for accounts the cluster never had a user for, and the requests they sum: not stored, never billed.',
      properties: { records: { type: 'integer', minimum: 0 }, requests: { type: 'integer', minimum: 0 } },
    },
  },
};
/** ListMeta plus the range (and the account or policy asked for). */
const listMeta = SHARED_SCHEMAS.ListMeta as { required: string[]; properties: Record<string, JsonSchema> };
const utilMeta = (extra: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
  type: 'object',
  required: [...listMeta.required, 'end', 'start', ...required],
  additionalProperties: false,
  properties: {
    ...listMeta.properties,
    start: { type: 'string', description: 'First hour, UTC.' },
    end: { type: 'string', description: 'End of the last hour, UTC.' },
    ...extra,
  },
});
const utilEnvelope = (meta: JsonSchema, item: JsonSchema): JsonSchema => ({
  type: 'object',
  required: ['meta', 'objects'],
  additionalProperties: false,
  properties: { meta, objects: { type: 'array', items: item } },
});
const accountItem: JsonSchema = {
  type: 'object',
  required: ['account'],
  additionalProperties: false,
  properties: { account: { type: 'string' } },
};
const policyIndex = { policy_index: { type: ['integer', 'string'] } };
const hourItem = (counters: string[]): JsonSchema => ({
  type: 'object',
  required: ['end', 'pct_complete', 'start', ...counters],
  additionalProperties: false,
  properties: {
    start: { type: 'string' },
    end: { type: 'string' },
    pct_complete: { type: 'number', minimum: 0, maximum: 100, description: 'Share of the hour that was sampled.' },
    ...Object.fromEntries(counters.map((c) => [c, { type: 'integer', minimum: 0 }])),
  },
});
const count = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });
const share = (description: string): JsonSchema => ({ type: 'number', minimum: 0, maximum: 100, description });
/** A summary field's schema, from its declared kind (resources/utilization-summary.ts). */
const summaryFieldSchema = (f: SummaryField): JsonSchema =>
  ({
    text: { type: 'string', description: f.description },
    count: count(f.description),
    share: share(f.description),
    quota: { type: ['integer', 'null'], minimum: 0, description: f.description },
    used: { type: ['number', 'null'], minimum: 0, description: f.description },
  })[f.kind];
const summaryObject = (fields: Record<string, SummaryField>, extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  required: [...Object.keys(fields), ...Object.keys(extra)].sort(),
  additionalProperties: false,
  properties: {
    ...Object.fromEntries(Object.entries(fields).map(([name, f]) => [name, summaryFieldSchema(f)])),
    ...extra,
  },
});
const policySummaryItem = summaryObject(POLICY_SUMMARY_FIELDS);
const summaryItem = summaryObject(SUMMARY_FIELDS, {
  policies: {
    type: 'array',
    description: "One entry per storage policy the cluster's samples have named.",
    items: policySummaryItem,
  },
});
const withCsv = (content: JsonSchema): JsonSchema => ({ ...content, 'text/csv': { schema: { type: 'string' } } });

function utilizationPaths(): Record<string, Record<string, JsonSchema>> {
  const base = `${API_ROOT}/clusters/{id}/utilization`;
  const out: Record<string, Record<string, JsonSchema>> = {};
  for (const kind of ['storage', 'transfer']) {
    out[`${base}/${kind}/{policy}/`] = {
      get: {
        tags: ['utilization'],
        operationId: `utilization_${kind}_accounts`,
        summary: `Accounts with ${kind} records in the range`,
        parameters: [policyParameter, ...utilParameters],
        responses: {
          200: {
            description: 'The accounts, one page (CSV: one `account` column).',
            content: withCsv(jsonOrXml(utilEnvelope(utilMeta(policyIndex, ['policy_index']), accountItem))),
          },
          ...authenticatedErrors({ 404: 'NotFound' }),
        },
      },
    };
    out[`${base}/${kind}/{policy}/{account}/detail/`] = {
      get: {
        tags: ['utilization'],
        operationId: `utilization_${kind}_detail`,
        summary: `An account's hourly ${kind} records`,
        parameters: [policyParameter, accountParameter, ...utilParameters],
        responses: {
          200: {
            description: 'One record per hour; an account never seen has none.',
            content: withCsv(
              jsonOrXml(
                utilEnvelope(
                  utilMeta({ account: { type: 'string' }, ...policyIndex }, ['account', 'policy_index']),
                  hourItem(
                    kind === 'storage'
                      ? ['bytes_used', 'container_count', 'object_count']
                      : ['bytes_in', 'bytes_out', 'req_count', ...TRANSFER_DETAIL_FIELD_NAMES],
                  ),
                ),
              ),
            ),
          },
          ...authenticatedErrors({ 404: 'NotFound' }),
        },
      },
    };
    out[`${base}/${kind}/`] = {
      post: {
        tags: ['utilization'],
        operationId: `utilization_${kind}_record`,
        summary: `Record a round of ${kind} samples (collector)`,
        description: `An admin key (one limited to clusters: for one of them); a reader gets 403 before the body is read, whatever it holds. ${
          kind === 'storage'
            ? "Validated whole before anything is stored: one bad entry (an account name Swift cannot hold, a time outside the write window, a storage policy the cluster's device report does not list) refuses the request with a 400 that names it."
            : "The envelope (batch_id, covered, records as a list) is validated whole: a bad one is a 400. Each record is then checked alone: a bad record (an account name Swift cannot hold, a count out of range, an hour outside the write window or not on the hour, a policy index the cluster's device report does not list) is left out and named in `refused` by its index and the reason, and the batch's other records are counted. An hour's sums saturate at 2^53 − 1."
        }`,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: kind === 'storage' ? storageWrite : transferWrite } },
        },
        responses: {
          200: {
            description: 'What was stored.',
            content: jsonOrXml(kind === 'storage' ? { type: 'object' } : transferWriteResult),
          },
          ...authenticatedErrors({ ...WRITE_ERRORS, 404: 'NotFound' }),
        },
      },
    };
  }
  out[`${base}/summary/`] = {
    get: {
      tags: ['utilization'],
      operationId: 'utilization_summary',
      summary: 'Per-account totals over the range, from daily rollups',
      parameters: [
        ...utilParameters,
        {
          name: POLICY_HEADERS_PARAMETER.name,
          in: 'query',
          required: false,
          description: POLICY_HEADERS_PARAMETER.description,
          schema: {
            type: 'string',
            enum: [...POLICY_HEADERS_PARAMETER.values],
            default: POLICY_HEADERS_PARAMETER.default,
          },
        },
      ],
      responses: {
        200: {
          description:
            'One row per account (CSV: the policies flattened into p<index>_ columns, or <name>_ ones with policy_headers=name).',
          content: withCsv(jsonOrXml(utilEnvelope(utilMeta({}, []), summaryItem))),
        },
        ...authenticatedErrors({ 404: 'NotFound' }),
      },
    },
  };
  out[`${base}/window/`] = {
    get: {
      tags: ['utilization'],
      operationId: 'utilization_write_window',
      summary:
        'The times a collector may write now (sampled_at, log hours and coverage): older ones are past the hourly retention, later ones in the future',
      parameters: [format],
      responses: {
        200: {
          description: 'ISO 8601 UTC bounds, both inclusive.',
          content: jsonOrXml({
            type: 'object',
            required: ['latest', 'oldest'],
            additionalProperties: false,
            properties: {
              oldest: {
                type: 'string',
                format: 'date-time',
                description: 'Start of the oldest hour the hourly retention keeps, plus a day of margin.',
              },
              latest: { type: 'string', format: 'date-time', description: 'Now plus 15 minutes.' },
            },
          }),
        },
        ...authenticatedErrors({ 404: 'NotFound' }),
      },
    },
  };
  out[`${base}/policies/`] = {
    get: {
      tags: ['utilization'],
      operationId: 'utilization_policies',
      summary:
        "The cluster's storage policies: the names Swift uses in X-Account-Storage-Policy-<name>-* headers, with their indexes",
      parameters: [format, { $ref: '#/components/parameters/limit' }, { $ref: '#/components/parameters/offset' }],
      responses: {
        200: {
          description: 'One page of the storage policies last reported for the cluster (PUT .../devices/), by index.',
          content: jsonOrXml(
            envelope({
              type: 'object',
              required: ['default', 'index', 'name'],
              additionalProperties: false,
              properties: POLICY_PROPERTIES,
            }),
          ),
        },
        ...authenticatedErrors({ 404: 'NotFound' }),
      },
    },
  };
  out[`${base}/accounts/`] = {
    get: {
      tags: ['utilization'],
      operationId: 'utilization_known_accounts',
      summary: 'Every account ever created on the cluster (what the storage collector reads)',
      parameters: [
        format,
        { $ref: '#/components/parameters/limit' },
        { $ref: '#/components/parameters/offset' },
        ...utilParameters.slice(5),
      ],
      responses: {
        200: { description: 'One page of accounts, by name.', content: jsonOrXml(envelope(accountItem)) },
        ...authenticatedErrors({ 404: 'NotFound' }),
      },
    },
  };
  return out;
}

function handKeptPaths(): Record<string, Record<string, JsonSchema>> {
  return {
    [`${API_ROOT}/`]: {
      get: {
        tags: ['discovery'],
        operationId: 'discover',
        summary: 'List the resources (no key needed)',
        security: PUBLIC,
        parameters: [format],
        responses: {
          200: {
            description: 'Each resource with its list endpoint and schema, and the running version.',
            content: jsonOrXml({
              type: 'object',
              required: ['version'],
              properties: { version: { type: 'string', description: "Cairn's release version." } },
              additionalProperties: {
                type: 'object',
                required: ['list_endpoint', 'schema'],
                additionalProperties: false,
                properties: { list_endpoint: { type: 'string' }, schema: { type: 'string' } },
              },
            }),
          },
          ...API_ERRORS,
        },
      },
    },
    [`${API_ROOT}/openapi.json`]: {
      get: {
        tags: ['discovery'],
        operationId: 'openapi',
        summary: 'This document (no key needed)',
        security: PUBLIC,
        responses: {
          200: {
            description: 'The OpenAPI 3.1 document, always JSON.',
            content: { 'application/json': { schema: { type: 'object', required: ['openapi', 'paths'] } } },
          },
          ...API_ERRORS,
        },
      },
    },
    [`${API_ROOT}/clusters/{id}/devices/`]: {
      put: {
        tags: ['capacity'],
        operationId: 'replace_devices',
        summary: "Replace a cluster's device report",
        description: 'Sent by `cairn capacity collect`. Up to 200 MB; nothing is written unless all of it is valid.',
        requestBody: { required: true, content: { 'application/json': { schema: schemaRef('DeviceReport') } } },
        responses: {
          204: { description: 'Stored; the capacity is recomputed.' },
          ...authenticatedErrors({ ...WRITE_ERRORS, 404: 'NotFound' }),
        },
      },
    },
    [`${API_ROOT}/clusters/{id}/capacity/list/`]: {
      get: {
        tags: ['capacity'],
        operationId: 'capacity',
        summary: "A cluster's capacity per set of storage policies, from its latest device report",
        parameters: [format],
        responses: {
          200: {
            description: 'Empty before the first report.',
            content: jsonOrXml({
              type: 'object',
              required: ['capacity'],
              additionalProperties: false,
              properties: { capacity: { type: 'array', items: schemaRef('CapacityElement') } },
            }),
          },
          ...authenticatedErrors({ 404: 'NotFound' }),
        },
      },
    },
    [`${API_ROOT}/clusters/{id}/capacity/history/`]: {
      get: {
        tags: ['capacity'],
        operationId: 'capacity_history',
        summary:
          "A cluster's capacity per set of storage policies over time, one sample per hour (per day past 31 days)",
        parameters: [
          format,
          {
            name: 'start',
            in: 'query',
            required: false,
            description: 'ISO 8601 date or UTC date-time; default 90 days before end.',
            schema: { type: 'string' },
          },
          {
            name: 'end',
            in: 'query',
            required: false,
            description: 'ISO 8601 date or UTC date-time, exclusive; default now. At most 1096 days after start.',
            schema: { type: 'string' },
          },
        ],
        responses: {
          200: {
            description:
              "Each ring set's samples in time order, with capacity/list/'s numbers as they were reported then; empty before the first report. An hour holds the ring sets of its last report only.",
            content: jsonOrXml({
              type: 'object',
              required: ['history', 'meta'],
              additionalProperties: false,
              properties: {
                meta: {
                  type: 'object',
                  required: ['end', 'resolution', 'start'],
                  additionalProperties: false,
                  properties: {
                    start: { type: 'string', format: 'date-time' },
                    end: { type: 'string', format: 'date-time' },
                    resolution: { enum: ['hour', 'day'] },
                  },
                },
                history: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['ring_set', 'samples'],
                    additionalProperties: false,
                    properties: {
                      ring_set: { type: 'string' },
                      samples: {
                        type: 'array',
                        items: {
                          type: 'object',
                          required: ['time', 'total_free_tb', 'total_raw_tb', 'total_used_pct', 'total_used_tb'],
                          additionalProperties: false,
                          properties: {
                            time: {
                              type: 'string',
                              format: 'date-time',
                              description: 'The start of the hour the sample is from.',
                            },
                            total_raw_tb: { type: 'number' },
                            total_used_tb: { type: 'number' },
                            total_free_tb: { type: 'number' },
                            total_used_pct: { type: ['number', 'null'] },
                          },
                        },
                      },
                    },
                  },
                },
              },
            }),
          },
          ...authenticatedErrors({ 400: 'BadRequest', 404: 'NotFound' }),
        },
      },
    },
    [`${API_ROOT}/operators/{id}/keys/`]: {
      get: {
        tags: ['operators'],
        operationId: 'list_keys',
        summary: "An operator's API keys (never the keys themselves)",
        parameters: [format, { $ref: '#/components/parameters/limit' }, { $ref: '#/components/parameters/offset' }],
        responses: {
          200: { description: 'One page of keys, by id.', content: jsonOrXml(envelope(schemaRef('ApiKey'))) },
          ...authenticatedErrors({ 403: 'Forbidden', 404: 'NotFound' }),
        },
      },
      post: {
        tags: ['operators'],
        operationId: 'add_key',
        summary: 'Add an API key; the answer is the only place the key is shown',
        requestBody: {
          ...requestBody({ type: 'object', additionalProperties: false, maxProperties: 0 }),
          required: false,
        },
        responses: {
          201: {
            description: 'Created.',
            headers: LOCATION,
            content: jsonOrXml({ allOf: [schemaRef('ApiKey')], required: ['key'] }),
          },
          ...authenticatedErrors({ ...WRITE_ERRORS, 404: 'NotFound' }),
        },
      },
    },
    [`${API_ROOT}/operators/{id}/keys/{keyId}/`]: {
      delete: {
        tags: ['operators'],
        operationId: 'delete_key',
        summary: 'Revoke an API key',
        responses: { 204: { description: 'Deleted.' }, ...authenticatedErrors({ 403: 'Forbidden', 404: 'NotFound' }) },
      },
    },
    [`${API_ROOT}/whoami/`]: {
      get: {
        tags: ['operators'],
        operationId: 'whoami',
        summary: 'The operator the key belongs to, and which key it is (any role)',
        parameters: [format],
        responses: {
          200: {
            description: 'The operator, and which of its keys was used.',
            content: jsonOrXml(schemaRef('Whoami')),
          },
          ...authenticatedErrors(),
        },
      },
    },
    [`${API_ROOT}/session/`]: {
      get: {
        tags: ['operators'],
        operationId: 'show_session',
        summary: "Who the console's session cookie signs in (operator null when nobody)",
        security: PUBLIC,
        parameters: [format],
        responses: {
          200: { description: 'The session, or operator null.', content: jsonOrXml(schemaRef('Session')) },
          ...API_ERRORS,
        },
      },
      post: {
        tags: ['operators'],
        operationId: 'sign_in',
        summary:
          'Open a console session with the API key in the Authorization header; the answer sets an HttpOnly, SameSite=Strict cookie',
        requestBody: { ...requestBody({ type: 'object', additionalProperties: true }), required: false },
        responses: {
          201: {
            description: 'Signed in; Set-Cookie carries the session.',
            headers: LOCATION,
            content: jsonOrXml(schemaRef('Session')),
          },
          ...authenticatedErrors(),
        },
      },
      delete: {
        tags: ['operators'],
        operationId: 'sign_out',
        summary: 'Sign out: end the session the cookie names (cookie-authenticated, with X-Cairn-CSRF)',
        responses: {
          204: { description: 'Signed out; the cookie is cleared.' },
          ...authenticatedErrors({ 403: 'Forbidden' }),
        },
      },
    },
    [`${API_ROOT}/session/step_up/`]: {
      post: {
        tags: ['operators'],
        operationId: 'step_up',
        summary:
          "Confirm a console session by typing the operator's API key again: for a few minutes (CAIRN_CONSOLE_STEP_UP_SECONDS) it may mint API keys and operators, widen an operator and take a backup (cookie-authenticated, with X-Cairn-CSRF)",
        requestBody: requestBody({
          type: 'object',
          required: ['api_key'],
          additionalProperties: false,
          properties: { api_key: { type: 'string', minLength: 1, maxLength: 256 } },
        }),
        responses: {
          200: {
            description: 'Stepped up; `stepped_up_until` says until when.',
            content: jsonOrXml(schemaRef('Session')),
          },
          ...authenticatedErrors(WRITE_ERRORS),
        },
      },
    },
    ...utilizationPaths(),
    '/healthz': {
      get: {
        tags: ['probes'],
        operationId: 'healthz',
        summary: 'Liveness: the process answers',
        security: PUBLIC,
        responses: {
          200: {
            description: 'Alive.',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['status', 'version'],
                  additionalProperties: false,
                  properties: { status: { const: 'ok' }, version: { type: 'string' } },
                },
              },
            },
          },
        },
      },
    },
    '/readyz': {
      get: {
        tags: ['probes'],
        operationId: 'readyz',
        summary: 'Readiness: Postgres answers within 2 s',
        security: PUBLIC,
        responses: {
          200: { description: 'Ready.', content: { 'application/json': { schema: schemaRef('Probe') } } },
          503: {
            description: 'Not ready; names the dependency that did not answer.',
            content: { 'application/json': { schema: schemaRef('Probe') } },
          },
        },
      },
    },
    '/metrics': {
      get: {
        tags: ['probes'],
        operationId: 'metrics',
        summary: 'Prometheus metrics (serve on the internal network only)',
        security: PUBLIC,
        responses: {
          200: { description: 'Prometheus text format.', content: { 'text/plain': { schema: { type: 'string' } } } },
        },
      },
    },
  };
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** Every /api/v1/ path answers OPTIONS without a key, and 405 with `Allow` for a method it does not take. */
function finishApiPath(path: string, item: Record<string, JsonSchema>): Record<string, unknown> {
  const allowed = METHODS.filter((m) => item[m]).map((m) => m.toUpperCase());
  const templated = path.includes('{');
  return {
    ...(templated ? { parameters: pathParameters(path) } : {}),
    description: `Takes ${allowed.join(', ')}; any other method is answered 405 with \`Allow: ${allowed.join(',')}\` (before the key is checked), HEAD as GET without the body.`,
    ...item,
    options: {
      tags: ['discovery'],
      operationId: `options_${path.replace(/\W+/g, '_')}`,
      summary: 'The methods this path takes',
      security: PUBLIC,
      responses: { 200: responseRef('Options') },
    },
  };
}

function merge(
  into: Record<string, Record<string, JsonSchema>>,
  paths: Record<string, Record<string, JsonSchema>>,
): void {
  for (const [path, item] of Object.entries(paths)) {
    for (const method of Object.keys(item)) {
      if (into[path]?.[method]) throw new Error(`OpenAPI: ${method.toUpperCase()} ${path} is described twice`);
    }
    into[path] = { ...into[path], ...item };
  }
}

/** `discoverable`: the resources `GET /api/v1/` lists, each with a `/schema/`. Built once at start. */
export function openApiDocument(discoverable: readonly ResourceDef[]): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  merge(paths, handKeptPaths());
  merge(paths, ringPaths());
  merge(paths, healthPaths());
  merge(paths, selfServicePaths());
  for (const m of MOUNTED) merge(paths, resourcePaths(m));
  for (const r of discoverable) {
    const mounted = MOUNTED.find((m) => m.resource === r);
    if (!mounted) throw new Error(`OpenAPI: resource '${r.name}' is discoverable but not described`);
    merge(paths, { [`${API_ROOT}/${r.name}/schema/`]: schemaPath(mounted) });
  }
  const finished = Object.fromEntries(
    Object.keys(paths)
      .sort()
      .map((p) => [p, p.startsWith(`${API_ROOT}/`) ? finishApiPath(p, paths[p]!) : paths[p]]),
  );

  const schemas: Record<string, JsonSchema> = {
    ...SHARED_SCHEMAS,
    ...HAND_KEPT_SCHEMAS,
    ...HEALTH_SCHEMAS,
    ...SELF_SERVICE_SCHEMAS,
  };
  for (const m of MOUNTED) schemas[m.resource.name] = objectSchema(m.resource, 'omit');
  schemas.Whoami = objectSchema(operatorsResource, 'omit', {
    key_uri: {
      type: 'string',
      format: 'uri-reference',
      description: 'The resource of the API key the request was made with (never the key itself).',
    },
  });

  schemas.Session = {
    type: 'object',
    required: ['operator', 'resource_uri'],
    properties: {
      operator: {
        oneOf: [schemaRef('Whoami'), { type: 'null' }],
        description:
          'The signed-in operator and the key the session was opened with; null when the cookie names no live session.',
      },
      csrf_token: {
        type: 'string',
        description: 'Every cookie-authenticated write must send it back in the X-Cairn-CSRF header.',
      },
      expires_at: { type: 'string', format: 'date-time', description: 'When the session ends at the latest.' },
      idle_timeout: { type: 'integer', description: 'Seconds without a request after which the session ends.' },
      resource_uri: { type: 'string' },
      step_up_timeout: {
        type: 'integer',
        description: 'Seconds a step-up (POST session/step_up/) lasts.',
      },
      stepped_up_until: {
        type: ['string', 'null'],
        format: 'date-time',
        description:
          'Until when the session may mint API keys and operators, widen an operator and take a backup; null: not confirmed since sign-in.',
      },
    },
  };

  return {
    openapi: '3.1.0',
    info: {
      title: 'Cairn management API',
      version: 'v1',
      description:
        'Tastypie-style REST API for Swift clusters, their storage users and the operators who manage them. ' +
        'Answers are JSON (sorted keys), or XML with `?format=xml` or `Accept: application/xml`/`text/xml`. ' +
        'Bodies are JSON, form-encoded or tastypie XML. Send the key as `Authorization: ApiKey <operator>:<key>`; ' +
        'a key in the query string (`?username=&api_key=`) is refused.',
    },
    servers: [{ url: '/' }],
    security: [{ apiKey: [] }],
    tags: [
      'users',
      'clusters',
      'operators',
      'audit',
      'capacity',
      'rings',
      'health',
      'utilization',
      'self-service',
      'discovery',
      'probes',
    ].map((name) => ({
      name,
    })),
    paths: finished,
    components: {
      securitySchemes: {
        apiKey: {
          type: 'apiKey',
          in: 'header',
          name: 'Authorization',
          description: 'The value `ApiKey <operator>:<key>` (the scheme word in any case).',
        },
        storageUserSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'cairn_storage_session',
          description: "A storage user's console session (POST /api/v1/self/session/); writes also send X-Cairn-CSRF.",
        },
        storageUserToken: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Auth-Token',
          description:
            "A storage user's own token from its cluster's auth gateway (swift auth, or a Keystone V3 login), as Swift clients send it; taken by GET /api/v1/self/storage/ only.",
        },
      },
      parameters: COMMON_PARAMETERS,
      responses: ERROR_RESPONSES,
      schemas,
    },
  };
}
