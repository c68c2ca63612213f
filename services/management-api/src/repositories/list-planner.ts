import type { Knex } from 'knex';
import type { Db } from '../db/database';
import { fixedStatement, runStatement, statementName, type FixedStatement } from '../db/prepared';
import type { Filter, ListQuery, Ordering, Page } from './list-types';
import {
  type RangeBuckets,
  type RangeQuery,
  rangeSeekDirection,
  seekPage,
  segmentsTotalSql,
  unseen,
  withSegments,
} from './list-ranges';

/**
 * The one way every list is read: a page of rows and an exact total_count, in plain knex queries
 * (so it runs the same on Postgres, on PGlite and behind PgBouncer in transaction mode, and every
 * statement passes through knex's query events).
 *
 * 1. Resolve. Filters on a related resource (`cluster__name`, `user__id__gte`) become a subquery
 *    of that resource's table (`s.storage_user_id IN (SELECT u.id FROM storage_users u WHERE …)`),
 *    never a list of its ids, however many rows they match. Only where the related key is the
 *    partition column are they looked up first, for at most MAX_RESOLVED_PARTITIONS values, which
 *    then narrow the partition's set like filters on the partition column (`cluster`,
 *    `cluster__in`) and the caller's visibility do; more than that stay a subquery. What is left is
 *    the residual conditions.
 * 2. Fetch, in one statement (one snapshot): the total as a one-row subquery, laterally joined to
 *    the page. The total is read from trigger-kept counters when the residual filters are empty
 *    (users: cluster_user_counts), from trigger-kept counters per range of names when the only
 *    residual filter is a prefix of the name (users: storage_user_name_buckets: the ranges inside
 *    the prefix summed, the two at its ends counted in the index; over every cluster, spans of
 *    ranges inside it and the ranges of the two spans it cuts), else counted. The page starts
 *      - near the start (offset ≤ DEEP_OFFSET): plain ORDER BY … LIMIT … OFFSET (an index on
 *        (field, id) serves it: the id tie-breaker follows the field's direction);
 *      - deep, no residual filters, with id-bucket counters (users), ordered by id or by a column
 *        the buckets are split by (users: cluster, enabled, is_superuser), then id: at the bucket
 *        where the offset falls, found by a running sum over the counters in the page's order (over
 *        the spans of buckets first, then the one span's buckets, where the counters have spans), so
 *        fewer than one bucket of rows is walked; the same with a prefix of a column with range
 *        counters that leaves out at most FEW_MATCHES rows of the partition: those rows, read from
 *        the column's index on both sides of the matches, are subtracted from the spans and buckets;
 *      - deep, ordered by a column with range counters (users: name), filtered by nothing else
 *        than the partition and a prefix of that column: in the range where the offset falls,
 *        found by a running sum over the ranges' counters in the page's order (over every
 *        partition value and no prefix: over the spans of ranges first, then the ranges of the
 *        spans the page starts and ends in);
 *      - otherwise deep: the page's ids first (an index-only walk over the skipped rows), then
 *        those rows.
 *    The statement's SQL depends only on the query's shape; it is compiled once per shape and each
 *    request binds its values (see compile).
 */

/** Exact counts kept by triggers in the same transaction as every insert and delete. */
export interface PartitionCounters {
  /** One row per partition value: `key` the value, `count` its rows. */
  totals: { table: string; key: string; count: string };
  /**
   * Rows per partition value per bucket of 2^bits consecutive ids (bucket = id >> bits). Serves deep
   * pages ordered by id.
   */
  idBuckets?: {
    table: string;
    key: string;
    bucket: string;
    count: string;
    bits: number;
    /** Other list columns the buckets are split by (list column → bucket table column). */
    dimensions?: Record<string, string>;
    /**
     * The same counts per span of 2^bits consecutive buckets (span = bucket >> bits), with the
     * buckets' key, dimension and count columns, kept by the same triggers: a deep page sums the
     * spans to find the one its offset falls in, then only that span's buckets, instead of every
     * bucket (which grows with the table: 24,420 rows at 10,000,000 users over 10 clusters).
     */
    spans?: { table: string; span: string; bits: number };
  };
  /**
   * Rows per partition value per range of one column's values (users: names). The ranges are
   * shared by all partition values, each [lower, next lower): a range's `lower` is its first
   * value, and the column compares byte by byte (users: COLLATE "C"), as its index sorts. Serves
   * deep pages ordered by that column and exact totals of a prefix of it (`startswith`).
   */
  rangeBuckets?: RangeBuckets;
}

/** SQL with `?` placeholders and their values (constants). */
export interface BoundSql {
  sql: string;
  bindings: readonly string[];
}

export interface ListSource {
  db: Db;
  table: string;
  alias: string;
  /** Qualified with `alias`; a raw expression must name its output column. */
  columns: Array<string | Knex.Raw>;
  /**
   * A column most lists narrow by (users: cluster_id), whose allowed values are worked out before
   * the page is fetched: from filters on it, from related filters resolved to it, and `only`.
   */
  partition?: {
    column: string;
    only?: ReadonlyArray<string | number>;
    counters?: PartitionCounters;
    /**
     * An index on (column, id) exists, which a first page ordered by id walks (see firstPageSql);
     * `type`: the column's SQL type, that page's values are bound as.
     */
    indexedWithId?: { type: 'integer' | 'bigint' };
  };
  /** Related resources by alias: their table and the list's own column holding their id. */
  related?: Record<string, { table: string; key: string }>;
  /**
   * One-to-one tables by alias (users: their quota state), whose columns fields may filter on
   * (FieldDef.alias): `from` names the table or subquery with its alias, `on` the list's column and
   * theirs. Left-joined only when a filter names them, so a row without one reads as NULL there.
   */
  joined?: Record<string, { from: Knex.Raw | string; on: [own: string, theirs: string] }>;
  /**
   * Columns read for the rows of the page only, once it is cut, in the page's own statement (users:
   * their quota state and latest usage, as scalar subqueries naming the page's rows by `alias`),
   * each naming its output column. Their bindings are constants (they go into every compiled shape
   * as they are).
   */
  attached?: { columns: BoundSql[] };
  /** Conditions that are part of the list itself, not of the request (a device list's cluster). */
  scope?: (qb: Knex.QueryBuilder) => void;
  /** Used when the request asks for no ordering (the id tie-breaker is always added). */
  defaultOrdering?: Ordering[];
}

