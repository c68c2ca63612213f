import { errors } from '@cairn/domain';

export type Format = 'json' | 'xml';

const MEDIA_RANGE = /^[\w!#$%&'*+.^`|~-]+\/[\w!#$%&'*+.^`|~-]+$/;

/**
 * Tastypie's order: `?format=` (unknown values fall through), then `Accept` (best quality among
 * application/json, application/xml, text/xml), then JSON. A malformed Accept header is a 400.
 */
export function negotiateFormat(formatParam: unknown, accept: string | undefined): Format {
  if (formatParam === 'json' || formatParam === 'xml') return formatParam;
  if (!accept || !accept.trim()) return 'json';
  let best: { format: Format; q: number } | null = null;
  for (const part of accept.split(',')) {
    const [rangeRaw, ...params] = part.split(';');
    const range = (rangeRaw ?? '').trim().toLowerCase();
    if (!range && params.length === 0) continue;
    if (!MEDIA_RANGE.test(range)) throw errors.invalidInput('Invalid Accept header');
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split('=').map((s) => s.trim());
      if (k?.toLowerCase() === 'q') {
        q = Number(v);
        if (!Number.isFinite(q) || q < 0 || q > 1) throw errors.invalidInput('Invalid Accept header');
      }
    }
    const format: Format | null =
      range === 'application/json' ? 'json' : range === 'application/xml' || range === 'text/xml' ? 'xml' : null;
    if (format && q > 0 && (!best || q > best.q)) best = { format, q };
  }
  return best?.format ?? 'json';
}

export const CONTENT_TYPES: Record<Format, string> = {
  json: 'application/json',
  xml: 'application/xml; charset=utf-8',
};
