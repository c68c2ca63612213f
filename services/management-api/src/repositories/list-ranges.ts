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
 * Over every partition value, where the ranges have spans (see RangeBuckets.totals), whole spans
 * stand for their ranges: for a prefix's total, the spans inside it (withPrefixSpans); for a deep
 * page without a prefix, every span but the one or two the page lies in (withSpanWindow).
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
  totals?: {
    table: string;
    lower: string;
    count: string;
    /**
     * Counters over spans of consecutive ranges, over every partition value (users:
     * storage_user_name_spans): [lower, upper) (upper NULL: no end), each span's bounds lower ends
     * of ranges. A deep page finds its span first and then reads only that span's ranges; a
     * prefix's total sums the spans inside it and the ranges of the two it cuts (at 10,000,000
     * users, about 40 spans and 2 × 64 ranges instead of 2,450 ranges).
     */
    spans?: { table: string; lower: string; upper: string; count: string };
  };
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

/**
 * A request's value as a subquery's result, which Postgres plans the same whether or not it knows
 * it: a prepared statement's plans made for each request's values then cost what its generic plan
 * costs, and Postgres keeps the generic plan instead of planning every request (1–3 ms a request
 * for a prefix's statement at 10,000,000 users, more than running it). For the values that would
 * change the plan's estimates (a prefix's bounds, a page's offset and limit); every branch of a
 * statement that binds them this way is written to suit any value, as a plan without them must.
 */
export const unseen = (type: 'text' | 'bigint'): string => `(SELECT ?::${type})`;

/** `(SELECT lower FROM range_counts WHERE false)`: a NULL of the lower ends' type and collation. */
const NOTHING = '(SELECT lower FROM range_counts WHERE false)';

/**
 * The ranges' counts summed over the partition (`range_counts`) and the segments (`segments`).
 * `count`: the segments serve a total only, so spans may stand for the ranges inside a prefix
 * (their `lower` and `upper` are then not given).
 */
export function withSegments(
  q: RangeQuery,
  use: 'seek' | 'count' = 'seek',
): (qb: Knex.QueryBuilder) => Knex.QueryBuilder {
  const { db, buckets: b, partition, prefix } = q;
  const totals = partition === 'all' ? b.totals : undefined;
  if (use === 'count' && prefix && totals?.spans) return withPrefixSpans(q, prefix, totals, totals.spans);
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
  const edges = edgeCounts(q);
  return (qb) =>
    qb
      .with('range_counts', rangeCounts)
      .with('edges', db.raw('SELECT min(lower) AS first, max(lower) AS last FROM range_counts'))
      .with(
        'segments',
        db.raw(
          `${edges.head}
           UNION ALL
           SELECT 1, lower, upper, n FROM (SELECT lower, lead(lower) OVER (ORDER BY lower) AS upper, n FROM range_counts) AS inside
            WHERE lower < (SELECT last FROM edges)
           UNION ALL
           ${edges.tail}`,
          [...edges.bindings] as Knex.RawBinding[],
        ),
      );
}

/**
 * The segments at a prefix's two ends (CTE `edges`: `first` and `last`, the lowest and highest
 * lower end of a range inside the prefix): its rows before the first range (all of them, where no
 * range starts inside it) and from the last one on, counted in the index. Each edge's rows lie in
 * one range (see above), so at most maxRows of them, a literal: a bound parameter would leave a
 * generic plan guessing a tenth of the table. `head` and `tail` bind `bindings` in that order.
 */
