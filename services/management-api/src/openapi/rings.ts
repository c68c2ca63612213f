import { API_ROOT } from '../resources/uris';
import { authenticatedErrors, WRITE_ERRORS } from './resources';
import { jsonOrXml, schemaRef, type JsonSchema } from './schemas';

/** The ring files' paths (not tastypie resources: a binary body in, a binary file out). */

const ETAG = {
  description: 'The md5 (hex) of the file, quoted: send it back in If-None-Match.',
  required: true,
  schema: { type: 'string', pattern: '^"[0-9a-f]{32}"$' },
};
const VERSION = {
  description: 'The number of the version served.',
  required: true,
  schema: { type: 'string', pattern: '^[0-9]+$' },
};

const format = { $ref: '#/components/parameters/format' };

export function ringPaths(): Record<string, Record<string, JsonSchema>> {
  const base = `${API_ROOT}/clusters/{id}/rings/{ring}`;
  return {
    [`${base}.ring.gz`]: {
      get: {
        tags: ['rings'],
        operationId: 'ring_file',
        summary: "The current version of a cluster's ring, as Swift reads it (what `cairn rings pull` installs)",
        parameters: [
          {
            name: 'If-None-Match',
            in: 'header',
            required: false,
            description: 'The ETag of the file the node has: 304 while it is still the current one.',
            schema: { type: 'string' },
          },
        ],
        responses: {
          200: {
            description: 'The .ring.gz file.',
            headers: { ETag: ETAG, 'X-Cairn-Ring-Version': VERSION },
            content: {
              'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
            },
          },
          304: {
            description: 'The node has the current version.',
            headers: { ETag: ETAG, 'X-Cairn-Ring-Version': VERSION },
          },
          ...authenticatedErrors({ 404: 'NotFound' }),
        },
      },
    },
    [`${base}/`]: {
      post: {
        tags: ['rings'],
        operationId: 'push_ring',
        summary: "Store a ring file as its ring's new current version (what `cairn rings push` sends)",
        description:
          'The body is the `.ring.gz` file itself (`Content-Type: application/octet-stream`, up to 64 MB). It must be a valid Swift ring (every partition assignment is read) with the part power of the current version. The same bytes as the current version are no new version (200).',
        parameters: [
          format,
          {
            name: 'X-Cairn-Plan-Id',
            in: 'header',
            required: false,
            description: 'The plan the ring comes from (or `?plan_id=`).',
            schema: { type: 'string' },
          },
          {
            name: 'X-Cairn-Plan-Step',
            in: 'header',
            required: false,
            description: "That plan's step (or `?plan_step=`).",
            schema: { type: 'string', pattern: '^[0-9]+$' },
          },
          {
            name: 'X-Cairn-Plan',
            in: 'header',
            required: false,
            description: 'The plan JSON, base64-encoded (at most 12 KiB).',
            schema: { type: 'string' },
          },
        ],
        requestBody: {
          required: true,
          content: {
            'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } },
          },
        },
        responses: {
          200: {
            description: 'The current version already has these bytes; nothing changed.',
            content: jsonOrXml(schemaRef('rings')),
          },
          201: { description: 'Stored as the new current version.', content: jsonOrXml(schemaRef('rings')) },
          ...authenticatedErrors({ ...WRITE_ERRORS, 404: 'NotFound', 409: 'Conflict' }),
        },
      },
    },
    [`${base}/rollback/`]: {
      post: {
        tags: ['rings'],
        operationId: 'rollback_ring',
        summary: 'Make the version before the current one current again (the newer one stays listed)',
        parameters: [format],
        responses: {
          200: { description: 'The version that is now current.', content: jsonOrXml(schemaRef('rings')) },
          ...authenticatedErrors({ 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict' }),
        },
      },
    },
  };
}