/** Offsets beyond this are past any table's end: no need to ask for rows. */
const MAX_OFFSET = 2n ** 53n;
/**
 * Past this offset the page is found as ids first (or from the id buckets); below it a plain
 * LIMIT/OFFSET plans and runs cheaper.
 */
const DEEP_OFFSET = 5000n;
const isDeep = (offset: bigint): boolean => offset > DEEP_OFFSET;

/**
 * The least string above every string that starts with `prefix`, in code point order (the byte
 * order of UTF-8, so of COLLATE "C"); null when there is none (a prefix of U+10FFFF only).
 */
export function prefixSuccessor(prefix: string): string | null {
  const points = [...prefix];
  while (points.length > 0) {
    const last = points.pop()!.codePointAt(0)!;
    // Surrogates are no characters (Postgres takes none): after U+D7FF comes U+E000.
    if (last < 0x10ffff) return points.join('') + String.fromCodePoint(last === 0xd7ff ? 0xe000 : last + 1);
  }
  return null;
}

/**
 * The values one filter value is bound as, in the order applyFilters binds them: the one place
 * that says how a request's value becomes a statement's, so a compiled shape binds each request's
 * values the same way (see compileShape).
 */
function boundValues(f: Filter, v: string | boolean): Knex.Value[] {
  const likeEscaped = () => String(v).replace(/[\\%_]/g, (c) => `\\${c}`);
  switch (f.lookup) {
    case 'startswith': {
      const next = f.byteOrdered ? prefixSuccessor(String(v)) : null;
      // A range (the first two) where the matches are scanned, a pattern where rows are tested.
      return next === null ? [`${likeEscaped()}%`] : [v, next, `${likeEscaped()}%`];
    }
    case 'istartswith':
      return [`${likeEscaped()}%`];
    case 'contains':
    case 'icontains':
      return [`%${likeEscaped()}%`];
    case 'isnull':
      return [];
    default:
      return [v];
  }
}

/**
 * How a prefix of a byte-ordered column is written: as its range of values, which an index scan
 * is bounded by, or as a LIKE pattern, a test of each row. A prepared statement's generic plan
 * cannot tell how many rows a prefix matches; given the range it may plan a scan of the range and
 * a sort where the statement means a walk along another index (the page by id of a prefix matching
 * most users), which costs every match. A walk is written with the pattern, so no plan can use
 * the name index for it.
 */
export type PrefixForm = 'range' | 'test';

/** Applies validated filters; identifiers come from resource definitions, values are bound. */
export function applyFilters(
  qb: Knex.QueryBuilder,
  filters: readonly Filter[],
  prefixes: PrefixForm = 'range',
): Knex.QueryBuilder {
  for (const f of filters) {
    const col = `${f.alias}.${f.column}`;
    const v = f.values[0]!;
    const [bound, above, pattern] = boundValues(f, v);
    switch (f.lookup) {
      case 'exact':
        qb.where(col, bound!);
        break;
      case 'iexact':
        qb.whereRaw('lower(??) = lower(?)', [col, bound!]);
        break;
      case 'in':
        qb.whereIn(
          col,
          f.values.flatMap((value) => boundValues(f, value)),
        );
        break;
      case 'startswith':
        if (above === undefined) qb.where(col, 'like', bound!);
        else if (prefixes === 'test') qb.whereRaw(`?? LIKE ${unseen('text')}`, [col, pattern!]);
        else qb.whereRaw(`?? >= ${unseen('text')}`, [col, bound!]).whereRaw(`?? < ${unseen('text')}`, [col, above]);
        break;
      case 'istartswith':
      case 'icontains':
        qb.where(col, 'ilike', bound!);
        break;
      case 'contains':
        qb.where(col, 'like', bound!);
        break;
      case 'gt':
        qb.where(col, '>', bound!);
        break;
      case 'gte':
        qb.where(col, '>=', bound!);
        break;
      case 'lt':
        qb.where(col, '<', bound!);
        break;
      case 'lte':
        qb.where(col, '<=', bound!);
        break;
      case 'isnull':
        if (v === true) qb.whereNull(col);
        else qb.whereNotNull(col);
        break;
    }
  }
  return qb;
}

/**
 * Requested ordering, then id as the tie-breaker so pages never overlap or skip. Tastypie (Django's
 * order_by) promises nothing among rows equal on the requested fields; the tie-breaker is ours and
 * runs in the direction of the last requested field (`-cluster` → cluster_id DESC, id DESC), so an
 * index on (field, id) serves either direction by walking it forwards or backwards.
 */
export function applyOrdering(qb: Knex.QueryBuilder, ordering: readonly Ordering[], alias: string): Knex.QueryBuilder {
  for (const o of ordering) qb.orderBy(`${o.alias}.${o.column}`, o.desc ? 'desc' : 'asc');
  if (!ordering.some((o) => o.column === 'id' && o.alias === alias))
    qb.orderBy(`${alias}.id`, ordering.at(-1)?.desc ? 'desc' : 'asc');
  return qb;
}

/**
 * Related rows the list's rows must point at: `column IN (SELECT alias.id FROM table AS alias
 * WHERE filters)`, a semi-join Postgres plans as one.
 */
interface RelatedCondition {
  column: string;
  table: string;
  alias: string;
  filters: Filter[];
}

type Condition = Filter | RelatedCondition;
const isFilter = (c: Condition): c is Filter => 'lookup' in c;

/**
 * Partition values a related filter may resolve to and still narrow the partition (so that the
 * counters serve: users by `cluster__name`). A filter matching more stays a subquery.
 */
const MAX_RESOLVED_PARTITIONS = 100;

/** The resolved query: partition values allowed ('all': unrestricted) and what else to filter on. */
interface Plan {
  partition: Set<string> | 'all';
  residual: Condition[];
  ordering: Ordering[];
}

const narrow = (current: Set<string> | 'all', values: Iterable<string>): Set<string> => {
  const next = new Set(values);
  return current === 'all' ? next : new Set([...current].filter((v) => next.has(v)));
};

