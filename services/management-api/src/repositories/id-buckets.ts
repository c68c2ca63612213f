import type { Knex } from 'knex';
import type { ListQuery } from '../http/filters';
import { pageOf, type Page } from './list-query';

/**
 * Deep pages of users ordered by id, found through `storage_user_id_buckets` (users per cluster per
 * 4096 consecutive ids, kept exact by triggers) instead of an OFFSET that walks every skipped row.
 *
 * One statement, so one snapshot: the running sum over the buckets of the selected clusters names
 * the bucket where the offset falls and how many rows come before it; the page is then
 * `id >= <bucket's first id>` (`<=` its last for descending) with the same filters, ordering and
 * limit, and an OFFSET of the rest (under 4096). Same rows as the plain OFFSET, since every row
 * before the bucket is counted and none inside it is skipped. The total is the sum of the buckets,
 * as exact as the per-cluster counter.
 */

/** bucket = id >> BUCKET_BITS; must match migration 20261122040000_user_id_buckets. */
const BUCKET_BITS = 12;

/** The ordering the buckets can serve: by id first (later keys never matter, ids are unique). */
export function bucketDirection(query: ListQuery, alias: string): 'asc' | 'desc' | null {
  const first = query.ordering[0];
  if (!first) return 'asc';
  return first.alias === alias && first.column === 'id' ? (first.desc ? 'desc' : 'asc') : null;
}

export interface BucketPageSource {
  db: Knex | Knex.Transaction;
  /** The filtered rows (from, joins, wheres), already limited to `clusters`, without select or order. */
  base: Knex.QueryBuilder;
  alias: string;
  columns: string[];
  /** The clusters the filters (and the operator's visibility) leave, or all of them. */
  clusters: Set<string> | 'all';
  /** Applies the query's ordering (with its id tie-breaker) to a builder. */
  order: (qb: Knex.QueryBuilder) => Knex.QueryBuilder;
}

export async function fetchPageByIdBuckets<T>(source: BucketPageSource, query: ListQuery, direction: 'asc' | 'desc'): Promise<Page<T>> {
  const { db, alias } = source;
  const buckets = db('storage_user_id_buckets').select('bucket').sum({ n: 'n' }).groupBy('bucket');
  if (source.clusters !== 'all') buckets.whereIn('cluster_id', [...source.clusters]);
  const idCol = `${alias}.id`;
  const bound =
    direction === 'asc'
      ? db.raw(`?? >= (SELECT bucket FROM seek) << ${BUCKET_BITS}`, [idCol])
      : db.raw(`?? <= (((SELECT bucket FROM seek) + 1) << ${BUCKET_BITS}) - 1`, [idCol]);
  const ordered = source.order(source.base.clone().clearSelect().select(source.columns).where(bound)).toSQL();
  // knex takes only numbers for OFFSET; this one is an expression of the statement's own seek.
  const page = {
    sql: `${ordered.sql} LIMIT ? OFFSET (?::bigint - (SELECT before FROM seek))::bigint`,
    bindings: [...ordered.bindings, query.limit, String(query.offset)],
  };
  const combined = db
    .with('per_bucket', buckets)
    .with('running', db.raw(`SELECT bucket, n, sum(n) OVER (ORDER BY bucket ${direction}) AS upto FROM per_bucket`))
    .with('seek', db.raw(`SELECT bucket, upto - n AS before FROM running WHERE upto > ?::bigint ORDER BY bucket ${direction} LIMIT 1`, [String(query.offset)]))
    .select('t.total', `${alias}.*`)
    .from(db.raw('(SELECT coalesce(sum(n), 0) AS total FROM per_bucket) AS t'))
    .joinRaw(`LEFT JOIN LATERAL (${page.sql}) AS ?? ON true`, [...page.bindings, alias]);
  return pageOf<T>(await source.order(combined));
}
