import type { QueryParams } from './filters';

/**
 * Tastypie's list envelope. `next`/`previous` are relative: the list path, the request's other query
 * parameters in their original order (form-encoded as Python's urlencode does), then limit and offset.
 */
export interface Meta {
  limit: number;
  next: string | null;
  offset: number | string;
  previous: string | null;
  total_count: number;
}

// Python's quote_plus keeps only letters, digits and "_.-~"; encodeURIComponent also keeps "!'()*".
// Most keys and values (limit, offset, a cluster's id) need no encoding at all: returned as they are.
const PLAIN = /^[\w.~-]*$/;
const formEncode = (s: string): string =>
  PLAIN.test(s)
    ? s
    : encodeURIComponent(s)
        .replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
        .replace(/%20/g, '+');

function pageUrl(path: string, params: QueryParams, limit: number, offset: bigint): string {
  const kept = params.filter(([k]) => k !== 'limit' && k !== 'offset' && k !== 'api_key' && k !== 'username');
  const pairs = [...kept, ['limit', String(limit)], ['offset', offset.toString()]];
  return `${path}?${pairs.map(([k, v]) => `${formEncode(k!)}=${formEncode(v!)}`).join('&')}`;
}

/** JSON numbers above 2^53 would lose digits; such an offset is echoed as a string instead. */
const offsetValue = (offset: bigint): number | string =>
  offset <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(offset) : offset.toString();

export function buildMeta(path: string, params: QueryParams, limit: number, offset: bigint, total: number): Meta {
  const l = BigInt(limit);
  return {
    limit,
    next: offset + l >= BigInt(total) ? null : pageUrl(path, params, limit, offset + l),
    offset: offsetValue(offset),
    previous: offset - l < 0n ? null : pageUrl(path, params, limit, offset - l),
    total_count: total,
  };
}
