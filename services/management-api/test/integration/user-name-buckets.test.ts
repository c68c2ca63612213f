/**
 * @slow: random writes and lists against count(*), twice (jest.sequencer.js starts it first)
 */
import fc from 'fast-check';
import type { Knex } from 'knex';
import { DB_KINDS, createDatabaseWithClusters, type TestDatabaseWithClusters } from '../support/harness';
import { withStatements } from '../support/statements';
import * as nameBucketsMigration from '../../src/db/migrations/20261124020000_user_name_buckets';
import * as nameSpansMigration from '../../src/db/migrations/20261130060000_user_name_spans';
import { NAME_RANGE_MAX_ROWS } from '../../src/db/migrations/20261130050000_user_name_range_bound';
import { parseListQuery } from '../../src/http/filters';
import { applyFilters, applyOrdering, listPage } from '../../src/repositories/list-planner';
import { listStorageUsers, usersListSource } from '../../src/repositories/storage-users';
import { usersResource } from '../../src/routes/users';

/**
 * Deep pages ordered by name and totals of a name prefix come from counters per range of names
 * (storage_user_name_ranges, storage_user_name_buckets) that triggers keep and cut. These tests
 * lower the ranges' target size so a few thousand users make hundreds of ranges and every
 * statement cuts some, and hold the counters to count(*) and the planner's pages and totals to
 * plain OFFSET and count(*).
 */

type Params = Array<[string, string]>;

/** Ranges whose counts differ from the rows they stand for, gaps or overlaps between ranges (none, when right). */
async function wrongRanges(db: Knex): Promise<unknown[]> {
  // Each user's range found by an index probe per user, independently of how the triggers find it.
  // The per-range sums are joined, not a subquery per range: that scanned every (range, cluster)
  // row once per range, quadratic in the thousands of ranges a tiny target makes.
  const res = await db.raw(`
    WITH r AS (SELECT lower_name, upper_name, n, lead(lower_name) OVER (ORDER BY lower_name) AS next FROM storage_user_name_ranges),
      actual AS (
        SELECT (SELECT max(lower_name) FROM storage_user_name_ranges r WHERE r.lower_name <= u.username) AS lower_name, u.cluster_id, count(*) AS n
          FROM storage_users u GROUP BY 1, 2),
      per_range AS (SELECT lower_name, sum(n) AS n FROM actual GROUP BY 1)
    SELECT 'range' AS what, r.lower_name, NULL::int AS cluster_id, r.n, coalesce(a.n, 0) AS actual
      FROM r LEFT JOIN per_range a ON a.lower_name = r.lower_name
     WHERE r.n <> coalesce(a.n, 0)
    UNION ALL
    SELECT 'gap', lower_name, NULL, NULL, NULL FROM r WHERE upper_name IS DISTINCT FROM next
    UNION ALL
    SELECT 'start', min(lower_name), NULL, NULL, NULL FROM r HAVING min(lower_name) IS DISTINCT FROM ''
    UNION ALL
    SELECT 'bucket', coalesce(b.lower_name, a.lower_name), coalesce(b.cluster_id, a.cluster_id), b.n, a.n
      FROM storage_user_name_buckets b FULL JOIN actual a ON a.lower_name = b.lower_name AND a.cluster_id = b.cluster_id
     WHERE coalesce(b.n, 0) <> coalesce(a.n, 0)
    UNION ALL
    SELECT 'span', s.lower_name, NULL, s.n, (SELECT coalesce(sum(a.n), 0) FROM per_range a
        WHERE a.lower_name >= s.lower_name AND (s.upper_name IS NULL OR a.lower_name < s.upper_name))
      FROM storage_user_name_spans s
     WHERE s.n <> (SELECT coalesce(sum(a.n), 0) FROM per_range a
        WHERE a.lower_name >= s.lower_name AND (s.upper_name IS NULL OR a.lower_name < s.upper_name))
    UNION ALL
    SELECT 'span gap', lower_name, NULL, NULL, NULL FROM (
        SELECT lower_name, upper_name, lead(lower_name) OVER (ORDER BY lower_name) AS next FROM storage_user_name_spans) AS s
     WHERE upper_name IS DISTINCT FROM next
    UNION ALL
    SELECT 'span start', min(lower_name), NULL, NULL, NULL FROM storage_user_name_spans HAVING min(lower_name) IS DISTINCT FROM ''
    UNION ALL
    SELECT 'span bound', s.lower_name, NULL, NULL, NULL FROM storage_user_name_spans s
     WHERE NOT EXISTS (SELECT FROM storage_user_name_ranges r WHERE r.lower_name = s.lower_name)`);
  return res.rows;
}

