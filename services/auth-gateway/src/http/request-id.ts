import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestIdOptions } from '@cairn/runtime';
import { randomText } from '../tokens/random';

/** Swift's transaction id shape: tx + 21 hex + '-' + the epoch second in hex. */
export const transId = (): string =>
  `tx${randomText(11, 'hex').slice(0, 21)}-${Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(10, '0')}`;

/**
 * One id per request, in the response headers and on every log line: the caller's (a load
 * balancer's X-Request-Id, a Swift proxy's X-Trans-Id, a Keystone client's
 * X-Openstack-Request-Id) when well-formed, else a new one shaped like the API's own — Swift's
 * tx… under /auth/v1, Keystone's req-<uuid> elsewhere. Keystone clients read
 * X-Openstack-Request-Id, so it is sent too; V1 answers add X-Trans-Id (swift-v1.ts).
 */
export const GATEWAY_REQUEST_ID: RequestIdOptions = {
  accept: ['x-request-id', 'x-trans-id', 'x-openstack-request-id'],
  pattern: /^[\w.-]{1,128}$/,
  generate: (req: IncomingMessage) =>
    req.url !== undefined && req.url.startsWith('/auth/v1') ? transId() : `req-${randomUUID()}`,
  echo: ['X-Request-Id', 'X-Openstack-Request-Id'],
};