/** Step 1: related filters to subqueries (or a few partition values), partition narrowed. */
async function resolve(source: ListSource, query: ListQuery): Promise<Plan> {
  const { db, alias } = source;
  // The range counters' column compares byte by byte (see PartitionCounters.rangeBuckets).
  const rangeColumn = source.partition?.counters?.rangeBuckets?.column;
  let partition: Set<string> | 'all' = 'all';
  const residual: Condition[] = [];
  const byRelated = new Map<string, Filter[]>();
  for (const f of query.filters) {
    if (f.alias !== alias && source.related?.[f.alias]) byRelated.set(f.alias, [...(byRelated.get(f.alias) ?? []), f]);
    else if (f.alias === alias && f.column === source.partition?.column && (f.lookup === 'exact' || f.lookup === 'in'))
      partition = narrow(partition, f.values.map(String));
    else residual.push(f.alias === alias && f.column === rangeColumn ? { ...f, byteOrdered: true } : f);
  }
  for (const [relatedAlias, filters] of byRelated) {
    const related = source.related![relatedAlias]!;
    const condition: RelatedCondition = { column: related.key, table: related.table, alias: relatedAlias, filters };
    if (related.key === source.partition?.column) {
      const rows = await relatedIdRows(db, condition);
      if (rows.length <= MAX_RESOLVED_PARTITIONS) {
        partition = narrow(
          partition,
          rows.map((r) => String(r.id)),
        );
        continue;
      }
    }
    residual.push(condition);
  }
  if (source.partition?.only) partition = narrow(partition, source.partition.only.map(String));
  const ordering = query.ordering.length > 0 ? query.ordering : (source.defaultOrdering ?? []);
  return { partition, residual, ordering };
}

const relatedIds = (db: Db, c: RelatedCondition): Knex.QueryBuilder =>
  applyFilters(db(`${c.table} as ${c.alias}`).select(`${c.alias}.id`), c.filters);

/**
 * A related filter's ids (`cluster__name=east`: the cluster's id), at most one more than
 * MAX_RESOLVED_PARTITIONS. The statement's text follows from the filters' columns, lookups and
 * number of values only, so with few values it is prepared under a name like the page's (an
 * unnamed one was parsed and planned at each request, most of its cost); with many values it goes
 * unnamed, so no request can make a connection keep one statement per length of an `__in` list.
 */
const MAX_NAMED_RELATED_VALUES = 8;
/** Names of the related lookups' texts, so a request does not hash its text again (bounded like the shapes). */
const relatedNames = new Map<string, string>();
function relatedName(sql: string): string {
  let name = relatedNames.get(sql);
  if (name === undefined) {
    if (relatedNames.size >= MAX_SHAPES) relatedNames.clear();
    relatedNames.set(sql, (name = statementName(sql)));
  }
  return name;
}
async function relatedIdRows(db: Db, c: RelatedCondition): Promise<Array<{ id: unknown }>> {
  const { sql, bindings } = relatedIds(db, c)
    .limit(MAX_RESOLVED_PARTITIONS + 1)
    .toSQL();
  const name = bindings.length <= MAX_NAMED_RELATED_VALUES + 1 ? relatedName(sql) : undefined;
  return (await runStatement<{ rows: Array<{ id: unknown }> }>(db, sql, bindings, name)).rows;
}

/** The filtered rows (from, scope, partition, residual conditions), without select or order. */
function baseOf(source: ListSource, plan: Plan, prefixes: PrefixForm = 'range'): Knex.QueryBuilder {
  const base = source.db(`${source.table} as ${source.alias}`);
  for (const joinAlias of new Set(plan.residual.filter(isFilter).map((f) => f.alias))) {
    const joined = source.joined?.[joinAlias];
    if (joined) base.leftJoin(joined.from, `${source.alias}.${joined.on[0]}`, `${joinAlias}.${joined.on[1]}`);
  }
  source.scope?.(base);
  if (source.partition && plan.partition !== 'all')
    base.whereIn(`${source.alias}.${source.partition.column}`, [...plan.partition]);
  for (const c of plan.residual) {
    if (isFilter(c)) applyFilters(base, [c], prefixes);
    else base.whereIn(`${source.alias}.${c.column}`, relatedIds(source.db, c));
  }
  return base;
}

/** The counters answer exactly when nothing but the partition restricts the rows. */
const countersServe = (source: ListSource, plan: Plan): PartitionCounters | undefined =>
  plan.residual.length === 0 && !source.scope ? source.partition?.counters : undefined;

/**
 * The range counters answer when nothing but the partition and at most one prefix of their column
 * restricts the rows.
 */
function rangesServe(source: ListSource, plan: Plan, base: Knex.QueryBuilder): RangeQuery | null {
  const buckets = source.partition?.counters?.rangeBuckets;
  if (!buckets || source.scope || plan.residual.length > 1) return null;
  const [prefix] = plan.residual;
  if (
    prefix &&
    !(
      isFilter(prefix) &&
      prefix.alias === source.alias &&
      prefix.column === buckets.column &&
      prefix.lookup === 'startswith'
    )
  )
    return null;
  return { db: source.db, alias: source.alias, buckets, partition: plan.partition, base, prefix, applyFilters };
}

function totalQuery(source: ListSource, plan: Plan, base: Knex.QueryBuilder): Knex.QueryBuilder {
  const counters = countersServe(source, plan);
  if (!counters) return base.clone().count({ total: '*' });
  const { table, key, count } = counters.totals;
  const q = source.db(table).select(source.db.raw('coalesce(sum(??), 0) AS total', [count]));
  if (plan.partition !== 'all') q.whereIn(key, [...plan.partition]);
  return q;
}

/**
 * A page the id buckets can seek to: ordered by id, or by the partition column (or another column
 * the buckets are split by) then id, both the same direction. `column`: that first column, as the
 * list names it and as the bucket table names it.
 */
interface Seek {
  column?: { list: string; counter: string };
  direction: 'asc' | 'desc';
}

function seekOf(source: ListSource, plan: Plan, buckets = countersServe(source, plan)?.idBuckets): Seek | null {
  if (!buckets) return null;
  const { alias } = source;
  const [first, second, ...rest] = plan.ordering;
  if (!first) return { direction: 'asc' };
  if (first.alias !== alias) return null;
  const direction = first.desc ? 'desc' : 'asc';
  // Later keys never matter after id: ids are unique.
  if (first.column === 'id') return { direction };
  const counter = first.column === source.partition?.column ? buckets.key : buckets.dimensions?.[first.column];
  if (!counter || rest.length > 0) return null;
  // The id tie-breaker follows the first column's direction (applyOrdering); an explicit one must too.
  if (second && !(second.alias === alias && second.column === 'id' && second.desc === first.desc)) return null;
  return { column: { list: first.column, counter }, direction };
}

interface PageSql {
  sql: string;
  bindings: readonly Knex.Value[];
  /** The page still goes behind the probe (see probed), which adds the range segments it refers to. */
  probe?: boolean;
  /** Common table expressions the page refers to. */
  with?: (qb: Knex.QueryBuilder) => Knex.QueryBuilder;
}

