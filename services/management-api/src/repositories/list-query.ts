import type { Knex } from 'knex';
import type { Filter, ListQuery, Ordering } from '../http/filters';

/** Applies validated filters; identifiers come from resource definitions, values are bound. */
export function applyFilters(qb: Knex.QueryBuilder, filters: readonly Filter[]): Knex.QueryBuilder {
  for (const f of filters) {
    const col = `${f.alias}.${f.column}`;
    const v = f.values[0]!;
    const likeEscaped = () => String(v).replace(/[\\%_]/g, (c) => `\\${c}`);
    switch (f.lookup) {
      case 'exact':
        qb.where(col, v);
        break;
      case 'iexact':
        qb.whereRaw('lower(??) = lower(?)', [col, v]);
        break;
      case 'in':
        qb.whereIn(col, f.values);
        break;
      case 'startswith':
        qb.where(col, 'like', `${likeEscaped()}%`);
        break;
      case 'istartswith':
        qb.where(col, 'ilike', `${likeEscaped()}%`);
        break;
      case 'contains':
        qb.where(col, 'like', `%${likeEscaped()}%`);
        break;
      case 'icontains':
        qb.where(col, 'ilike', `%${likeEscaped()}%`);
        break;
      case 'gt':
        qb.where(col, '>', v);
        break;
      case 'gte':
        qb.where(col, '>=', v);
        break;
      case 'lt':
        qb.where(col, '<', v);
        break;
      case 'lte':
        qb.where(col, '<=', v);
        break;
      case 'isnull':
        if (v === true) qb.whereNull(col);
        else qb.whereNotNull(col);
        break;
    }
  }
  return qb;
}

/** Requested ordering, then id as the tie-breaker so pages never overlap or skip. */
export function applyOrdering(qb: Knex.QueryBuilder, ordering: readonly Ordering[], alias: string): Knex.QueryBuilder {
  for (const o of ordering) qb.orderBy(`${o.alias}.${o.column}`, o.desc ? 'desc' : 'asc');
  if (!ordering.some((o) => o.column === 'id' && o.alias === alias)) qb.orderBy(`${alias}.id`, 'asc');
  return qb;
}

export interface Page<T> {
  total: number;
  rows: T[];
}

export interface PageSource {
  /** The filtered rows (from, joins, wheres), without select or order. */
  base: Knex.QueryBuilder;
  /** A fresh query on the resource's table with the same alias, to fetch the page's rows by id. */
  table: () => Knex.QueryBuilder;
  alias: string;
  columns: string[];
  /** A cheaper exact count when the filters allow one; null falls back to count(*). */
  fastCount?: () => Promise<number> | null;
}

/**
 * Counts and fetches one page. The page is found as ids first (an index-only walk, even for a
 * deep offset), then those rows are read; an offset past the end skips that entirely.
 */
export async function fetchPage<T>(source: PageSource, query: ListQuery): Promise<Page<T>> {
  const fast = source.fastCount?.();
  let total: number;
  if (fast) {
    total = await fast;
  } else {
    const [countRow] = await source.base.clone().clearSelect().count({ count: '*' });
    total = Number((countRow as { count: string | number }).count);
  }
  if (query.offset >= BigInt(total)) return { total, rows: [] };
  const idCol = `${source.alias}.id`;
  const pageIds = applyOrdering(source.base.clone().clearSelect().select(idCol), query.ordering, source.alias)
    .limit(query.limit)
    .offset(Number(query.offset));
  const rows = await applyOrdering(source.table().select(source.columns).whereIn(idCol, pageIds), query.ordering, source.alias);
  return { total, rows: rows as T[] };
}
