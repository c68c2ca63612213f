import {
  containerAclSchema,
  selfApplicationCredentialCreateSchema,
  selfS3CredentialCreateSchema,
  storageSignInSchema,
  tempUrlKeyActionSchema,
  tempUrlRequestSchema,
} from '@cairn/domain';
import { API_ROOT } from '../resources/uris';
import { jsonSchemaOfJoi } from './joi-schema';
import { API_ERRORS, authenticatedErrors, LOCATION, requestBody } from './resources';
import { jsonOrXml, responseRef, schemaRef, type JsonSchema } from './schemas';

/** The storage users' self-service paths (routes/self.ts) and their shapes. */

const PUBLIC: JsonSchema[] = [];
const format = { $ref: '#/components/parameters/format' };
const pathParameter = (name: string, description: string): JsonSchema => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});
/** The gateway's refusals come back with their status and sentence (services/self-keys.ts). */
const GATEWAY_REFUSALS = { 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict' };
const listOf = (item: string): JsonSchema => ({
  type: 'object',
  required: ['objects', 'resource_uri'],
  properties: { objects: { type: 'array', items: schemaRef(item) }, resource_uri: { type: 'string' } },
});
const COOKIE: JsonSchema[] = [{ storageUserSession: [] }];
const amount = (description: string): JsonSchema => ({
  type: ['integer', 'string', 'null'],
  description: `${description} A decimal string above 2^53; null when unknown.`,
});

export function selfServicePaths(): Record<string, Record<string, JsonSchema>> {
  return {
    [`${API_ROOT}/self/session/`]: {
      get: {
        tags: ['self-service'],
        operationId: 'show_storage_session',
        summary: "Who the storage user's session cookie signs in (user null when nobody)",
        security: PUBLIC,
        parameters: [format],
        responses: {
          200: { description: 'The session, or user null.', content: jsonOrXml(schemaRef('StorageSession')) },
          ...API_ERRORS,
        },
      },
      post: {
        tags: ['self-service'],
        operationId: 'storage_sign_in',
        summary:
          "Sign in as a storage user, with user and password or with an application credential (application_credential_secret and application_credential_id, or application_credential_name and user): the cluster's auth gateway checks them under its failed-login limits; the answer sets an HttpOnly, SameSite=Strict cookie",
        security: PUBLIC,
        requestBody: requestBody(jsonSchemaOfJoi(storageSignInSchema)),
        responses: {
          201: {
            description: 'Signed in; Set-Cookie carries the session.',
            headers: LOCATION,
            content: jsonOrXml(schemaRef('StorageSession')),
          },
          // An application credential with access rules: right, but too narrow for a console session.
          ...authenticatedErrors({ 403: 'Forbidden', 415: 'UnsupportedMediaType' }),
          429: responseRef('TooManyRequests'),
        },
      },
      delete: {
        tags: ['self-service'],
        operationId: 'storage_sign_out',
        summary: 'Sign out: end the storage session the cookie names (with X-Cairn-CSRF)',
        security: COOKIE,
        responses: {
          204: { description: 'Signed out; the cookie is cleared.' },
          ...authenticatedErrors({ 403: 'Forbidden' }),
        },
      },
    },
    [`${API_ROOT}/self/storage/`]: {
      get: {
        tags: ['self-service'],
        operationId: 'my_storage',
        summary:
          "The signed-in storage user's own account: usage against its quotas, per storage policy, and 30 days of storage and transfer; with the session cookie, or with the user's own gateway token (X-Auth-Token), which the cluster's gateway checks",
        security: [...COOKIE, { storageUserToken: [] }],
        parameters: [format],
        responses: {
          200: { description: "The account's figures.", content: jsonOrXml(schemaRef('MyStorage')) },
          ...authenticatedErrors({ 403: 'Forbidden' }),
        },
      },
    },
    [`${API_ROOT}/self/s3_credentials/`]: {
      get: {
        tags: ['self-service'],
        operationId: 'list_my_s3_credentials',
        summary: "The signed-in storage user's own S3 credentials (without secrets), from its cluster's gateway",
        security: COOKIE,
        parameters: [format],
        responses: {
          200: { description: 'Every one of them.', content: jsonOrXml(listOf('MyS3Credential')) },
          ...authenticatedErrors(),
          429: responseRef('TooManyRequests'),
        },
      },
      post: {
        tags: ['self-service'],
        operationId: 'create_my_s3_credential',
        summary:
          "A new S3 credential for the signed-in storage user, made by its cluster's gateway (OS-EC2) with the user's token; the secret is in this answer only (with X-Cairn-CSRF)",
        security: COOKIE,
        requestBody: requestBody(jsonSchemaOfJoi(selfS3CredentialCreateSchema)),
        responses: {
          201: {
            description: 'Made; `secret` is shown this once.',
            headers: LOCATION,
            content: jsonOrXml(schemaRef('MyS3Credential')),
          },
          ...authenticatedErrors({ ...GATEWAY_REFUSALS, 415: 'UnsupportedMediaType' }),
          429: responseRef('TooManyRequests'),
        },
      },
    },
    [`${API_ROOT}/self/s3_credentials/{access_key}/`]: {
      delete: {
        tags: ['self-service'],
        operationId: 'delete_my_s3_credential',
        summary: "Deletes one of the signed-in storage user's own S3 credentials (with X-Cairn-CSRF)",
        security: COOKIE,
        parameters: [pathParameter('access_key', 'The access key.')],
        responses: {
          204: { description: 'Deleted: S3 requests signed with it are refused from now on.' },
          ...authenticatedErrors(GATEWAY_REFUSALS),
          429: responseRef('TooManyRequests'),
        },
      },
    },
    [`${API_ROOT}/self/application_credentials/`]: {
      get: {
        tags: ['self-service'],
        operationId: 'list_my_application_credentials',
        summary:
          "The signed-in storage user's own application credentials (without secrets), from its cluster's gateway",
        security: COOKIE,
        parameters: [format],
        responses: {
          200: { description: 'Every one of them.', content: jsonOrXml(listOf('MyApplicationCredential')) },
          ...authenticatedErrors(),
          429: responseRef('TooManyRequests'),
        },
      },
      post: {
        tags: ['self-service'],
        operationId: 'create_my_application_credential',
        summary:
          "A new application credential for the signed-in storage user, made by its cluster's gateway with the user's token; the secret is in this answer only (with X-Cairn-CSRF)",
        security: COOKIE,
        requestBody: requestBody(jsonSchemaOfJoi(selfApplicationCredentialCreateSchema)),
        responses: {
          201: {
            description: 'Made; `secret` is shown this once.',
            headers: LOCATION,
            content: jsonOrXml(schemaRef('MyApplicationCredential')),
          },
          ...authenticatedErrors({ ...GATEWAY_REFUSALS, 415: 'UnsupportedMediaType' }),
          429: responseRef('TooManyRequests'),
        },
      },
    },
    [`${API_ROOT}/self/application_credentials/{id}/`]: {
      delete: {
        tags: ['self-service'],
        operationId: 'delete_my_application_credential',
        summary:
          "Deletes one of the signed-in storage user's own application credentials, and the S3 keys made with it (with X-Cairn-CSRF)",
        security: COOKIE,
        parameters: [pathParameter('id', "The credential's id.")],
        responses: {
          204: { description: 'Deleted: logins with it and the tokens it gave are refused from now on.' },
          ...authenticatedErrors(GATEWAY_REFUSALS),
          429: responseRef('TooManyRequests'),
        },
      },
    },
    [`${API_ROOT}/self/containers/`]: {
      get: {
        tags: ['self-service'],
        operationId: 'list_my_containers',
        summary:
          "The signed-in storage user's containers with their read and write ACLs, from its cluster's Swift, 200 at a time (`truncated` says when there are more; `?marker=<next_marker>` lists the next ones)",
        security: COOKIE,
        parameters: [
          format,
          {
            name: 'marker',
            in: 'query',
            required: false,
            description: "List the containers after this name (the previous page's next_marker).",
            schema: { type: 'string', maxLength: 256 },
          },
        ],
        responses: {
          200: {
            description: 'The containers.',
            content: jsonOrXml({
              type: 'object',
              required: ['next_marker', 'objects', 'resource_uri', 'truncated'],
              properties: {
                next_marker: {
                  type: ['string', 'null'],
                  description: 'The marker of the next page (the last name listed) when truncated; else null.',
                },
                objects: { type: 'array', items: schemaRef('MyContainer') },
                resource_uri: { type: 'string' },
                truncated: { type: 'boolean', description: 'More containers than listed.' },
              },
            }),
          },
          ...authenticatedErrors({ 403: 'Forbidden' }),
        },
      },
    },
    [`${API_ROOT}/self/containers/{container}/`]: {
      get: {
        tags: ['self-service'],
        operationId: 'show_my_container',
        summary: "One of the signed-in storage user's containers with its ACLs",
        security: COOKIE,
        parameters: [pathParameter('container', "The container's name."), format],
        responses: {
          200: { description: 'The container.', content: jsonOrXml(schemaRef('MyContainer')) },
          ...authenticatedErrors({ 403: 'Forbidden', 404: 'NotFound' }),
        },
      },
      put: {
        tags: ['self-service'],
        operationId: 'set_my_container_acls',
        summary:
          "Sets the container's read and write ACLs from these choices; every user named must exist in the cluster, or nothing is set (with X-Cairn-CSRF)",
        security: COOKIE,
        parameters: [pathParameter('container', "The container's name.")],
        requestBody: requestBody(jsonSchemaOfJoi(containerAclSchema)),
        responses: {
          200: { description: 'Set; the container as Swift now has it.', content: jsonOrXml(schemaRef('MyContainer')) },
          ...authenticatedErrors({ 403: 'Forbidden', 404: 'NotFound', 415: 'UnsupportedMediaType' }),
        },
      },
    },
    [`${API_ROOT}/self/temp_url_keys/`]: {
      get: {
        tags: ['self-service'],
        operationId: 'show_my_temp_url_keys',
        summary:
          "Whether the account has temp-URL keys (never the keys), and whether the cluster's Swift makes temporary URLs at all (its /info)",
        security: COOKIE,
        parameters: [format],
        responses: {
          200: { description: 'The keys.', content: jsonOrXml(schemaRef('MyTempUrlKeys')) },
          ...authenticatedErrors({ 403: 'Forbidden' }),
        },
      },
      post: {
        tags: ['self-service'],
        operationId: 'change_my_temp_url_keys',
        summary:
          'Sets, rotates (the current key moves to Temp-URL-Key-2, so its links keep working) or drops the previous temp-URL key; keys are made on the server (with X-Cairn-CSRF)',
        security: COOKIE,
        requestBody: requestBody(jsonSchemaOfJoi(tempUrlKeyActionSchema)),
        responses: {
          200: { description: 'Done.', content: jsonOrXml(schemaRef('MyTempUrlKeys')) },
          ...authenticatedErrors({ 403: 'Forbidden', 415: 'UnsupportedMediaType' }),
        },
      },
    },
    [`${API_ROOT}/self/temp_urls/`]: {
      post: {
        tags: ['self-service'],
        operationId: 'create_my_temp_url',
        summary:
          "A temporary URL for one object of the account, signed (HMAC-SHA256, as Swift's tempurl checks it) with the account's current key; 409 when the cluster has no tempurl or the account no key (with X-Cairn-CSRF)",
        security: COOKIE,
        requestBody: requestBody(jsonSchemaOfJoi(tempUrlRequestSchema)),
        responses: {
          201: { description: 'The URL.', content: jsonOrXml(schemaRef('MyTempUrl')) },
          ...authenticatedErrors({ 403: 'Forbidden', 409: 'Conflict', 415: 'UnsupportedMediaType' }),
        },
      },
    },
  };
}

export const SELF_SERVICE_SCHEMAS: Record<string, JsonSchema> = {
  MyContainer: {
    type: 'object',
    required: ['name', 'object_count', 'bytes_used', 'public_read', 'public_listings', 'read', 'write', 'resource_uri'],
    properties: {
      name: { type: 'string' },
      object_count: { type: 'integer' },
      bytes_used: { type: 'integer' },
      public_read: {
        type: 'boolean',
        description: 'X-Container-Read holds `.r:*`: anyone may read objects, without a token.',
      },
      public_listings: {
        type: 'boolean',
        description: 'X-Container-Read holds `.rlistings`: whoever may read may list the container too.',
      },
      read: { $ref: '#/components/schemas/MyContainerAcl' },
      write: { $ref: '#/components/schemas/MyContainerAcl' },
      resource_uri: { type: 'string' },
    },
  },
  MyContainerAcl: {
    type: 'object',
    required: ['users', 'other'],
    properties: {
      users: {
        type: 'array',
        items: { type: 'string' },
        description: 'Other users of the cluster, by name (`<user>:<user>` in Swift).',
      },
      other: {
        type: 'array',
        items: { type: 'string' },
        description: 'Entries none of the choices means (set by other tools); kept as they are when the ACLs are set.',
      },
    },
  },
  MyTempUrlKeys: {
    type: 'object',
    required: ['key_set', 'previous_key_set', 'tempurl', 'tempurl_methods', 'max_lifetime_seconds', 'resource_uri'],
    properties: {
      key_set: { type: 'boolean', description: 'X-Account-Meta-Temp-URL-Key is set: new links are signed with it.' },
      previous_key_set: {
        type: 'boolean',
        description: 'X-Account-Meta-Temp-URL-Key-2 is set: links made before the last rotation still work.',
      },
      tempurl: { type: 'boolean', description: "The cluster's Swift has tempurl (with SHA-256) in its /info." },
      tempurl_methods: { type: 'array', items: { type: 'string' } },
      max_lifetime_seconds: { type: 'integer', description: 'The longest lifetime a temporary URL may have here.' },
      resource_uri: { type: 'string' },
    },
  },
  MyTempUrl: {
    type: 'object',
    required: ['url', 'method', 'expires_at', 'resource_uri'],
    properties: {
      url: { type: 'string', description: 'Works for `method` until `expires_at`, for anyone who has it.' },
      method: { type: 'string' },
      expires_at: { type: 'string', format: 'date-time' },
      resource_uri: { type: 'string' },
    },
  },
  StorageSession: {
    type: 'object',
    required: ['user', 'resource_uri'],
    properties: {
      user: {
        type: ['string', 'null'],
        description: 'The signed-in user; null when the cookie names no live session.',
      },
      cluster: { type: 'string', description: "The user's cluster, by name." },
      account: { type: 'string', description: 'The Swift account, `AUTH_<user>`.' },
      csrf_token: {
        type: 'string',
        description: 'Every cookie-authenticated write must send it back in the X-Cairn-CSRF header.',
      },
      expires_at: { type: 'string', format: 'date-time', description: 'When the session ends at the latest.' },
      idle_timeout: { type: 'integer', description: 'Seconds without a request after which the session ends.' },
      resource_uri: { type: 'string' },
    },
  },
  MyS3Credential: {
    type: 'object',
    required: ['access_key', 'expires_at', 'resource_uri'],
    properties: {
      access_key: { type: 'string' },
      expires_at: {
        type: ['string', 'null'],
        format: 'date-time',
        description: 'When it stops working; null: never.',
      },
      secret: { type: 'string', description: 'Only in the answer that creates it.' },
      resource_uri: { type: 'string' },
    },
  },
  MyApplicationCredential: {
    type: 'object',
    required: ['id', 'name', 'description', 'expires_at', 'unrestricted', 'roles', 'access_rules', 'resource_uri'],
    properties: {
      id: { type: 'string' },
      name: { type: 'string' },
      description: { type: ['string', 'null'] },
      expires_at: {
        type: ['string', 'null'],
        format: 'date-time',
        description: 'When it stops working; null: never.',
      },
      unrestricted: {
        type: 'boolean',
        description: "Whether its tokens may make and delete credentials (false: they may not, as Keystone's default).",
      },
      roles: { type: 'array', items: { type: 'string' } },
      access_rules: {
        type: 'array',
        description: 'The only object-store requests its tokens may make; empty: any of its roles allow.',
        items: {
          type: 'object',
          required: ['id', 'service', 'method', 'path'],
          properties: {
            id: { type: 'string' },
            service: { type: 'string' },
            method: { type: 'string' },
            path: { type: 'string' },
          },
        },
      },
      secret: { type: 'string', description: 'Only in the answer that creates it.' },
      resource_uri: { type: 'string' },
    },
  },
  MyStorage: {
    type: 'object',
    required: [
      'account',
      'bytes_used',
      'cluster',
      'days',
      'object_count',
      'policies',
      'quota_bytes',
      'quota_count',
      'usage_sampled_at',
      'user',
    ],
    properties: {
      account: { type: 'string' },
      cluster: { type: 'string' },
      user: { type: 'string' },
      bytes_used: amount("Bytes the account held at the latest storage sample (every policy's)."),
      object_count: amount('Objects the account held at the latest storage sample.'),
      quota_bytes: amount('The byte quota.'),
      quota_count: amount('The object quota.'),
      usage_sampled_at: {
        type: ['string', 'null'],
        format: 'date-time',
        description: 'The hour of the latest storage sample; null before the first.',
      },
      policies: {
        type: 'array',
        description: "Each of the cluster's storage policies, at the same sample as the totals.",
        items: {
          type: 'object',
          required: ['index', 'name', 'bytes_used', 'object_count', 'quota_bytes', 'quota_count'],
          properties: {
            index: { type: 'integer' },
            name: { type: 'string' },
            bytes_used: amount('Bytes under this policy.'),
            object_count: amount('Objects under this policy.'),
            quota_bytes: amount("This policy's byte quota."),
            quota_count: amount("This policy's object quota."),
          },
        },
      },
      days: {
        type: 'array',
        description: 'The last 30 UTC days, oldest first, today included.',
        items: {
          type: 'object',
          required: ['day', 'bytes_used', 'object_count', 'bytes_in', 'bytes_out', 'requests'],
          properties: {
            day: { type: 'string', format: 'date' },
            bytes_used: { type: ['integer', 'null'], description: "The day's last storage sample; null: none." },
            object_count: { type: ['integer', 'null'] },
            bytes_in: amount('Bytes uploaded that day (Swift and S3).'),
            bytes_out: amount('Bytes downloaded that day.'),
            requests: amount('Requests that day.'),
          },
        },
      },
      resource_uri: { type: 'string' },
    },
  },
};