const largestRange = async (db: Knex): Promise<number> =>
  Number((await db.raw('SELECT coalesce(max(n), 0) AS n FROM storage_user_name_ranges')).rows[0].n);
/** The most ranges any span holds. */
const largestSpan = async (db: Knex): Promise<number> =>
  Number(
    (
      await db.raw(`SELECT coalesce(max((SELECT count(*) FROM storage_user_name_ranges r
          WHERE r.lower_name >= s.lower_name AND (s.upper_name IS NULL OR r.lower_name < s.upper_name))), 0) AS n
        FROM storage_user_name_spans s`)
    ).rows[0].n,
  );
const rangeCount = async (db: Knex): Promise<number> =>
  Number((await db.raw('SELECT count(*) AS n FROM storage_user_name_ranges')).rows[0].n);
const spanCount = async (db: Knex): Promise<number> =>
  Number((await db.raw('SELECT count(*) AS n FROM storage_user_name_spans')).rows[0].n);
/** The ranges' target size, and the spans' number of ranges (both cut at twice theirs). */
const setTarget = (db: Knex, size: number, spanRanges = 64) =>
  db.raw('UPDATE storage_user_name_bucket_settings SET target_size = ?, span_ranges = ?', [size, spanRanges]);

/** Names from a small alphabet with the LIKE wildcards and escape in it, so prefixes share ranges. */
const ALPHABET = ['a', 'b', '_', '%', '\\', 'B', 'é'];

