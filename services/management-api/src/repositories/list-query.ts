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

/** Counts and fetches one page; an offset past the end skips the second query. */
export async function fetchPage<T>(base: Knex.QueryBuilder, query: ListQuery, alias: string, columns: string[]): Promise<Page<T>> {
  const [countRow] = await base.clone().clearSelect().count({ count: '*' });
  const total = Number((countRow as { count: string | number }).count);
  if (query.offset >= BigInt(total)) return { total, rows: [] };
  const rows = await applyOrdering(base.clone().select(columns), query.ordering, alias)
    .limit(query.limit)
    .offset(Number(query.offset));
  return { total, rows: rows as T[] };
}
