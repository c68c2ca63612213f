import { errors } from '@cairn/domain/errors';
import { api, apiError, type ApiTarget } from '../api-client';

export interface Page {
  meta: { next: string | null; total_count: number };
  objects: Record<string, unknown>[];
}

/** `--filter user__startswith=a` (repeatable) as query parameters, Tastypie style. */
export function filterParams(filters: string[] = []): [string, string][] {
  return filters.map((f) => {
    const eq = f.indexOf('=');
    if (eq < 1)
      throw errors.invalidInput(`--filter '${f}' must be <field>[__<lookup>]=<value>, e.g. user__startswith=a.`);
    return [f.slice(0, eq), f.slice(eq + 1)];
  });
}

/**
 * Every object of a list endpoint: follows `meta.next` through every page, unless `limit` is
 * given, in which case at most that many (one request when it fits in a page).
 */
export async function listAll(
  target: ApiTarget,
  path: string,
  params: [string, string][],
  limit?: number,
  pageSize = 1000,
): Promise<Record<string, unknown>[]> {
  const query = new URLSearchParams(params);
  query.set('limit', String(limit === undefined ? pageSize : Math.min(limit, pageSize)));
  let next: string | null = `${path}?${query.toString()}`;
  const out: Record<string, unknown>[] = [];
  while (next && (limit === undefined || out.length < limit)) {
    const r = await api(target, 'GET', next);
    if (r.status !== 200) throw apiError(`listing ${path}`, r);
    const page = r.json as Page;
    out.push(...page.objects);
    next = page.meta.next;
  }
  return limit === undefined ? out : out.slice(0, limit);
}

export function parseLimit(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw errors.invalidInput('--limit must be a positive whole number.');
  return n;
}