/** The page's LIMIT and OFFSET as bound values: the request's, or a compiled shape's placeholders. */
interface Window {
  limit: Knex.Value;
  offset: Knex.Value;
  /** A first page in the form of firstPageSql: its limit, written into the statement. */
  first?: number;
}

/** Partition values a first page reads one by one (an operator's few clusters); with more, the usual form. */
const MAX_FIRST_PAGE_PARTITIONS = 8;

/**
 * Whether a request's page is a first page read in the form of firstPageSql: at offset 0, filtered
 * by nothing but a few partition values (over an index on it and id), ordered by id.
 */
function isFirstPage(source: ListSource, plan: Plan, query: ListQuery): boolean {
  if (query.offset !== 0n || plan.residual.length > 0 || source.scope) return false;
  if (plan.ordering.length > 1 || plan.ordering.some((o) => o.column !== 'id' || o.alias !== source.alias))
    return false;
  if (plan.partition === 'all') return true;
  return plan.partition.size <= MAX_FIRST_PAGE_PARTITIONS && source.partition?.indexedWithId !== undefined;
}

const MIN_BIGINT = '-9223372036854775808';
const MAX_BIGINT = '9223372036854775807';

/**
 * A list's everyday request, its first page, in a form whose one plan suits every value, so
 * Postgres plans its prepared statement once (a generic plan) instead of at every request. With
 * `LIMIT $n` (or any OFFSET) Postgres costs a generic plan as if a tenth of the rows were
 * wanted, finds it dearer than the plans made for each request's values, and goes on planning
 * every request (for a users page with its attached columns, half the statement's time). So the
 * limit is written in (a shape per page size) and there is no OFFSET. A partition value is
 * written as a row comparison and a bound instead of `= $1`: an equality would let the generic
 * plan, which cannot tell a cluster of ten users from one of millions, walk the primary key
 * testing each row (every row of the table, for a small cluster); in this form the one index whose
 * order is the page's is (partition, id), which reads only the page's rows whatever the value.
 * The value goes in as a subquery's result, which Postgres estimates the same whether or not it
 * knows it: with the value itself, a plan made for a cluster holding a third of the users would
 * cost less than the generic one, and Postgres would go on planning. Several values are read one
 * by one, a page of each, and the page is cut from those.
 */
function firstPageSql(source: ListSource, plan: Plan, limit: number): PageSql {
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error(`a page's limit must be a count (got ${limit})`);
  const { db, alias } = source;
  const desc = plan.ordering[0]?.desc ?? false;
  const direction = desc ? 'desc' : 'asc';
  const of = (value?: string): Sql => {
    const page = db(`${source.table} as ${alias}`).select(source.columns);
    if (value !== undefined) {
      const column = `${alias}.${source.partition!.column}`;
      const bound = `(SELECT ?::${source.partition!.indexedWithId!.type})`;
      page
        .whereRaw(`(??, ??) ${desc ? '<=' : '>='} (${bound}, ?::bigint)`, [
          column,
          `${alias}.id`,
          value,
          desc ? MAX_BIGINT : MIN_BIGINT,
        ])
        .whereRaw(`?? ${desc ? '>=' : '<='} ${bound}`, [column, value])
        .orderBy(column, direction);
    }
    const { sql, bindings } = page.orderBy(`${alias}.id`, direction).toSQL();
    return { sql: `${sql} LIMIT ${limit}`, bindings };
  };
  if (plan.partition === 'all') return of();
  const pages = [...plan.partition].map(of);
  if (pages.length === 1) return pages[0]!;
  return {
    sql: `SELECT * FROM (${pages.map((p) => `(${p.sql})`).join(' UNION ALL ')}) AS ${db.raw('??', [alias]).toQuery()} ORDER BY id ${direction} LIMIT ${limit}`,
    bindings: pages.flatMap((p) => p.bindings),
  };
}

/**
 * A deep page sought through the id buckets. `outside`: rows of the partition the filters leave out
 * (`dim`, `bucket` of each), subtracted from the buckets' counts; without it the filters must be
 * none.
 */
