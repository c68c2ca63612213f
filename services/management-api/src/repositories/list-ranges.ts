import type { Knex } from 'knex';
import type { Filter, Ordering } from './list-types';

/**
 * Totals and deep pages from counters over ranges of one column's values (users: names, see
 * migration 20261124020000_user_name_buckets), for the list planner (list-planner.ts).
 *
 * The rows a list asks for are cut into segments whose counts are known without walking them:
 * - no filter but the partition: every range, its count summed over the partition's values;
 * - a prefix of the column: the ranges that start with the prefix, but the last, summed; the rows
 *   before the first such range (from the prefix on) and from the last one on (up to where the
 *   prefix ends) counted in the index. Each of these two walks stays inside one range (or two,
 *   where a range has none of the partition's rows), whatever the number of matches.
 * The total is the sum of the segments; a deep page in the column's order starts in the segment
 * where the running sum of the counts passes the offset, and skips only that segment's rows.
 */

export interface RangeBuckets {
  table: string;
  key: string;
  column: string;
  lower: string;
  count: string;
  /**
   * No range holds more rows than this, a rule of the database: each count of a prefix's edge rows
   * (see withSegments) is bounded by it, so Postgres estimates it as the walk inside one range it
   * is, not as a share of the table.
   */
  maxRows: number;
  /**
   * The same ranges' counts over every partition value, one row per range (users:
   * storage_user_name_ranges), kept by the same triggers: an unrestricted list reads these instead
   * of summing every partition's (at 10,000,000 users over 10 clusters, 2,442 rows instead of 24,420).
   */
  totals?: { table: string; lower: string; count: string };
}

export interface RangeQuery {
  db: Knex | Knex.Transaction;
  alias: string;
  buckets: RangeBuckets;
  /** The partition's allowed values ('all': unrestricted). */
  partition: Set<string> | 'all';
  /** The rows filtered by partition and prefix, without select or order. */
  base: Knex.QueryBuilder;
  prefix?: Filter;
  /** Applies the list's filters (to filter the ranges' own lower ends by the prefix). */
  applyFilters: (qb: Knex.QueryBuilder, filters: readonly Filter[]) => Knex.QueryBuilder;
}

/** The ranges' counts summed over the partition (`range_counts`) and the segments (`segments`). */
export function withSegments(q: RangeQuery): (qb: Knex.QueryBuilder) => Knex.QueryBuilder {
  const { db, buckets: b, partition, base, prefix } = q;
  const totals = partition === 'all' ? b.totals : undefined;
  const rangeCounts = totals
    ? db(totals.table).select(db.raw('?? AS lower, ?? AS n', [totals.lower, totals.count]))
    : db(b.table)
        .select(db.raw('?? AS lower', [b.lower]))
        .sum({ n: b.count })
        .groupBy(b.lower);
  if (partition !== 'all') rangeCounts.whereIn(b.key, [...partition]);
  if (!prefix) {
    return (qb) =>
      qb
        .with('range_counts', rangeCounts)
        .with(
          'segments',
          db.raw('SELECT 1 AS seq, lower, lead(lower) OVER (ORDER BY lower) AS upper, n FROM range_counts'),
        );
  }
  q.applyFilters(rangeCounts, [
    totals ? { ...prefix, alias: totals.table, column: totals.lower } : { ...prefix, alias: b.table, column: b.lower },
  ]);
  const col = `${q.alias}.${b.column}`;
  // Each edge's rows lie in one range (see above), so at most maxRows of them, a literal: a bound
  // parameter would leave a generic plan guessing a tenth of the table.
  const counted = (where?: string): { sql: string; bindings: readonly Knex.Value[] } => {
    const rows = base.clone().select(db.raw('1')).limit(b.maxRows, { skipBinding: true });
    if (where) rows.whereRaw(`?? ${where}`, [col]);
    return db.count({ n: '*' }).from(rows.as('edge')).toSQL();
  };
  const all = counted();
  const head = counted('< (SELECT first FROM edges)');
  const tail = counted('>= (SELECT last FROM edges)');
  // `(SELECT lower FROM range_counts WHERE false)`: a NULL of the lower ends' type and collation.
  const nothing = '(SELECT lower FROM range_counts WHERE false)';
  return (qb) =>
    qb
      .with('range_counts', rangeCounts)
      .with('edges', db.raw('SELECT min(lower) AS first, max(lower) AS last FROM range_counts'))
      .with(
        'segments',
        db.raw(
          `SELECT 0 AS seq, ${nothing} AS lower, (SELECT first FROM edges) AS upper,
                  CASE WHEN (SELECT first FROM edges) IS NULL THEN (${all.sql}) ELSE (${head.sql}) END AS n
           UNION ALL
           SELECT 1, lower, upper, n FROM (SELECT lower, lead(lower) OVER (ORDER BY lower) AS upper, n FROM range_counts) AS inside
            WHERE lower < (SELECT last FROM edges)
           UNION ALL
           SELECT 2, last, ${nothing}, (${tail.sql}) FROM edges WHERE last IS NOT NULL`,
          [...all.bindings, ...head.bindings, ...tail.bindings] as Knex.RawBinding[],
        ),
      );
}

