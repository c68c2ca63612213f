/**
 * The transfer figures a record carries besides its totals (`bytes_in`, `bytes_out`, `req_count`),
 * declared once: the log reader fills them, the API's record schema, columns, detail and summary
 * fields (and so the CSV and OpenAPI document) are read from this table, in this order.
 *
 * - Request classes partition `req_count` (each request is in exactly one of the eight);
 *   `req_errors` counts those of them that failed (status 4xx, 5xx or 499, a client disconnect).
 * - `s3_*` is the share of the totals that came through the S3 API (s3api); the Swift API's share is
 *   the total less it.
 * - `internal_*` is the share from the provider's internal networks (the log reader's
 *   CAIRN_UTILIZATION_INTERNAL_NETWORKS); external traffic is the total less it.
 *
 * Records written before these existed hold 0 in all of them: their hours are known by totals only.
 */
export const TRANSFER_CLASSES = ['get', 'head', 'put', 'post', 'delete', 'list', 'copy', 'other'] as const;
export type TransferClass = (typeof TRANSFER_CLASSES)[number];

export const TRANSFER_DETAIL_FIELDS = {
  req_get: 'GET requests of an object.',
  req_head: 'HEAD requests (account, container or object).',
  req_put: 'PUT requests (uploads, container creation), server-side copies excepted.',
  req_post: 'POST requests (metadata updates; S3 multipart start and completion, multi-object delete).',
  req_delete: 'DELETE requests.',
  req_list: 'Listings: GET of an account or a container (S3: of the service or a bucket).',
  req_copy: 'Server-side copies: COPY, a PUT with X-Copy-From, an S3 PUT with x-amz-copy-source.',
  req_other: 'Other HTTP methods (OPTIONS, CORS pre-flight, and the like).',
  req_errors: 'Requests of any class that failed: status 4xx, 5xx or 499 (the client disconnected).',
  s3_bytes_in: 'bytes_in through the S3 API (the Swift API: bytes_in less this).',
  s3_bytes_out: 'bytes_out through the S3 API.',
  s3_req_count: 'Requests through the S3 API.',
  internal_bytes_in: 'bytes_in from internal networks (external: bytes_in less this).',
  internal_bytes_out: 'bytes_out to internal networks (external egress: bytes_out less this).',
  internal_req_count: 'Requests from internal networks.',
} as const;
export type TransferDetailField = keyof typeof TRANSFER_DETAIL_FIELDS;
export const TRANSFER_DETAIL_FIELD_NAMES = Object.keys(TRANSFER_DETAIL_FIELDS) as TransferDetailField[];
/** Every detail field at 0: a record without transfer, or written before the fields existed. Shared: never written. */
export const ZERO_TRANSFER_DETAIL: Readonly<Record<TransferDetailField, number>> = Object.freeze(
  Object.fromEntries(TRANSFER_DETAIL_FIELD_NAMES.map((f) => [f, 0])) as Record<TransferDetailField, number>,
);

/** The record field counting a class. */
export const classField = (c: TransferClass): TransferDetailField => `req_${c}`;
