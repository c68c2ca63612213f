import { MAX_ROUND_NODES, RECON_KEYS, SERVER_TYPES, healthThresholdsSchema } from '@cairn/domain';
import { healthThresholdsResource } from '../routes/health-resources';
import { API_ROOT } from '../resources/uris';
import { authenticatedErrors, bodySchema, requestBody, WRITE_ERRORS } from './resources';
import { jsonOrXml, objectSchema, schemaRef, type JsonSchema } from './schemas';

/** Cluster health's hand-kept paths and schemas (the history list is a mounted resource). */

const dateTime = { type: 'string', format: 'date-time' };
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' };

export const HEALTH_SCHEMAS: Record<string, JsonSchema> = {
  HealthRound: {
    type: 'object',
    required: ['collected_at', 'nodes', 'ring_md5'],
    additionalProperties: false,
    properties: {
      collected_at: { ...dateTime, description: "When the round started, by the collector's clock." },
      ring_md5: {
        type: 'object',
        description: "The md5 of each of the cluster's current ring files, by file name (object.ring.gz, …).",
        additionalProperties: { type: 'string', pattern: '^[0-9a-f]{32}$' },
      },
      nodes: {
        type: 'array',
        maxItems: MAX_ROUND_NODES,
        items: {
          type: 'object',
          required: ['answered', 'elapsed_ms', 'node', 'server_types'],
          additionalProperties: false,
          properties: {
            node: { type: 'string', description: 'ip:port of the storage server, as in the ring.' },
            server_types: { type: 'array', items: { type: 'string', enum: [...SERVER_TYPES] }, uniqueItems: true },
            answered: { type: 'boolean', description: 'False when every endpoint failed ("error" says why).' },
            error: { type: ['string', 'null'] },
            elapsed_ms: {
              type: 'integer',
              minimum: 0,
              description: 'Milliseconds the node took to answer every endpoint (the clock-skew check allows for it).',
            },
            recon: {
              type: 'object',
              additionalProperties: false,
              description: 'Each recon endpoint\'s JSON as Swift returned it, or {"error": "…"}; at most 64 KiB each.',
              properties: Object.fromEntries(RECON_KEYS.map((k) => [k, {}])),
            },
          },
        },
      },
    },
  },
  health_thresholds: objectSchema(healthThresholdsResource, 'omit'),
};

const HEALTH_NODE: JsonSchema = {
  type: 'object',
  required: [
    'answered',
    'async_pending',
    'collected_at',
    'devices',
    'error',
    'last_seen',
    'node',
    'quarantined',
    'replication',
    'replication_passes',
    'server_types',
  ],
  additionalProperties: false,
  properties: {
    answered: { type: 'boolean' },
    async_pending: { type: ['integer', 'null'] },
    collected_at: dateTime,
    devices: {
      type: 'array',
      items: {
        type: 'object',
        required: ['device', 'fill_pct', 'mounted', 'size_bytes', 'used_bytes'],
        additionalProperties: false,
        properties: {
          device: { type: 'string' },
          fill_pct: { type: ['number', 'null'] },
          mounted: { type: 'boolean' },
          size_bytes: { type: ['integer', 'null'] },
          used_bytes: { type: ['integer', 'null'] },
        },
      },
    },
    error: { type: ['string', 'null'] },
    last_seen: { ...nullableDateTime, description: 'When the node last answered; null if it never has.' },
    node: { type: 'string' },
    quarantined: { type: ['integer', 'null'] },
    replication: {
      type: 'object',
      description:
        'Per server type the node serves, when its replicator last completed a pass (null: never, or not read).',
      additionalProperties: nullableDateTime,
    },
    replication_passes: {
      type: 'object',
      description:
        "Per server type the node serves, its replicator's last completed pass (null: never, or not read): when it ended, its length in seconds and the partitions it attempted (null where recon does not say). Partitions over seconds is the node's measured replication rate.",
      additionalProperties: {
        type: ['object', 'null'],
        required: ['ended_at', 'seconds', 'partitions'],
        additionalProperties: false,
        properties: {
          ended_at: dateTime,
          seconds: { type: ['number', 'null'], minimum: 0 },
          partitions: { type: ['integer', 'null'], minimum: 0 },
        },
      },
    },
    server_types: { type: 'array', items: { type: 'string' } },
  },
};

const format = { $ref: '#/components/parameters/format' };

export function healthPaths(): Record<string, Record<string, JsonSchema>> {
  const thresholdsBody = bodySchema(healthThresholdsResource, healthThresholdsSchema, false);
  return {
    [`${API_ROOT}/clusters/{id}/health/rounds/`]: {
      post: {
        tags: ['health'],
        operationId: 'record_health_round',
        summary: "Record a health round: every storage node's recon, as `cairn health collect` read it",
        description:
          'Writers on the cluster. Up to 100 MB; nothing is written unless all of it is valid. A round older than the latest is refused; the latest posted again is answered as the first time. Not audited (a collector write, as device reports).',
        requestBody: { required: true, content: { 'application/json': { schema: schemaRef('HealthRound') } } },
        responses: {
          201: {
            description: 'Stored; the findings are brought up to date.',
            content: jsonOrXml({
              type: 'object',
              required: ['id', 'open_findings'],
              additionalProperties: false,
              properties: {
                id: { type: 'integer', description: "The round's id." },
                open_findings: { type: 'integer', description: 'How many findings are open after it.' },
              },
            }),
          },
          ...authenticatedErrors({ ...WRITE_ERRORS, 404: 'NotFound' }),
        },
      },
    },
    [`${API_ROOT}/clusters/{id}/health/`]: {
      get: {
        tags: ['health'],
        operationId: 'cluster_health',
        summary: "A cluster's health: status, open findings and each storage node's latest word",
        parameters: [format],
        responses: {
          200: {
            description: 'status is unknown before the first round.',
            content: jsonOrXml({
              type: 'object',
              required: ['collected_at', 'findings', 'nodes', 'status', 'thresholds'],
              additionalProperties: false,
              properties: {
                collected_at: { ...nullableDateTime, description: 'The latest round’s time.' },
                findings: { type: 'array', items: schemaRef('health_findings') },
                nodes: { type: 'array', items: HEALTH_NODE },
                status: { type: 'string', enum: ['ok', 'warning', 'critical', 'unknown'] },
                thresholds: schemaRef('health_thresholds'),
              },
            }),
          },
          ...authenticatedErrors({ 404: 'NotFound' }),
        },
      },
    },
    [`${API_ROOT}/clusters/{id}/health/thresholds/`]: {
      get: {
        tags: ['health'],
        operationId: 'health_thresholds',
        summary: "A cluster's health thresholds (defaults where none was set)",
        parameters: [format],
        responses: {
          200: { description: 'Every threshold.', content: jsonOrXml(schemaRef('health_thresholds')) },
          ...authenticatedErrors({ 404: 'NotFound' }),
        },
      },
      put: {
        tags: ['health'],
        operationId: 'replace_health_thresholds',
        summary: "Replace a cluster's health thresholds: any subset; omitted or null takes the default",
        description: 'Writers on the cluster; audited. Applies from the next round.',
        requestBody: requestBody(thresholdsBody),
        responses: {
          200: { description: 'Every threshold, as now in force.', content: jsonOrXml(schemaRef('health_thresholds')) },
          ...authenticatedErrors({ ...WRITE_ERRORS, 404: 'NotFound' }),
        },
      },
    },
  };
}