describe.each(DB_KINDS)('user name buckets on %s', (kind) => {
  let database: TestDatabaseWithClusters;
  let db: Knex;
  let clusters: number[];

  beforeAll(async () => {
    database = await createDatabaseWithClusters(kind, ['a', 'b', 'c']);
    db = database.db;
    clusters = database.clusters;
  });
  afterAll(() => database.drop());
  beforeEach(async () => {
    await db('storage_users').delete();
    await setTarget(db, 4096);
  });

  async function insertNamed(names: string[], clusterOf: (i: number) => number): Promise<void> {
    if (names.length === 0) return;
    await db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash)
       SELECT c, n, 'x' FROM unnest(?::int[], ?::text[]) AS t(c, n) ON CONFLICT DO NOTHING`,
      [names.map((_, i) => clusterOf(i)), names],
    );
  }

  async function naive(params: Params, visible?: number[]): Promise<{ total: number; ids: string[] }> {
    const query = parseListQuery(usersResource, params, 20, 1000);
    const base = applyFilters(db('storage_users as u').join('clusters as c', 'c.id', 'u.cluster_id'), query.filters);
    if (visible) base.whereIn('u.cluster_id', visible);
    const [count] = await base.clone().count({ total: '*' });
    const rows = (await applyOrdering(base.clone().select('u.id'), query.ordering, 'u')
      .limit(query.limit)
      .offset(Number(query.offset))) as Array<{ id: string }>;
    return { total: Number((count as { total: string }).total), ids: rows.map((r) => String(r.id)) };
  }

  /** `fewMatches`: the planner's probe threshold, lowered so a few thousand users reach both of its branches. */
  async function planned(
    params: Params,
    visible?: number[],
    fewMatches?: number,
  ): Promise<{ total: number; ids: string[] }> {
    const query = parseListQuery(usersResource, params, 20, 1000);
    const page =
      fewMatches === undefined
        ? await listStorageUsers(db, query, visible)
        : await listPage<{ id: string }>(usersListSource(db, visible), query, { fewMatches });
    return { total: page.total, ids: page.rows.map((r) => String(r.id)) };
  }

  /**
   * Lists `params` (its page and total checked against the naive ones) and explains the statement
   * that read the name counters, as the API sent it; `analyze`: run it, for actual row counts.
   */
  async function explainedList(params: Params, analyze: boolean): Promise<Record<string, unknown>> {
    const statements = await withStatements(db, async () => {
      expect({ params, page: await planned(params) }).toEqual({ params, page: await naive(params) });
    });
    const page = statements.find((q) => q.sql.includes('storage_user_name_'))!;
    const [explained] = (
      await db.raw(
        `EXPLAIN (${analyze ? 'ANALYZE, ' : ''}FORMAT JSON) ${page.sql.replace(/\$\d+/g, '?')}`,
        page.bindings as Knex.RawBinding[],
      )
    ).rows as Array<{ 'QUERY PLAN': unknown }>;
    return (explained!['QUERY PLAN'] as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan;
  }

  it('when users are inserted, deleted and listed at random with tiny ranges, then the counters equal count(*) and every page and total equal the naive OFFSET and count(*)', async () => {
    const name = fc.array(fc.constantFrom(...ALPHABET), { minLength: 1, maxLength: 6 }).map((cs) => cs.join(''));
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('insert' as const),
        names: fc.array(name, { maxLength: 60 }),
        cluster: fc.integer({ min: 0, max: 2 }),
      }),
      fc.record({
        kind: fc.constant('bulk' as const),
        n: fc.integer({ min: 1, max: 3000 }),
        prefix: name,
        mod: fc.integer({ min: 1, max: 5000 }),
      }),
      fc.record({
        kind: fc.constant('deleteEvery' as const),
        every: fc.integer({ min: 2, max: 9 }),
        rest: fc.integer({ min: 0, max: 8 }),
      }),
      fc.record({ kind: fc.constant('deletePrefix' as const), prefix: name }),
    );
    const page = fc.record({
      prefix: fc.option(fc.oneof(name, fc.constantFrom('a', 'b', '_', '%', '\\', 'ab', 'zz', 'é', 'B')), {
        nil: undefined,
      }),
      order: fc.constantFrom([], ['user'], ['-user'], ['user', 'id'], ['-user', '-id'], ['id'], ['-cluster']),
      offset: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 5001, max: 9000 })),
      limit: fc.integer({ min: 1, max: 30 }),
      clusters: fc.option(fc.uniqueArray(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 3 }), {
        nil: undefined,
      }),
      fewMatches: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 1, max: 6 }),
        fc.array(op, { minLength: 1, maxLength: 6 }),
        fc.array(page, { minLength: 3, maxLength: 8 }),
        async (target, spanRanges, ops, pages) => {
          // From one empty range and span: a smaller setting only cuts what later statements touch.
          await db.raw('TRUNCATE storage_users CASCADE');
          await setTarget(db, target, spanRanges);
          // Enough users for pages past the planner's deep threshold (5,000).
          await db.raw(
            `INSERT INTO storage_users (cluster_id, username, password_hash)
           SELECT (?::int[])[1 + g % 3], (?::text[])[1 + g % 7] || (g * 7919 % 3001), 'x' FROM generate_series(1, 9000) AS g ON CONFLICT DO NOTHING`,
            [clusters, ALPHABET],
          );
          for (const o of ops) {
            if (o.kind === 'insert') await insertNamed(o.names, () => clusters[o.cluster]!);
            else if (o.kind === 'bulk')
              await insertNamed(
                Array.from({ length: o.n }, (_, i) => `${o.prefix}${(i * 31) % o.mod}`),
                (i) => clusters[i % 3]!,
              );
            else if (o.kind === 'deleteEvery')
              await db.raw('DELETE FROM storage_users WHERE id % ? = ?', [o.every, o.rest % o.every]);
            else
              await db.raw(`DELETE FROM storage_users WHERE username LIKE ? || '%'`, [
                o.prefix.replace(/[\\%_]/g, (c) => `\\${c}`),
              ]);
            expect({ o, wrong: await wrongRanges(db) }).toEqual({ o, wrong: [] });
            // A range only stays over twice the target if its rows share too few names to cut.
            expect(await largestRange(db)).toBeLessThanOrEqual(Math.max(2 * target, 3));
            expect(await largestSpan(db)).toBeLessThanOrEqual(2 * spanRanges);
          }
          for (const p of pages) {
            const params: Params = [
              ['offset', String(p.offset)],
              ['limit', String(p.limit)],
              ...p.order.map((o): [string, string] => ['order_by', o]),
            ];
            if (p.prefix !== undefined) params.push(['user__startswith', p.prefix]);
            if (p.clusters) params.push(['cluster__in', p.clusters.map((i) => clusters[i]).join(',')]);
            expect({ params, page: await planned(params, undefined, p.fewMatches) }).toEqual({
              params,
              page: await naive(params),
            });
          }
        },
      ),
      { numRuns: kind === 'pglite' ? 3 : 8 },
    );
  });

  it('when a deep page is ordered by name or a prefix is counted, then the name ranges answer it, not a walk or a count over every match', async () => {
    await setTarget(db, 50);
    await db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash)
      SELECT (?::int[])[1 + g % 3], 'n' || lpad(g::text, 6, '0'), 'x' FROM generate_series(1, 12000) AS g`,
      [clusters],
    );
    expect(await rangeCount(db)).toBeGreaterThan(12000 / 100);
    await withStatements(db, async (statements) => {
      for (const params of [
        [
          ['order_by', 'user'],
          ['offset', '9000'],
        ],
        [
          ['order_by', '-user'],
          ['offset', '11990'],
          ['limit', '50'],
        ],
        [
          ['order_by', 'user'],
          ['cluster__in', `${clusters[1]},${clusters[2]}`],
          ['offset', '7999'],
        ],
        [
          ['user__startswith', 'n0'],
          ['order_by', '-user'],
          ['offset', '8000'],
        ],
        [
          ['user__startswith', 'n00'],
          ['offset', '3'],
        ],
        [
          ['user__startswith', 'n0099'],
          ['cluster__in', `${clusters[0]},${clusters[2]}`],
        ],
        [
          ['user__startswith', 'n0'],
          ['order_by', 'user'],
          ['offset', '20000'],
        ],
      ] as Params[]) {
        statements.length = 0;
        expect({ params, page: await planned(params) }).toEqual({ params, page: await naive(params) });
        expect({
          params,
          ranges: statements.some(({ sql }) => /storage_user_name_(buckets|ranges)/.test(sql)),
        }).toEqual({
          params,
          ranges: true,
        });
      }
      // A prefix that leaves out only a few users, ordered by id or cluster: the id buckets less those few.
      for (const params of [
        [
          ['user__startswith', 'n00'],
          ['offset', '9000'],
        ],
        [
          ['user__startswith', 'n0'],
          ['order_by', '-cluster'],
          ['offset', '7000'],
          ['limit', '45'],
        ],
        [
          ['user__startswith', 'n01'],
          ['order_by', '-id'],
          ['cluster__in', `${clusters[0]},${clusters[1]}`],
          ['offset', '6000'],
        ],
      ] as Params[]) {
        statements.length = 0;
        expect({ params, page: await planned(params) }).toEqual({ params, page: await naive(params) });
        expect({
          params,
          sought: statements.some(({ sql }) => sql.includes('storage_user_id_buckets') && sql.includes('outside')),
        }).toEqual({ params, sought: true });
      }
    });
  });

  it('when an unrestricted deep page is ordered by name or a prefix is counted, then the spans answer it with the ranges of at most two spans', async () => {
    // About 240 ranges of 50 names, in spans of 4 (at most 8 ranges each), cut from one range and
    // span (ranges other tests left would keep the spans they were cut into).
    await db.raw('TRUNCATE storage_users CASCADE');
    await setTarget(db, 50, 4);
    await db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash)
      SELECT (?::int[])[1 + g % 3], 'n' || lpad(g::text, 6, '0'), 'x' FROM generate_series(1, 12000) AS g`,
      [clusters],
    );
    expect(await rangeCount(db)).toBeGreaterThan(200);
    for (const params of [
      [
        ['order_by', 'user'],
        ['offset', '9000'],
      ],
      [
        ['order_by', '-user'],
        ['offset', '11990'],
        ['limit', '50'],
      ],
      // A page that may end in the next span (about 200 names each).
      [
        ['order_by', 'user'],
        ['offset', '6150'],
        ['limit', '100'],
      ],
      [['user__startswith', 'n0']],
      [
        ['user__startswith', 'n00'],
        ['offset', '9000'],
      ],
      [['user__startswith', 'n0050']],
    ] as Params[]) {
      const plan = await explainedList(params, true);
      // Rows of each counter table read by the plan's scans, kept or filtered out.
      const read: Record<string, number> = {};
      const walk = (node: Record<string, unknown>) => {
        const table = node['Relation Name'];
        if (typeof table === 'string')
          read[table] =
            (read[table] ?? 0) +
            (Number(node['Actual Rows']) + Number(node['Rows Removed by Filter'] ?? 0)) * Number(node['Actual Loops']);
        for (const c of (node.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(c);
      };
      walk(plan);
      expect({ params, spans: read.storage_user_name_spans! > 0 }).toEqual({ params, spans: true });
      // Two spans' ranges, each span at most twice 4 (and the prefix's two ends: one probe each).
      const ranges = read.storage_user_name_ranges ?? 0;
      expect({ params, ranges, few: ranges <= 2 * 2 * 4 + 2 }).toEqual({ params, ranges, few: true });
    }
  });

  it("when a prefix's edges are counted, then each count is planned as at most one range's rows, not a share of the table", async () => {
    // Ranges of about 500 names: 'p' then spans several, and its edges are counted in the index.
    await setTarget(db, 500);
    await db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash)
      SELECT (?::int[])[1 + g % 3], 'p' || lpad(g::text, 6, '0'), 'x' FROM generate_series(1, 3000) AS g`,
      [clusters],
    );
    await db.raw('ANALYZE storage_users');
    // A prefix every user has (the rows before and after its ranges are counted in the index), one
    // that falls inside a single range (counted whole), on page 1 and deep, for all clusters and one.
    for (const params of [
      [['user__startswith', 'p']],
      [
        ['user__startswith', 'p00'],
        ['offset', '2500'],
      ],
      [
        ['user__startswith', 'p0012'],
        ['cluster', String(clusters[1])],
      ],
      [
        ['user__startswith', 'p'],
        ['order_by', 'user'],
        ['offset', '2000'],
      ],
    ] as Params[]) {
      const plan = await explainedList(params, false);
      // Counts over storage_users with no row limit between them and the scan.
      const unbounded: string[] = [];
      const walk = (node: Record<string, unknown>) => {
        const children = (node.Plans as Array<Record<string, unknown>> | undefined) ?? [];
        if (node['Node Type'] === 'Aggregate') {
          let child = children[0];
          while (child && ['Subquery Scan', 'Gather', 'Aggregate'].includes(String(child['Node Type'])))
            child = (child.Plans as Array<Record<string, unknown>>)[0];
          if (child?.['Relation Name'] === 'storage_users') unbounded.push(String(child['Node Type']));
          if (child?.['Node Type'] === 'Limit')
            expect(Number(child['Plan Rows'])).toBeLessThanOrEqual(NAME_RANGE_MAX_ROWS);
        }
        for (const c of children) walk(c);
      };
      walk(plan);
      expect({ params, unbounded }).toEqual({ params, unbounded: [] });
    }
  });

  it("when the ranges' target is set past its ceiling, then the database refuses it", async () => {
    await expect(setTarget(db, NAME_RANGE_MAX_ROWS / 2 + 1)).rejects.toThrow(/target_max/);
    await setTarget(db, NAME_RANGE_MAX_ROWS / 2);
  });

  // PGlite has one connection: nothing runs concurrently there.
  (kind === 'pglite' ? it.skip : it)(
    'when writers insert and delete overlapping names concurrently while ranges are being cut, then no count is lost',
    async () => {
      await setTarget(db, 4, 2);
      // One cluster per writer: writers of one cluster wait for each other on its counter
      // (cluster_user_counts) before they reach the name ranges; writers of different clusters meet
      // only there, on ranges they share.
      const own = (await db('clusters')
        .insert(
          Array.from({ length: 8 }, (_, w) => ({
            name: `writer-${w}`,
            uuid: `00000000-0000-4000-9000-${String(w).padStart(12, '0')}`,
            auth_url: 'http://w/auth',
            storage_url: 'http://w/v1',
          })),
        )
        .returning('id')) as Array<{ id: number }>;
      // Each statement its own transaction, as the API writes users; statements lock ranges in name
      // order, so none may fail with a deadlock either.
      const writers = own.map(async ({ id: cluster }, w) => {
        for (let round = 0; round < 40; round++) {
          const names = Array.from(
            { length: 1 + ((w + round) % 7) },
            (_, i) => `s${String((w * 131 + round * 37 + i * 101) % 400).padStart(3, '0')}-${w}-${round}-${i}`,
          );
          await db.raw(
            `INSERT INTO storage_users (cluster_id, username, password_hash) SELECT ?, n, 'x' FROM unnest(?::text[]) AS t(n)`,
            [cluster, names],
          );
          if (round % 4 === 3)
            await db.raw(`DELETE FROM storage_users WHERE cluster_id = ? AND username LIKE ?`, [
              cluster,
              `s${(w + round) % 4}%`,
            ]);
        }
      });
      const settled = await Promise.allSettled(writers);
      expect(settled.filter((s) => s.status === 'rejected')).toEqual([]);
      expect(await wrongRanges(db)).toEqual([]);
      expect(await rangeCount(db)).toBeGreaterThan(50);
      expect(await spanCount(db)).toBeGreaterThan(10);
      await db('storage_users').delete();
      await db('clusters')
        .whereIn(
          'id',
          own.map((c) => c.id),
        )
        .delete();
    },
  );

  it('when storage_users is truncated, then the ranges start again from one empty range', async () => {
    await setTarget(db, 5, 2);
    await insertNamed(
      Array.from({ length: 200 }, (_, i) => `t${i}`),
      (i) => clusters[i % 3]!,
    );
    expect(await rangeCount(db)).toBeGreaterThan(10);
    expect(await spanCount(db)).toBeGreaterThan(3);
    // CASCADE: S3 credentials reference their users.
    await db.raw('TRUNCATE storage_users CASCADE');
    expect(await wrongRanges(db)).toEqual([]);
    expect([await rangeCount(db), await spanCount(db)]).toEqual([1, 1]);
    await insertNamed(['t1'], () => clusters[0]!);
    expect(await wrongRanges(db)).toEqual([]);
  });

  it("when an UPDATE changes a user's name, then it fails and the counts stay right", async () => {
    await insertNamed(['keep', 'other'], () => clusters[0]!);
    await expect(db('storage_users').where({ username: 'keep' }).update({ username: 'zzz' })).rejects.toThrow(
      /never changes/,
    );
    await db('storage_users').where({ username: 'keep' }).update({ username: 'keep', enabled: false });
    expect(await wrongRanges(db)).toEqual([]);
  });

  it('when the migration is rolled back and applied again over existing users, then the ranges are backfilled exactly and cut to size', async () => {
    await insertNamed(
      Array.from({ length: 3000 }, (_, i) => `back${(i * 37) % 2000}`),
      (i) => clusters[i % 3]!,
    );
    await db.transaction(async (trx) => {
      await nameSpansMigration.down(trx);
      await nameBucketsMigration.down(trx);
    });
    expect(await db.schema.hasTable('storage_user_name_ranges')).toBe(false);
    await insertNamed(['late'], () => clusters[1]!);
    await db.transaction((trx) => nameBucketsMigration.up(trx));
    // Ranges before spans, as the migrations come: the spans' backfill sums ranges already cut.
    await db.raw('UPDATE storage_user_name_bucket_settings SET target_size = 100');
    await insertNamed(['back1y'], () => clusters[1]!);
    expect(await rangeCount(db)).toBeGreaterThan(10);
    await db.transaction((trx) => nameSpansMigration.up(trx));
    expect(await wrongRanges(db)).toEqual([]);
    expect(await spanCount(db)).toBe(1);
    await setTarget(db, 20, 3);
    await insertNamed(['back1x'], () => clusters[1]!);
    expect(await wrongRanges(db)).toEqual([]);
    expect(await spanCount(db)).toBeGreaterThan(3);
  });
});