function edgeCounts(q: RangeQuery): { head: string; tail: string; bindings: readonly Knex.Value[] } {
  const { db, buckets: b, base } = q;
  const col = `${q.alias}.${b.column}`;
  const counted = (where?: string): { sql: string; bindings: readonly Knex.Value[] } => {
    const rows = base.clone().select(db.raw('1')).limit(b.maxRows, { skipBinding: true });
    if (where) rows.whereRaw(`?? ${where}`, [col]);
    return db.count({ n: '*' }).from(rows.as('edge')).toSQL();
  };
  const all = counted();
  const head = counted('< (SELECT first FROM edges)');
  const tail = counted('>= (SELECT last FROM edges)');
  return {
    head: `SELECT 0 AS seq, ${NOTHING} AS lower, (SELECT first FROM edges) AS upper,
                  CASE WHEN (SELECT first FROM edges) IS NULL THEN (${all.sql}) ELSE (${head.sql}) END AS n`,
    tail: `SELECT 2, last, ${NOTHING}, (${tail.sql}) FROM edges WHERE last IS NOT NULL`,
    bindings: [...all.bindings, ...head.bindings, ...tail.bindings],
  };
}

type Totals = NonNullable<RangeBuckets['totals']>;
type Spans = NonNullable<Totals['spans']>;

/**
 * A prefix's segments for its total, over every partition value: the edges, the spans that lie
 * inside [first, last), and the ranges there outside those spans (the spans inside are one run, so
 * those ranges are the ones before it and after it, inside at most the two spans the prefix cuts).
 * `first` and `last` are each one probe of the ranges' index.
 */