function idSeekPage(
  source: ListSource,
  plan: Plan,
  base: Knex.QueryBuilder,
  window: Window,
  buckets: NonNullable<PartitionCounters['idBuckets']>,
  seek: Seek,
  outside?: Knex.Raw,
): PageSql {
  const { db, alias } = source;
  const idCol = `${alias}.id`;
  const order = (qb: Knex.QueryBuilder) => applyOrdering(qb, plan.ordering, alias);
  // The running sum over the buckets, in the page's order ((column,) bucket), names the bucket
  // where the offset falls and how many rows come before it; the page is read from that bucket's
  // first row (last, descending) with an OFFSET of the rest. Same rows as the plain OFFSET: every
  // row before the bucket is counted and none inside it skipped.
  const { direction, column } = seek;
  const dim = column ? db.raw('?? AS dim, ', [column.counter]).toQuery() : '';
  const counted = db(buckets.table)
    .select(db.raw(`${dim}?? AS bucket`, [buckets.bucket]))
    .sum({ n: buckets.count })
    .groupBy(column ? ['dim', 'bucket'] : ['bucket']);
  if (plan.partition !== 'all') counted.whereIn(buckets.key, [...plan.partition]);
  // With spans: the span first, the same way, then the buckets inside it only, their running sum
  // starting at the rows before the span. Rows to subtract are subtracted from both.
  const spans = buckets.spans;
  const keyOf = (unit: string) => (column ? `dim ${direction}, ${unit} ${direction}` : `${unit} ${direction}`);
  // `unit`'s counts less the rows left out (`outside`: each with its dim and bucket), grouped the same.
  const minus = (counts: Knex.QueryBuilder, unit: 'span' | 'bucket', of: string): Knex.QueryBuilder | Knex.Raw => {
    if (!outside) return counts;
    const keys = column ? `dim, ${unit}` : unit;
    const { sql, bindings } = counts.toSQL();
    return db.raw(
      `SELECT ${keys}, c.n - coalesce(o.n, 0) AS n FROM (${sql}) AS c
         LEFT JOIN (SELECT ${column ? 'dim, ' : ''}${of} AS ${unit}, count(*) AS n FROM outside GROUP BY ${keys}) AS o USING (${keys})`,
      bindings as Knex.RawBinding[],
    );
  };
  let spanSeek: ((qb: Knex.QueryBuilder) => Knex.QueryBuilder) | undefined;
  if (spans) {
    const perSpan = db(spans.table)
      .select(db.raw(`${dim}?? AS span`, [spans.span]))
      .sum({ n: buckets.count })
      .groupBy(column ? ['dim', 'span'] : ['span']);
    if (plan.partition !== 'all') perSpan.whereIn(buckets.key, [...plan.partition]);
    const span = '(SELECT span FROM seek_span)';
    counted.whereRaw(`?? BETWEEN ${span} << ${spans.bits} AND ((${span} + 1) << ${spans.bits}) - 1`, [buckets.bucket]);
    if (column) counted.whereRaw('?? = (SELECT dim FROM seek_span)', [column.counter]);
    spanSeek = (qb) =>
      qb
        .with('per_span', minus(perSpan, 'span', `bucket >> ${spans.bits}`))
        .with(
          'running_span',
          db.raw(
            `SELECT ${column ? 'dim, ' : ''}span, n, sum(n) OVER (ORDER BY ${keyOf('span')}) AS upto FROM per_span`,
          ),
        )
        .with(
          'seek_span',
          db.raw(
            `SELECT ${column ? 'dim, ' : ''}span, upto - n AS before FROM running_span WHERE upto > ${unseen('bigint')} ORDER BY ${keyOf('span')} LIMIT 1`,
            [window.offset],
          ),
        );
  }
  const perBucket = minus(counted, 'bucket', 'bucket');
  const bits = buckets.bits;
  const key = column ? `dim ${direction}, bucket ${direction}` : `bucket ${direction}`;
  const lower = `(SELECT bucket FROM seek) << ${bits}`;
  const upper = `(((SELECT bucket FROM seek) + 1) << ${bits}) - 1`;
  const op = direction === 'asc' ? '>=' : '<=';
  const bound = column
    ? db.raw(`(??, ??) ${op} ((SELECT dim FROM seek), ${direction === 'asc' ? lower : upper})`, [
        `${alias}.${column.list}`,
        idCol,
      ])
    : db.raw(`?? ${op} ${direction === 'asc' ? lower : upper}`, [idCol]);
  // The rows before the page inside the bucket are skipped reading their keys only (id, or column
  // and id: an index-only scan), and the page is read from its first row on: the skipped rows,
  // up to a bucket of them, are never fetched whole. knex takes only numbers for OFFSET; this one
  // is an expression of the statement's own seek.
  const pageKeys = column ? [`${alias}.${column.list}`, idCol] : [idCol];
  const first = order(base.clone().select(pageKeys).where(bound)).toSQL();
  const from = db.raw(
    `${column ? '(??, ??)' : '??'} ${op} (${first.sql} LIMIT 1 OFFSET (${unseen('bigint')} - (SELECT before FROM seek))::bigint)`,
    [...pageKeys, ...(first.bindings as Knex.RawBinding[]), window.offset],
  );
  const ordered = order(base.clone().select(source.columns).where(from)).toSQL();
  return {
    sql: `${ordered.sql} LIMIT ${unseen('bigint')}`,
    bindings: [...ordered.bindings, window.limit],
    with: (qb) => {
      const subtracting = outside ? qb.withMaterialized('outside', outside) : qb;
      return (spanSeek ? spanSeek(subtracting) : subtracting)
        .with('per_bucket', perBucket)
        .with(
          'running',
          db.raw(
            `SELECT ${column ? 'dim, ' : ''}bucket, n, sum(n) OVER (ORDER BY ${key})${spans ? ' + (SELECT before FROM seek_span)' : ''} AS upto FROM per_bucket`,
          ),
        )
        .with(
          'seek',
          db.raw(
            `SELECT ${column ? 'dim, ' : ''}bucket, upto - n AS before FROM running WHERE upto > ${unseen('bigint')} ORDER BY ${key} LIMIT 1`,
            [window.offset],
          ),
        );
    },
  };
}

/** A prefix of a byte-ordered column, bound as its range of values (see applyFilters). */
const isRangePrefix = (c: Condition): c is Filter => isFilter(c) && c.byteOrdered === true && c.lookup === 'startswith';

/**
 * How a page's LIMIT and OFFSET are bound where no seek finds the page: unseen (see list-ranges.ts)
 * where every other value of the statement is unseen too (a name prefix's range) or there is none
 * (no filter, no scope, every partition value), so that Postgres keeps its generic plan; plain
 * parameters where a filter's, the scope's or the partition's value stays in sight, whose plans
 * Postgres goes on making for each request's values, and makes better for seeing the page's size
 * (a generic plan takes a LIMIT it cannot see as a tenth of the rows).
 */
const windowParameter = (source: ListSource, plan: Plan): string =>
  !source.scope && plan.partition === 'all' && plan.residual.every(isRangePrefix) ? unseen('bigint') : '?::bigint';