export const segmentsTotalSql = 'SELECT coalesce(sum(n), 0) AS total FROM segments';

/** The direction of a page the ranges can seek to: ordered by the column (then id, the same way). */
export function rangeSeekDirection(
  ordering: readonly Ordering[],
  alias: string,
  column: string,
): 'asc' | 'desc' | null {
  const [first, second, ...rest] = ordering;
  if (!first || first.alias !== alias || first.column !== column || rest.length > 0) return null;
  if (second && !(second.alias === alias && second.column === 'id' && second.desc === first.desc)) return null;
  return first.desc ? 'desc' : 'asc';
}

/**
 * The page at `offset` in the column's order, from the segment the offset falls in (CTEs `running`,
 * `seek`, `stop` and `span`, on top of withSegments). The walk is bounded on both sides, by the
 * first value of the lowest segment the page touches and the last value of the highest (each one
 * index probe; a segment open at one end, before the first range of a prefix or after the last
 * range, takes its first or last matching value): no rows of the list lie between a segment's
 * bound and its first or last value, so the offset inside the segment is unchanged, and Postgres
 * plans a short index range scan, whatever the table's size.
 */
export function seekPage(
  q: RangeQuery,
  direction: 'asc' | 'desc',
  columns: Array<string | Knex.Raw>,
  order: (qb: Knex.QueryBuilder) => Knex.QueryBuilder,
  window: { limit: Knex.Value; offset: Knex.Value },
): { with: (qb: Knex.QueryBuilder) => Knex.QueryBuilder; sql: string; bindings: readonly Knex.Value[] } {
  const { db, alias, base, buckets: b } = q;
  const col = `${alias}.${b.column}`;
  const key = direction === 'asc' ? 'seq ASC, lower ASC' : 'seq DESC, lower DESC';
  const back = direction === 'asc' ? 'seq DESC, lower DESC' : 'seq ASC, lower ASC';
  const probe = (fn: 'min' | 'max', where?: string) => {
    const p = base.clone().select(db.raw(`${fn}(??) AS v`, [col]));
    if (where) p.whereRaw(`?? ${where}`, [col]);
    return p.toSQL();
  };
  const [low, high] = direction === 'asc' ? ['seek', 'stop'] : ['stop', 'seek'];
  const firstAll = probe('min');
  const firstFrom = probe('min', `>= (SELECT lower FROM ${low})`);
  const lastAll = probe('max');
  const lastBelow = probe('max', `< (SELECT upper FROM ${high})`);
  // Past the end there is no segment to seek, and no page (the span alone would be every row).
  const within = '?? BETWEEN (SELECT first FROM span) AND (SELECT last FROM span) AND EXISTS (SELECT FROM seek)';
  // The rows the offset skips inside the segment are read by their keys only (the column and id:
  // an index-only scan of the (column, id) index), and the page from its first row on, so only
  // the page's own rows are read whole (bounded by its LIMIT alone: with the span's bounds too,
  // Postgres read the whole rest of the span to sort it). knex takes only numbers for OFFSET;
  // this one is an expression of the statement's own seek.
  const keys = [col, `${alias}.id`];
  const first = order(base.clone().select(keys).whereRaw(within, [col])).toSQL();
  const page = order(
    base
      .clone()
      .select(columns)
      .whereRaw('EXISTS (SELECT FROM seek)')
      .whereRaw(
        `(??, ??) ${direction === 'asc' ? '>=' : '<='} (${first.sql} LIMIT 1 OFFSET (?::bigint - (SELECT before FROM seek))::bigint)`,
        [...keys, ...first.bindings, window.offset] as Knex.RawBinding[],
      ),
  ).toSQL();
  const segments = withSegments(q);
  return {
    sql: `${page.sql} LIMIT ?`,
    bindings: [...page.bindings, window.limit],
    with: (qb) =>
      segments(qb)
        .with('running', db.raw(`SELECT seq, lower, upper, n, sum(n) OVER (ORDER BY ${key}) AS upto FROM segments`))
        .with(
          'seek',
          db.raw(
            `SELECT lower, upper, upto - n AS before FROM running WHERE upto > ?::bigint ORDER BY ${key} LIMIT 1`,
            [window.offset],
          ),
        )
        // The segment holding the page's last row, or the list's last segment.
        .with(
          'stop',
          db.raw(
            `(SELECT lower, upper FROM running WHERE upto >= ?::bigint + ?::bigint ORDER BY ${key} LIMIT 1)
             UNION ALL (SELECT lower, upper FROM running ORDER BY ${back} LIMIT 1) LIMIT 1`,
            [window.offset, window.limit],
          ),
        )
        .with(
          'span',
          db.raw(
            `SELECT CASE WHEN (SELECT lower FROM ${low}) IS NULL THEN (${firstAll.sql}) ELSE (${firstFrom.sql}) END AS first,
                    CASE WHEN (SELECT upper FROM ${high}) IS NULL THEN (${lastAll.sql}) ELSE (${lastBelow.sql}) END AS last`,
            [
              ...firstAll.bindings,
              ...firstFrom.bindings,
              ...lastAll.bindings,
              ...lastBelow.bindings,
            ] as Knex.RawBinding[],
          ),
        ),
  };
}