function withPrefixSpans(
  q: RangeQuery,
  prefix: Filter,
  totals: Totals,
  spans: Spans,
): (qb: Knex.QueryBuilder) => Knex.QueryBuilder {
  const { db } = q;
  // ORDER BY … LIMIT 1 rather than min() or max(): one index probe, whatever Postgres estimates.
  const end = (direction: 'asc' | 'desc') =>
    q
      .applyFilters(
        db(totals.table).select(totals.lower).orderBy(totals.lower, direction).limit(1, { skipBinding: true }),
        [{ ...prefix, alias: totals.table, column: totals.lower }],
      )
      .toSQL();
  const first = end('asc');
  const last = end('desc');
  const ranges = (from: string, below: string) =>
    db(totals.table)
      .select(db.raw('?? AS lower, ?? AS n', [totals.lower, totals.count]))
      .whereRaw(`?? >= ${from} AND ?? < ${below}`, [totals.lower, totals.lower])
      .toSQL().sql;
  const edges = edgeCounts(q);
  return (qb) =>
    qb
      .with(
        'edges',
        db.raw(`SELECT (${first.sql}) AS first, (${last.sql}) AS last`, [
          ...first.bindings,
          ...last.bindings,
        ] as Knex.RawBinding[]),
      )
      .with(
        'whole',
        db.raw(
          `SELECT ?? AS lower, ?? AS upper, ?? AS n FROM ?? WHERE ?? >= (SELECT first FROM edges) AND ?? <= (SELECT last FROM edges)`,
          [spans.lower, spans.upper, spans.count, spans.table, spans.lower, spans.upper],
        ),
      )
      .with(
        'range_counts',
        db.raw(
          `(${ranges('(SELECT first FROM edges)', 'coalesce((SELECT min(lower) FROM whole), (SELECT last FROM edges))')})
           UNION ALL (${ranges('(SELECT max(upper) FROM whole)', '(SELECT last FROM edges)')})`,
        ),
      )
      .with(
        'segments',
        db.raw(
          `${edges.head}
           UNION ALL SELECT 1, ${NOTHING}, ${NOTHING}, n FROM whole
           UNION ALL SELECT 1, ${NOTHING}, ${NOTHING}, n FROM range_counts
           UNION ALL
           ${edges.tail}`,
          [...edges.bindings] as Knex.RawBinding[],
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
        `(??, ??) ${direction === 'asc' ? '>=' : '<='} (${first.sql} LIMIT 1 OFFSET (${unseen('bigint')} - (SELECT before FROM seek))::bigint)`,
        [...keys, ...first.bindings, window.offset] as Knex.RawBinding[],
      ),
  ).toSQL();
  const totals = q.partition === 'all' ? b.totals : undefined;
  const segments =
    !q.prefix && totals?.spans ? withSpanWindow(q, totals, totals.spans, direction, window) : withSegments(q);
  return {
    sql: `${page.sql} LIMIT ${unseen('bigint')}`,
    bindings: [...page.bindings, window.limit],
    with: (qb) =>
      segments(qb)
        .with('running', db.raw(`SELECT seq, lower, upper, n, sum(n) OVER (ORDER BY ${key}) AS upto FROM segments`))
        .with(
          'seek',
          db.raw(
            `SELECT lower, upper, upto - n AS before FROM running WHERE upto > ${unseen('bigint')} ORDER BY ${key} LIMIT 1`,
            [window.offset],
          ),
        )
        // The segment holding the page's last row, or the list's last segment.
        .with(
          'stop',
          db.raw(
            `(SELECT lower, upper FROM running WHERE upto >= ${unseen('bigint')} + ${unseen('bigint')} ORDER BY ${key} LIMIT 1)
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

/**
 * The segments of an unrestricted deep page in the column's order, over spans of ranges: the spans
 * the page starts and ends in (a running sum over the spans, in the page's order) are read as their
 * ranges (`range_counts`, between `win`'s `lo` and `hi`, hi NULL: no end), every other span as one
 * segment. The running sum over these segments then finds the same range and rows before it as one
 * over every range.
 */
function withSpanWindow(
  q: RangeQuery,
  totals: Totals,
  spans: Spans,
  direction: 'asc' | 'desc',
  window: { limit: Knex.Value; offset: Knex.Value },
): (qb: Knex.QueryBuilder) => Knex.QueryBuilder {
  const { db } = q;
  const key = direction === 'asc' ? 'lower ASC' : 'lower DESC';
  const back = direction === 'asc' ? 'lower DESC' : 'lower ASC';
  const inWindow = (upper: string) =>
    db(totals.table)
      .select(db.raw('?? AS lower, ?? AS n', [totals.lower, totals.count]))
      .whereRaw(`?? >= (SELECT lo FROM win) AND ${upper}`, [totals.lower])
      .toSQL().sql;
  return (qb) =>
    qb
      .with(
        'span_running',
        db.raw(`SELECT ?? AS lower, ?? AS upper, ?? AS n, sum(??) OVER (ORDER BY ?? ${direction}) AS upto FROM ??`, [
          spans.lower,
          spans.upper,
          spans.count,
          spans.count,
          spans.lower,
          spans.table,
        ]),
      )
      .with(
        'win',
        db.raw(
          `SELECT least(a.lower, b.lower) AS lo,
                  CASE WHEN a.upper IS NULL OR b.upper IS NULL THEN NULL ELSE greatest(a.upper, b.upper) END AS hi
             FROM (SELECT lower, upper FROM span_running WHERE upto > ${unseen('bigint')} ORDER BY ${key} LIMIT 1) AS a,
                  ((SELECT lower, upper FROM span_running WHERE upto >= ${unseen('bigint')} + ${unseen('bigint')} ORDER BY ${key} LIMIT 1)
                   UNION ALL (SELECT lower, upper FROM span_running ORDER BY ${back} LIMIT 1) LIMIT 1) AS b`,
          [window.offset, window.offset, window.limit],
        ),
      )
      .with(
        'range_counts',
        db.raw(
          `(${inWindow(db.raw('?? < (SELECT hi FROM win)', [totals.lower]).toQuery())})
           UNION ALL (${inWindow('(SELECT hi FROM win) IS NULL')})`,
        ),
      )
      .with(
        'segments',
        db.raw(
          `SELECT 1 AS seq, lower, upper, n FROM span_running
            WHERE (SELECT lo FROM win) IS NULL OR lower < (SELECT lo FROM win) OR lower >= (SELECT hi FROM win)
           UNION ALL
           SELECT 1, lower, coalesce(lead(lower) OVER (ORDER BY lower), (SELECT hi FROM win)), n FROM range_counts`,
        ),
      );
}