function pageSql(
  source: ListSource,
  plan: Plan,
  base: Knex.QueryBuilder,
  query: ListQuery,
  window: Window,
  few: number,
): PageSql {
  if (window.first !== undefined) return firstPageSql(source, plan, window.first);
  const { db, alias } = source;
  const idCol = `${alias}.id`;
  const order = (qb: Knex.QueryBuilder) => applyOrdering(qb, plan.ordering, alias);
  const buckets = countersServe(source, plan)?.idBuckets;
  const seek = seekOf(source, plan);
  const ranges = rangesServe(source, plan, base);
  // Walks along the ordering's index test each row for a prefix (see PrefixForm), unless the
  // ordering is the prefix's own column, whose range is then the walk.
  const prefixed = plan.residual.find(isRangePrefix);
  const walkBase =
    prefixed && !(plan.ordering[0]?.alias === prefixed.alias && plan.ordering[0]?.column === prefixed.column)
      ? baseOf(source, plan, 'test')
      : base;
  const rangeDirection = ranges && rangeSeekDirection(plan.ordering, alias, ranges.buckets.column);
  if (isDeep(query.offset) && ranges && rangeDirection)
    return seekPage(ranges, rangeDirection, source.columns, order, window);
  if (isDeep(query.offset) && buckets && seek) return idSeekPage(source, plan, base, window, buckets, seek);
  // LIMIT and OFFSET written here (knex's take only numbers), so they stay bound values.
  const n = windowParameter(source, plan);
  const slice = (q: Knex.QueryBuilder): Knex.Raw => {
    const ordered = order(q).toSQL();
    return db.raw(`${ordered.sql} LIMIT ${n} OFFSET ${n}`, [
      ...ordered.bindings,
      window.limit,
      window.offset,
    ] as Knex.RawBinding[]);
  };
  if (isDeep(query.offset)) {
    const { sql, bindings } = db(`${source.table} as ${alias}`)
      .select(source.columns)
      .whereRaw('?? IN (?)', [idCol, slice(walkBase.clone().select(idCol))])
      .toSQL();
    const idBuckets = ranges?.prefix && source.partition?.counters?.idBuckets;
    const prefixSeek = idBuckets && seekOf(source, plan, idBuckets);
    if (!ranges?.prefix || !idBuckets || !prefixSeek) return { sql, bindings };
    // A prefix that matches most of the partition, in an order the id buckets serve: the few rows
    // it leaves out are found in the name index, on both sides of the matches (below the prefix,
    // above the last match), and subtracted from the buckets. More than `few` left out: the walk.
    const col = `${alias}.${ranges.buckets.column}`;
    const partitionOnly = baseOf(source, { ...plan, residual: [] });
    const dim = prefixSeek.column ? db.raw('?? AS dim, ', [`${alias}.${prefixSeek.column.list}`]).toQuery() : '';
    const many = '(SELECT n FROM probed) > ?';
    // Each side walks the name index away from the matches (the ORDER BY keeps Postgres on it).
    // Read only when the matches are many (`probed`: see probed): Postgres may evaluate the seek
    // below even where its branch of the page is switched off.
    const side = (where: Knex.Raw, direction: 'asc' | 'desc') =>
      partitionOnly
        .clone()
        .select(db.raw(`${dim}?? >> ${idBuckets.bits} AS bucket`, [idCol]))
        .where(where)
        .whereRaw(many, [few])
        .orderBy(col, direction)
        .limit(few + 1, { skipBinding: true })
        .toSQL();
    const below = side(db.raw(`?? < ${unseen('text')}`, [col, String(ranges.prefix.values[0])]), 'desc');
    const lastMatch = base.clone().max(col).toSQL();
    const above = side(db.raw(`?? > (${lastMatch.sql})`, [col, ...lastMatch.bindings] as Knex.RawBinding[]), 'asc');
    const outside = db.raw(`(${below.sql}) UNION ALL (${above.sql})`, [
      ...below.bindings,
      ...above.bindings,
    ] as Knex.RawBinding[]);
    // Gated like the sides: Postgres may run the seek's walk (an InitPlan) even where its branch
    // is switched off, and a plan made without the prefix walks the id index testing each row.
    const gated = walkBase.clone().whereRaw(many, [few]);
    const sought = idSeekPage(source, plan, gated, window, idBuckets, prefixSeek, outside);
    // Not final: compile puts it behind the probe (few matches: sorted from the matches), whose
    // count is tested first, so the rows left out are only read when the matches are many.
    return {
      sql: `(SELECT * FROM (${sought.sql}) AS sought WHERE ${many} AND (SELECT count(*) FROM outside) <= ?) UNION ALL (SELECT * FROM (${sql}) AS walked WHERE ${many} AND (SELECT count(*) FROM outside) > ?)`,
      bindings: [...sought.bindings, few, few, ...bindings, few, few],
      with: sought.with,
      probe: true,
    };
  }
  const { sql, bindings } = slice(walkBase.clone().select(source.columns)).toSQL();
  return { sql, bindings };
}

/**
 * Rows a filter may match for its page to be sorted from the matches themselves. With filters the
 * counters cannot answer (`user__startswith`), Postgres otherwise walks the requested order's index
 * and tests each row, which costs the whole table when the matches sit at its far end (measured at
 * 1,000,000 users: 131 ms for a prefix matching the last 10,000, 5.6 ms from the matches). Past this
 * many the matches are dense enough for the walk, and counting them costs more than either.
 */
const FEW_MATCHES = 20_000;

export interface PlannerTuning {
  /** See FEW_MATCHES (tests lower it to reach both branches with small tables). */
  fewMatches?: number;
}

interface Sql {
  sql: string;
  bindings: readonly Knex.Value[];
}

/**
 * With residual filters: a bounded probe of the matches decides, inside the statement, between
 * sorting the page from the matches (few) and the ordered walk with count(*) (many). Postgres runs
 * only the branch the probe selects (each is gated by a one-time condition).
 */
function probed(
  source: ListSource,
  plan: Plan,
  base: Knex.QueryBuilder,
  window: Window,
  walk: PageSql,
  few: number,
  exact?: (qb: Knex.QueryBuilder) => Knex.QueryBuilder,
): { with: (qb: Knex.QueryBuilder) => Knex.QueryBuilder; total: Sql; page: Sql } {
  const { db, alias } = source;
  // The probe keeps the ordering's columns, so the page is sorted from it, never by walking an index.
  const orderColumns = [...new Set(plan.ordering.map((o) => o.column).filter((c) => c !== 'id'))];
  const probe = base
    .clone()
    .select([`${alias}.id`, ...orderColumns.map((c) => `${alias}.${c}`)])
    .limit(few + 1, { skipBinding: true });
  const count = base.clone().count({ n: '*' }).toSQL();
  const ids = applyOrdering(
    db('probe').select('probe.id'),
    plan.ordering.map((o) => ({ ...o, alias: 'probe' })),
    'probe',
  ).toSQL();
  const n = windowParameter(source, plan);
  const pageIds = db.raw(`${ids.sql} LIMIT ${n} OFFSET ${n}`, [
    ...ids.bindings,
    window.limit,
    window.offset,
  ] as Knex.RawBinding[]);
  const fromMatches = applyOrdering(
    db(`${source.table} as ${alias}`)
      .select(source.columns)
      .whereRaw('(SELECT n FROM probed) <= ?', [few])
      .whereRaw('?? IN (?)', [`${alias}.id`, pageIds]),
    plan.ordering,
    alias,
  ).toSQL();
  // With range counters (`exact`: the segments of withSegments) the total is known without the probe,
  // which the page alone reads (when the total is few): inlined there, its matches go straight to
  // the sort instead of into a materialized copy first (at 10,000,000 users, 10,000 matches of
  // `user__startswith`: 1.7 ms instead of 2.6–3.0 ms). Its LIMIT still keeps Postgres from
  // walking the page's own order instead.
  if (exact) {
    return {
      // The walk's own expressions come last: they may test `probed`.
      with: (qb) =>
        (walk.with ?? ((q: Knex.QueryBuilder) => q))(
          exact(qb)
            .with('probe', probe)
            .with('probed', db.raw(`SELECT total AS n FROM (${segmentsTotalSql}) AS s`)),
        ),
      total: { sql: 'SELECT n AS total FROM probed', bindings: [] },
      page: {
        sql: `(${fromMatches.sql}) UNION ALL (SELECT * FROM (${walk.sql}) AS walked WHERE (SELECT n FROM probed) > ?)`,
        bindings: [...fromMatches.bindings, ...walk.bindings, few],
      },
    };
  }
  return {
    with: (qb) => qb.withMaterialized('probe', probe).with('probed', db.raw('SELECT count(*) AS n FROM probe')),
    total: {
      sql: `SELECT CASE WHEN n <= ? THEN n ELSE (${count.sql}) END AS total FROM probed`,
      bindings: [few, ...count.bindings],
    },
    page: {
      sql: `(${fromMatches.sql}) UNION ALL (SELECT * FROM (${walk.sql}) AS walked WHERE (SELECT n FROM probed) > ?)`,
      bindings: [...fromMatches.bindings, ...walk.bindings, few],
    },
  };
}

/**
 * Step 2, compiled: the total and the page as one statement. Its SQL depends only on the query's
 * shape (the source, how many partition values, the ordering, near or deep, the residual filters'
 * columns, lookups and numbers of values: see shapeKey), so it is built with knex and compiled
 * once per shape; each request only binds its values (db.raw, so every statement still passes
 * through knex's query events), and the shape is prepared on the server under its name (see
 * db/prepared.ts).
 */
function compile(source: ListSource, plan: Plan, query: ListQuery, window: Window, tuning: PlannerTuning): Sql {
  const { db, alias } = source;
  const base = baseOf(source, plan);
  const total = totalQuery(source, plan, base);
  const few = tuning.fewMatches ?? FEW_MATCHES;
  const walk = pageSql(source, plan, base, query, window, few);
  const ranges = plan.residual.length > 0 ? rangesServe(source, plan, base) : null;
  const statement =
    walk.with && !walk.probe
      ? { with: walk.with, total: ranges ? { sql: segmentsTotalSql, bindings: [] } : total.toSQL(), page: walk }
      : plan.residual.length > 0
        ? probed(source, plan, base, window, walk, few, ranges ? withSegments(ranges, 'count') : undefined)
        : { with: undefined, total: total.toSQL(), page: walk };
  // knex has no lateral join; the page's SQL goes in with its bindings still as placeholders.
  const combined = (statement.with ? statement.with(db.queryBuilder()) : db.queryBuilder())
    .select('t.total', `${alias}.*`, ...(source.attached?.columns ?? []).map((c) => db.raw(c.sql, [...c.bindings])))
    .from(db.raw(`(${statement.total.sql}) AS t`, [...statement.total.bindings] as Knex.RawBinding[]))
    .joinRaw(`LEFT JOIN LATERAL (${statement.page.sql}) AS ?? ON true`, [...statement.page.bindings, alias]);
  const { sql, bindings } = applyOrdering(combined, plan.ordering, alias).toSQL();
  return { sql, bindings };
}

/**
 * Stand-ins for a request's values while its shape is compiled; replaced one for one in the compiled
 * bindings. The NUL byte keeps them apart from anything a request or a source can hold (and
 * Postgres refuses one that were ever sent).
 */
const slot = (name: string): string => `\u0000cairn-slot:${name}`;
const LIMIT_SLOT = slot('limit');
const OFFSET_SLOT = slot('offset');
const partitionSlot = (i: number): string => slot(`partition:${i}`);

/**
 * A compiled shape: its statement, and where each request value goes in its bindings (found once,
 * so a request fills its bindings in one pass instead of looking each one up).
 */
interface Shape {
  statement: FixedStatement;
  /**
   * Per binding: -1 a constant, 0 the limit, 1 the offset, 2 + i the i-th partition value,
   * VALUE_SLOTS and above a residual filter's value (valueSlotCode).
   */
  slots: Int32Array;
}

/**
 * Compiled shapes per database handle, by the source's key (sourceKey: the same string object at
 * every request of a route, so its hash is computed once) and then by the plan's shape; few in
 * practice (orderings × partition sizes × near/deep).
 */
const compiledShapes = new WeakMap<Db, { count: number; bySource: Map<string, Map<string, Shape>> }>();
const MAX_SHAPES = 1000;

/** Residual filter values a shape may bind; with more, the plan is compiled with its own values. */
const MAX_SHAPED_VALUES = 8;

/** Stand-in for the k-th residual filter value; it ends in ':' so no bound form of one is another's. */
const valueSlot = (k: number): string => slot(`value:${k}:`);
/** A Shape slot for the k-th residual value's `part`-th bound value (boundValues), or -1: the value itself. */
const VALUE_SLOTS = 1 << 20;
const valueSlotCode = (k: number, part: number): number => VALUE_SLOTS + k * 4 + part + 1;

/** The residual conditions' filters, in the order their values are slotted and bound. */
const residualFilters = (plan: Plan): Filter[] => plan.residual.flatMap((c) => (isFilter(c) ? [c] : c.filters));

/** isnull's value decides the SQL (IS NULL or IS NOT NULL): part of the shape, not a binding. */
const slotsValues = (f: Filter): boolean => f.lookup !== 'isnull';

/**
 * The shape of a plan within its source when its every request value is a partition value, the
 * limit, the offset or one of at most MAX_SHAPED_VALUES residual filter values (no scope closure,
 * plain column names); else null and the plan is compiled with its own values. A residual filter
 * is part of the shape by its column, lookup and number of values.
 */
function shapeKey(source: ListSource, plan: Plan, query: ListQuery, few: number, first?: number): string | null {
  if (source.scope || !source.columns.every((c) => typeof c === 'string')) return null;
  let key = `${plan.partition === 'all' ? 'all' : plan.partition.size}${isDeep(query.offset) ? ' deep' : ''}`;
  if (first !== undefined) key += ` first ${first}`;
  for (const o of plan.ordering) key += ` ${o.alias}.${o.column}${o.desc ? ' desc' : ''}`;
  if (plan.residual.length === 0) return key;
  let values = 0;
  for (const c of plan.residual) {
    if (!isFilter(c)) key += ` | ${c.column} in ${c.table} ${c.alias}`;
    for (const f of isFilter(c) ? [c] : c.filters) {
      const bytes = f.byteOrdered ? ' bytes' : '';
      key += ` | ${f.alias}.${f.column} ${f.lookup}${bytes} ${slotsValues(f) ? f.values.length : String(f.values[0])}`;
      if (!slotsValues(f)) continue;
      values += f.values.length;
      // Compiled as a range, which a prefix without a successor cannot be.
      if (f.byteOrdered && f.lookup === 'startswith' && prefixSuccessor(String(f.values[0])) === null) return null;
    }
  }
  return values > MAX_SHAPED_VALUES ? null : `${key} | few ${few}`;
}

/**
 * The part of a shape's key that comes from the source itself: its table, columns, counters and
 * attached columns, the same for every request of a route. A route builds its source per request
 * (the operator's clusters differ) around the same constant parts, so their text is kept by the
 * columns array and reused while every part is the same object or string as when it was written
 * (a source's parts are never changed in place). Writing it out each time was most of the key's cost.
 */
interface SourceKey {
  parts: readonly unknown[];
  text: string;
}
const sourceKeys = new WeakMap<object, SourceKey>();
function sourceKey(source: ListSource): string {
  const { table, alias, columns, partition, attached, defaultOrdering } = source;
  const parts = [table, alias, partition?.column, partition?.counters, attached, defaultOrdering] as const;
  const known = sourceKeys.get(columns);
  if (known && known.parts.every((p, i) => p === parts[i])) return known.text;
  const text = JSON.stringify([table, alias, columns, ...parts.slice(2)]);
  sourceKeys.set(columns, { parts, text });
  return text;
}

/** The statement of a request: a shape's carries the shape's name, one compiled with its own values none. */
function statementFor(
  source: ListSource,
  plan: Plan,
  query: ListQuery,
  tuning: PlannerTuning,
): Sql & { name?: string } {
  const first = isFirstPage(source, plan, query) ? query.limit : undefined;
  const window = { limit: query.limit, offset: String(query.offset), first };
  const key = shapeKey(source, plan, query, tuning.fewMatches ?? FEW_MATCHES, first);
  if (key === null) return compile(source, plan, query, window, tuning);
  let compiled = compiledShapes.get(source.db);
  if (!compiled) compiledShapes.set(source.db, (compiled = { count: 0, bySource: new Map() }));
  const ofSource = sourceKey(source);
  let shapes = compiled.bySource.get(ofSource);
  if (!shapes) compiled.bySource.set(ofSource, (shapes = new Map()));
  let shape = shapes.get(key);
  if (!shape) {
    shape = compileShape(source, plan, query, tuning, first);
    if (compiled.count >= MAX_SHAPES) {
      compiled.bySource.clear();
      compiled.count = 0;
      compiled.bySource.set(ofSource, (shapes = new Map()));
    }
    shapes.set(key, shape);
    compiled.count += 1;
  }
  // A slot below VALUE_SLOTS is an index into these: the limit, the offset, the partition's values.
  const request: Knex.Value[] = [window.limit, window.offset, ...(plan.partition === 'all' ? [] : plan.partition)];
  const values = plan.residual.length === 0 ? [] : residualFilters(plan).filter(slotsValues);
  const { statement, slots } = shape;
  const bindings = new Array<Knex.Value>(slots.length);
  for (let i = 0; i < slots.length; i++) {
    const at = slots[i]!;
    bindings[i] =
      at < 0 ? statement.bindings[i]! : at < VALUE_SLOTS ? request[at]! : valueBinding(values, at - VALUE_SLOTS);
  }
  return { sql: statement.sql, bindings, name: statement.name };
}

/** The k-th residual value (counted over the filters' values in order) as the slot asks for it. */
function valueBinding(filters: readonly Filter[], code: number): Knex.Value {
  let k = code >> 2;
  const part = (code & 3) - 1;
  for (const f of filters) {
    if (k < f.values.length) return part < 0 ? f.values[k]! : boundValues(f, f.values[k]!)[part]!;
    k -= f.values.length;
  }
  throw new Error('a compiled shape names a residual value the request does not have');
}

/** Compiles a plan's shape with slots for its request values, and finds where each slot went. */
function compileShape(
  source: ListSource,
  plan: Plan,
  query: ListQuery,
  tuning: PlannerTuning,
  first: number | undefined,
): Shape {
  const slots = plan.partition === 'all' ? 'all' : new Set([...plan.partition].map((_, i) => partitionSlot(i)));
  const slotOf = new Map<Knex.Value, number>([
    [LIMIT_SLOT, 0],
    [OFFSET_SLOT, 1],
  ]);
  if (slots !== 'all') [...slots].forEach((s, i) => slotOf.set(s, 2 + i));
  const mark = (value: Knex.Value, code: number): void => {
    if (slotOf.has(value)) throw new Error('two slots of a compiled shape are bound as the same value');
    slotOf.set(value, code);
  };
  let k = 0;
  const slotted = (f: Filter): Filter => {
    if (!slotsValues(f)) return f;
    const values = f.values.map(() => {
      const stand = valueSlot(k);
      boundValues(f, stand).forEach((bound, part) => mark(bound, valueSlotCode(k, part)));
      // A value also used as it is (the rows below a prefix: see pageSql).
      if (!slotOf.has(stand)) mark(stand, valueSlotCode(k, -1));
      k += 1;
      return stand;
    });
    return { ...f, values };
  };
  const residual = plan.residual.map((c) => (isFilter(c) ? slotted(c) : { ...c, filters: c.filters.map(slotted) }));
  const { sql, bindings } = compile(
    source,
    { ...plan, partition: slots, residual },
    query,
    { limit: LIMIT_SLOT, offset: OFFSET_SLOT, first },
    tuning,
  );
  return { statement: fixedStatement(sql, bindings), slots: Int32Array.from(bindings, (b) => slotOf.get(b) ?? -1) };
}

/** Steps 1 and 2: the total and the page in one statement. */
export async function listPage<T>(source: ListSource, query: ListQuery, tuning: PlannerTuning = {}): Promise<Page<T>> {
  const plan = await resolve(source, query);
  if (plan.partition !== 'all' && plan.partition.size === 0) return { total: 0, rows: [] };
  if (query.offset >= MAX_OFFSET) {
    const [row] = await totalQuery(source, plan, baseOf(source, plan));
    return { total: Number((row as { total: string | number | null }).total ?? 0), rows: [] };
  }
  const { sql, bindings, name } = statementFor(source, plan, query, tuning);
  const result = await runStatement<{ rows: Array<T & { total: string | number | null; id: unknown }> }>(
    source.db,
    sql,
    bindings,
    name,
  );
  // Every row carries the total; an empty page is one row whose page columns are null.
  return { total: Number(result.rows[0]?.total ?? 0), rows: result.rows.filter((r) => r.id !== null) };
}
