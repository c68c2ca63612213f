/**
 * @slow: random lists against naive SQL, twice (jest.sequencer.js starts it first)
 */
import fc from 'fast-check';
import type { Knex } from 'knex';
import { DB_KINDS, createDatabaseWithClusters, type TestDatabaseWithClusters } from '../support/harness';
import { withStatements } from '../support/statements';
import { parseListQuery } from '../../src/http/filters';
import { applyFilters, applyOrdering, listPage } from '../../src/repositories/list-planner';
import { quotaStateTable } from '../../src/repositories/quotas';
import { listStorageUsers, usersListSource } from '../../src/repositories/storage-users';
import { usersResource } from '../../src/routes/users';

/**
 * The list planner resolves cluster filters to ids, reads totals from counters and deep pages from
 * id buckets. Whatever path it takes, a page must be exactly what the naive query gives: a join
 * on clusters (and on the quota state), every filter as a WHERE, count(*), ORDER BY … LIMIT … OFFSET.
 */

const NAMES = ['north', 'south', 'east'];
const uuidOf = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
const PREFIXES = ['al', 'bo', 'a_', 'a%', 'b\\'];

type Params = Array<[string, string]>;

type PlanNode = Record<string, unknown>;
/** The scans of storage_users in an `EXPLAIN (FORMAT JSON)` plan, in the plan's order. */
function usersScans(plan: PlanNode): PlanNode[] {
  const scans: PlanNode[] = [];
  const collect = (node: PlanNode) => {
    if (node['Relation Name'] === 'storage_users') scans.push(node);
    for (const child of (node.Plans as PlanNode[] | undefined) ?? []) collect(child);
  };
  collect(plan);
  return scans;
}

describe.each(DB_KINDS)('list planner on %s', (kind) => {
  let database: TestDatabaseWithClusters;
  let db: Knex;
  let clusters: number[];

  beforeAll(async () => {
    database = await createDatabaseWithClusters(kind, NAMES);
    db = database.db;
    clusters = database.clusters;
  });
  afterAll(() => database.drop());

  /** What the last fill() was asked for: asked again, it keeps the users it made (only fill writes users). */
  let filled = '';

  /** `n` users with ids spread by `step`, clusters, names and flags decided by the other numbers. */
  async function fill(
    n: number,
    step: number,
    spread: number,
    enabledEvery: number,
    superEvery: number,
    deleteEvery: number,
  ): Promise<void> {
    const asked = [n, step, spread, enabledEvery, superEvery, deleteEvery].join();
    if (asked === filled) return;
    filled = '';
    await db('storage_users').delete();
    await db.raw(
      `INSERT INTO storage_users (id, cluster_id, username, password_hash, enabled, is_superuser)
       SELECT g * ?::int, (?::int[])[1 + (g * ?::int) % 3], (?::text[])[1 + g % 5] || (g % 997), 'x', g % ?::int <> 0, g % ?::int = 0
         FROM generate_series(1, ?::int) AS g ON CONFLICT DO NOTHING`,
      [step, clusters, spread, PREFIXES, enabledEvery, superEvery, n],
    );
    await db.raw('DELETE FROM storage_users WHERE id % ? = 1', [deleteEvery]);
    // Quotas on most users; the reconciler's state on some of those: applied, pending or error.
    await db.raw('UPDATE storage_users SET quota_bytes = (id % 7) * 1000 WHERE id % 5 <> 0');
    await db.raw(
      `INSERT INTO quota_applications (user_id, cluster_id, wanted_version, applied_version, error)
       SELECT id, cluster_id, 2, CASE WHEN id % 3 = 0 THEN 1 ELSE 2 END, CASE WHEN id % 4 = 0 THEN 'Swift is unreachable.' END
         FROM storage_users WHERE id % 5 <> 0 AND id % 11 <> 0`,
    );
    filled = asked;
  }

  async function naive(params: Params, visible?: number[]): Promise<{ total: number; ids: string[] }> {
    const query = parseListQuery(usersResource, params, 20, 1000);
    const base = applyFilters(
      db('storage_users as u')
        .join('clusters as c', 'c.id', 'u.cluster_id')
        .leftJoin(quotaStateTable(db, 'qa'), 'qa.user_id', 'u.id'),
      query.filters,
    );
    if (visible) base.whereIn('u.cluster_id', visible);
    const [count] = await base.clone().count({ total: '*' });
    const rows = (await applyOrdering(base.clone().select('u.id'), query.ordering, 'u')
      .limit(query.limit)
      .offset(Number(query.offset))) as Array<{ id: string }>;
    return { total: Number((count as { total: string }).total), ids: rows.map((r) => String(r.id)) };
  }

  /** `fewMatches`: the planner's probe threshold, lowered so small tables reach both of its branches. */
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

  const filter = (clusterIds: () => number[]) =>
    fc.oneof(
      fc.integer({ min: 0, max: 2 }).map((i): Params => [['cluster', String(clusterIds()[i])]]),
      fc.integer({ min: 0, max: 2 }).map((i): Params => [['cluster', `/api/v1/clusters/${clusterIds()[i]}/`]]),
      fc.integer({ min: 0, max: 2 }).map((i): Params => [['cluster__id', String(clusterIds()[i])]]),
      fc.integer({ min: 0, max: 3 }).map((i): Params => [['cluster__name', NAMES[i] ?? 'nowhere']]),
      fc.integer({ min: 0, max: 3 }).map((i): Params => [['cluster__uuid', uuidOf(i)]]),
      fc
        .uniqueArray(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 3 })
        .map((is): Params => [['cluster__in', is.map((i) => clusterIds()[i]).join(',')]]),
      fc
        .tuple(fc.constantFrom(...PREFIXES), fc.integer({ min: 0, max: 996 }))
        .map(([p, i]): Params => [['user', `${p}${i}`]]),
      fc.constantFrom('a', 'al', 'a_', 'a%', 'b', 'b\\', 'al1', 'z').map((p): Params => [['user__startswith', p]]),
      fc.boolean().map((b): Params => [['enabled', String(b)]]),
      fc.boolean().map((b): Params => [['is_superuser', String(b)]]),
      fc.constantFrom('applied', 'pending', 'error').map((st): Params => [['quota_status', st]]),
      fc
        .uniqueArray(fc.constantFrom('applied', 'pending', 'error'), { minLength: 1, maxLength: 3 })
        .map((st): Params => [['quota_status__in', st.join(',')]]),
      fc.boolean().map((b): Params => [['quota_status__isnull', String(b)]]),
      fc.integer({ min: 0, max: 7 }).map((n): Params => [['quota_bytes__gte', String(n * 1000)]]),
      fc.boolean().map((b): Params => [['quota_bytes__isnull', String(b)]]),
    );
  const field = fc.constantFrom(
    'id',
    '-id',
    'user',
    '-user',
    'cluster',
    '-cluster',
    'enabled',
    '-enabled',
    'is_superuser',
    '-is_superuser',
    'quota_bytes',
    '-quota_bytes',
  );
  // Mostly one field (each has its own plan), sometimes two (an explicit id tie-breaker either way).
  const order = fc.oneof(
    { arbitrary: fc.constant([]), weight: 1 },
    { arbitrary: field.map((f) => [f]), weight: 6 },
    { arbitrary: fc.tuple(field, field).map(([a, b]) => [a, b]), weight: 2 },
  );

  it('when users, filters, orderings, offsets and visibility are random, then every page and total equal the naive OFFSET and count(*)', async () => {
    const page = fc.record({
      filters: fc.array(
        filter(() => clusters),
        { maxLength: 3 },
      ),
      order,
      offset: fc.oneof(
        fc.integer({ min: 0, max: 60 }),
        fc.integer({ min: 4900, max: 9500 }),
        fc.integer({ min: 0, max: 9500 }),
      ),
      limit: fc.integer({ min: 1, max: 40 }),
      visible: fc.option(fc.uniqueArray(fc.integer({ min: 0, max: 2 }), { maxLength: 3 }), { nil: undefined }),
      fewMatches: fc.option(fc.integer({ min: 0, max: 3000 }), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          n: fc.integer({ min: 5500, max: 11000 }),
          step: fc.integer({ min: 1, max: 3 }),
          // Users go to cluster (g * spread) % 3: a multiple of 3 would put them all in one.
          spread: fc.constantFrom(1, 2, 4, 5, 7),
          enabledEvery: fc.integer({ min: 2, max: 9 }),
          superEvery: fc.integer({ min: 2, max: 9 }),
          deleteEvery: fc.integer({ min: 3, max: 50 }),
        }),
        fc.array(page, { minLength: 4, maxLength: 10 }),
        async (data, pages) => {
          await fill(data.n, data.step, data.spread, data.enabledEvery, data.superEvery, data.deleteEvery);
          for (const p of pages) {
            const params: Params = [...p.filters.flat(), ['offset', String(p.offset)], ['limit', String(p.limit)]];
            for (const o of p.order) params.push(['order_by', o]);
            const visible = p.visible?.map((i) => clusters[i]!);
            expect({ params, visible, page: await planned(params, visible, p.fewMatches) }).toEqual({
              params,
              visible,
              page: await naive(params, visible),
            });
          }
        },
      ),
      { numRuns: kind === 'pglite' ? 6 : 15 },
    );
  });

  it('when a deep page is ordered by id, cluster, enabled or is_superuser, either direction, then it is sought through the id buckets and equals the naive OFFSET', async () => {
    await fill(9000, 2, 2, 4, 6, 17);
    await withStatements(db, async (statements) => {
      const flagged = [
        'enabled',
        '-enabled',
        'is_superuser',
        '-is_superuser',
        'enabled',
        'is_superuser',
        '-enabled',
        '-is_superuser',
      ];
      for (const order of [
        [],
        ['id'],
        ['-id'],
        ['cluster'],
        ['-cluster'],
        ['cluster', 'id'],
        ['-cluster', '-id'],
        ...flagged.map((f, i) => (i < 4 ? [f] : [f, f.startsWith('-') ? '-id' : 'id'])),
      ]) {
        for (const narrowing of [[], [['cluster__in', `${clusters[2]},${clusters[0]}`]]] as Params[]) {
          for (const offset of [5001, 5555, 6100, 8000, 8999, 20000]) {
            const params: Params = [
              ...narrowing,
              ...order.map((o): [string, string] => ['order_by', o]),
              ['offset', String(offset)],
              ['limit', '37'],
            ];
            statements.length = 0;
            expect({ params, page: await planned(params) }).toEqual({ params, page: await naive(params) });
            expect({ params, sought: statements.some(({ sql }) => sql.includes('storage_user_id_buckets')) }).toEqual({
              params,
              sought: true,
            });
          }
        }
      }
    });
  });

  it('when a deep page is sought, then the rows it skips inside the bucket or name range are read from an index only, and only the page is read whole', async () => {
    await fill(9000, 2, 2, 4, 6, 17);
    // Index-only scans need the visibility map autovacuum keeps.
    await db.raw('VACUUM ANALYZE storage_users');
    for (const order of [[], ['-id'], ['enabled'], ['-cluster'], ['user'], ['-user']]) {
      // 6100: 1,100 rows past the first 5,000, inside a bucket (ids step 2: 2,048 users a bucket).
      const params: Params = [
        ...order.map((o): [string, string] => ['order_by', o]),
        ['offset', '6100'],
        ['limit', '37'],
      ];
      const statements = await withStatements(db, async () => {
        expect((await planned(params)).ids).toHaveLength(37);
      });
      // As sent: numbered parameters, in order.
      const page = statements.find((q) => /storage_user_(id_buckets|name_ranges)/.test(q.sql))!;
      const [explained] = (
        await db.raw(
          `EXPLAIN (ANALYZE, FORMAT JSON) ${page.sql.replace(/\$\d+/g, '?')}`,
          page.bindings as Knex.RawBinding[],
        )
      ).rows as Array<{ 'QUERY PLAN': unknown }>;
      const plan = explained!['QUERY PLAN'];
      // Rows of storage_users read from the table by any node but an index-only scan.
      const whole = usersScans((plan as Array<{ Plan: PlanNode }>)[0]!.Plan)
        .filter((node) => node['Node Type'] !== 'Index Only Scan')
        .reduce((sum, node) => sum + Number(node['Actual Rows']) * Number(node['Actual Loops']), 0);
      expect({ order, whole }).toEqual({ order, whole: 37 });
    }
  });

  it("when requests differ only in cluster, limit and offset, then one compiled SQL text is sent with each request's values bound", async () => {
    await fill(7000, 1, 1, 5, 7, 40);
    await withStatements(db, async (sent) => {
      for (const shape of [[], ['order_by', '-cluster'], ['order_by', 'enabled']]) {
        for (const deep of [false, true]) {
          sent.length = 0;
          const requests: Params[] = [0, 1, 2].map((i) => [
            ['cluster', String(clusters[i])],
            ['limit', String(5 + i)],
            // Past the first page: a first page is a shape per limit (see the next test).
            ['offset', String(deep ? 5001 + i * 97 : 1 + i * 3)],
            ...(shape.length ? [shape as [string, string]] : []),
          ]);
          for (const params of requests)
            expect({ params, page: await planned(params) }).toEqual({ params, page: await naive(params) });
          const listing = sent.filter((q) => q.sql.includes('cluster_user_counts'));
          expect(listing).toHaveLength(3);
          expect(new Set(listing.map((q) => q.sql)).size).toBe(1);
          expect(new Set(listing.map((q) => JSON.stringify(q.bindings))).size).toBe(3);
          for (const q of listing) expect(JSON.stringify(q.bindings)).not.toContain('cairn-slot');
        }
      }
    });
  });

  it('when first pages differ only in their clusters, then one SQL text is sent per limit and number of clusters, with no OFFSET and the limit written in', async () => {
    await fill(7000, 1, 1, 5, 7, 40);
    const sent = await withStatements(db, async () => {
      for (const limit of ['20', '7'])
        for (const [i, order] of [
          [0, 'id'],
          [1, 'id'],
          [2, '-id'],
          [0, '-id'],
        ] as const) {
          const params: Params = [
            ['cluster', String(clusters[i])],
            ['limit', limit],
            ['order_by', order],
          ];
          expect({ params, page: await planned(params) }).toEqual({ params, page: await naive(params) });
        }
      for (const params of [
        [['limit', '5']],
        [
          ['limit', '5'],
          ['order_by', '-id'],
        ],
        [['cluster__in', `${clusters[0]},${clusters[2]}`]],
        [
          ['cluster__in', `${clusters[1]},${clusters[2]}`],
          ['order_by', '-id'],
        ],
      ] as Params[])
        expect({ params, page: await planned(params) }).toEqual({ params, page: await naive(params) });
    });
    const listing = sent.filter((q) => q.sql.includes('cluster_user_counts')).map((q) => q.sql);
    expect(listing).toHaveLength(12);
    expect(new Set(listing).size).toBe(8);
    for (const sql of listing) expect(sql).not.toMatch(/offset/i);
    expect(listing.filter((sql) => / limit 20\)/i.test(sql))).toHaveLength(6);
  });

  it('when the first page of one cluster is asked for again and again, then Postgres plans its statement once, and that one plan reads a cluster of two users from (cluster_id, id) rather than walking every user, alone or beside another', async () => {
    await fill(9000, 1, 1, 5, 7, 40);
    filled = ''; // the users added here are not fill's
    const [row] = (await db('clusters')
      .insert({ name: 'small', uuid: uuidOf(99), auth_url: 'http://small/auth/v1.0', storage_url: 'http://small/v1' })
      .returning('id')) as Array<{ id: number }>;
    const small = String(row!.id);
    try {
      // Its users have the highest ids: the primary key's walk would reach them last.
      await db('storage_users').insert(
        [1, 2].map((i) => ({ id: 100_000 + i, cluster_id: small, username: `small${i}`, password_hash: 'x' })),
      );
      await db.raw('VACUUM ANALYZE storage_users');
      const big = String(clusters[0]);
      // One cluster, and two (an operator's few): the second reads each cluster's page in turn.
      for (const asked of [[['cluster', big]], [['cluster__in', `${big},${clusters[1]}`]]] as Params[]) {
        const sent = await withStatements(db, () => planned(asked));
        const page = sent.find((q) => q.sql.includes('cluster_user_counts'))!;
        let n = 0;
        const numbered = (sql: string) => (/\$1\b/.test(sql) ? sql : sql.replace(/\?/g, () => `$${++n}`));
        const plans = await db.transaction(async (trx) => {
          await trx.raw(`PREPARE cairn_first_page AS ${numbered(page.sql)}`);
          const values = (cluster: string) =>
            trx
              .raw(
                page.bindings.map(() => '?').join(', '),
                page.bindings.map((b) => (b === big ? cluster : b)) as Knex.RawBinding[],
              )
              .toQuery();
          // Postgres settles after five runs: a generic plan if it costs no more than the others did.
          for (let i = 0; i < 6; i++) await trx.raw(`EXECUTE cairn_first_page(${values(big)})`);
          const explain = async (options: string, cluster: string): Promise<PlanNode> => {
            const [explained] = (await trx.raw(`EXPLAIN (${options}) EXECUTE cairn_first_page(${values(cluster)})`))
              .rows as Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>;
            return explained!['QUERY PLAN'][0]!.Plan;
          };
          const smallPlan = await explain('ANALYZE, FORMAT JSON', small);
          const [counts] = (
            await trx.raw(
              "SELECT generic_plans::int, custom_plans::int FROM pg_prepared_statements WHERE name = 'cairn_first_page'",
            )
          ).rows as Array<{ generic_plans: number; custom_plans: number }>;
          const plans = { small: smallPlan, ...counts! };
          await trx.raw('DEALLOCATE cairn_first_page');
          return plans;
        });
        // Planned for the first five runs' values, then once for any: the generic plan was kept.
        expect({ custom: plans.custom_plans, generic: plans.generic_plans }).toEqual({ custom: 5, generic: 2 });
        // And for the small cluster it reads its two users from the index, none tested and passed over.
        const [scan] = usersScans(plans.small);
        expect(scan).toMatchObject({ 'Index Name': 'storage_users_cluster_id_id_idx', 'Actual Rows': 2 });
        expect(scan!['Rows Removed by Filter'] ?? 0).toBe(0);
        const params: Params = [['cluster__in', `${small},${clusters[1]}`]];
        expect(await planned(params)).toEqual(await naive(params));
      }
    } finally {
      await db('storage_users').where('cluster_id', small).delete();
      await db('clusters').where('id', small).delete();
    }
  });

  it("when requests differ only in their filters' values, then one compiled SQL text is sent with each request's values bound, a name prefix as a range of names", async () => {
    await fill(7000, 1, 1, 5, 7, 40);
    const bound: Array<{ sql: string; bindings: unknown[] }> = [];
    await withStatements(db, async (sent) => {
      const shapes: Array<(i: number) => Params> = [
        (i) => [['user', ['al1', 'bo12', 'a_3'][i]!]],
        (i) => [['user__startswith', ['al', 'a%', 'b\\'][i]!]],
        (i) => [
          ['user__startswith', ['a', 'b', 'a_'][i]!],
          ['order_by', '-user'],
          ['offset', String(5001 + i * 50)],
        ],
        (i) => [
          ['enabled', String(i !== 1)],
          ['quota_status__in', ['applied,pending', 'pending,error', 'error,applied'][i]!],
          ['quota_bytes__isnull', 'false'],
        ],
      ];
      for (const shape of shapes) {
        sent.length = 0;
        for (const params of [0, 1, 2].map(shape))
          expect({ params, page: await planned(params) }).toEqual({ params, page: await naive(params) });
        const listing = sent.filter((q) => q.sql.startsWith('with') || q.sql.includes('"t"."total"'));
        for (const q of listing) bound.push({ sql: q.sql, bindings: q.bindings });
        expect(listing).toHaveLength(3);
        expect(new Set(listing.map((q) => q.sql)).size).toBe(1);
        expect(new Set(listing.map((q) => JSON.stringify(q.bindings))).size).toBe(3);
        for (const q of listing) expect(JSON.stringify(q.bindings)).not.toContain('cairn-slot');
      }
      // A prefix of the name is scanned as its range of names: 'a_' and the least string above
      // every name starting with it ('_' is 0x5f). A LIKE pattern would bound no index scan in a
      // prepared statement's generic plan.
      expect(bound.some((q) => q.bindings.includes('a_') && q.bindings.includes('a`'))).toBe(true);
      expect(
        bound.some((q) =>
          /"u"\."username" >= \(SELECT \$\d+::text\) and "u"\."username" < \(SELECT \$\d+::text\)/.test(q.sql),
        ),
      ).toBe(true);
    });
  });

  it("when a prefix matching most users is paged by id from a prepared statement, then its generic plan walks the rows testing each name by the pattern, and scans the name index only within the prefix's range", async () => {
    await fill(9000, 1, 1, 5, 7, 40);
    await db.raw('VACUUM ANALYZE storage_users');
    const statements = await withStatements(db, async () => {
      const query = parseListQuery(usersResource, [['user__startswith', 'a']], 20, 1000);
      expect((await listPage(usersListSource(db), query, { fewMatches: 10 })).rows).toHaveLength(20);
    });
    const page = statements.find((q) => q.sql.includes('probed'))!;
    let n = 0;
    const numbered = (sql: string) => (/\$1\b/.test(sql) ? sql : sql.replace(/\?/g, () => `$${++n}`));
    // A generic plan knows no value, so it cannot tell how many names the prefix matches.
    const plan = await db.transaction(async (trx) => {
      await trx.raw('SET LOCAL plan_cache_mode = force_generic_plan');
      await trx.raw(`PREPARE cairn_walk_check AS ${numbered(page.sql)}`);
      const values = trx.raw(page.bindings.map(() => '?').join(', '), page.bindings as Knex.RawBinding[]).toQuery();
      const [explained] = (await trx.raw(`EXPLAIN (FORMAT JSON) EXECUTE cairn_walk_check(${values})`)).rows as Array<{
        'QUERY PLAN': Array<{ Plan: Record<string, unknown> }>;
      }>;
      await trx.raw('DEALLOCATE cairn_walk_check');
      return explained!['QUERY PLAN'][0]!.Plan;
    });
    const onUsers = usersScans(plan);
    // The walk: each row's name tested by the pattern, so no plan can read and sort every match.
    expect(onUsers.some((node) => /~~/.test(String(node.Filter)) && !node['Index Cond'])).toBe(true);
    // Every scan of the name index is bounded by the prefix's range.
    for (const node of onUsers.filter((n) => n['Index Name'] === 'storage_users_username_id_idx'))
      expect(String(node['Index Cond'])).toMatch(/username.*>=.*username.*</);
  });

  it('when a list filters by cluster name, then the cluster is looked up first and the page and total come without a join or a count of users', async () => {
    await fill(6000, 1, 1, 5, 7, 40);
    await withStatements(db, async (statements) => {
      for (const params of [
        [['cluster__name', 'south']],
        [
          ['cluster__uuid', uuidOf(1)],
          ['offset', '1500'],
        ],
        [
          ['cluster__name', 'south'],
          ['order_by', '-id'],
          ['offset', '1800'],
        ],
      ] as Params[]) {
        statements.length = 0;
        expect(await planned(params)).toEqual(await naive(params));
        const listing = statements.slice(0, 2);
        expect(listing).toHaveLength(2);
        expect(listing[0]!.sql).toMatch(/from "clusters" as "c"/);
        expect(listing[1]!.sql).toContain('cluster_user_counts');
        expect(listing[1]!.sql).not.toMatch(/count\(\*\)|join "clusters"/);
      }
      // Every value travels as a bind parameter, none is written into the SQL.
      for (const params of [
        [['user__startswith', "a'%"]],
        [
          ['cluster__name', 'south'],
          ['user__startswith', "b'"],
          ['offset', '5200'],
        ],
        [
          ['cluster', String(clusters[0])],
          ['offset', '5200'],
        ],
        [
          ['user', 'al1'],
          ['order_by', '-user'],
        ],
      ] as Params[]) {
        statements.length = 0;
        await planned(params);
        expect(statements.length).toBeGreaterThan(0);
        for (const { sql } of statements) expect(sql).not.toMatch(/'|\b5200\b|\bal1\b/);
      }
      statements.length = 0;
      expect(await planned([['cluster__name', 'nowhere']])).toEqual({ total: 0, ids: [] });
      expect(statements).toHaveLength(1);
    });
  });

  it('when a cluster filter matches more clusters than are looked up first, then it stays a subquery, no list of ids, and pages equal the naive ones', async () => {
    await fill(6000, 1, 1, 5, 7, 40);
    const extra = (await db('clusters')
      .insert(
        Array.from({ length: 150 }, (_, i) => ({
          name: `many-${i}`,
          uuid: uuidOf(1000 + i),
          auth_url: 'http://x/auth',
          storage_url: 'http://x/v1',
        })),
      )
      .returning('id')) as Array<{ id: number }>;
    try {
      await withStatements(db, async (sent) => {
        for (const params of [
          [['cluster__id__gte', '0']],
          [
            ['cluster__id__gte', '0'],
            ['order_by', '-id'],
            ['offset', '5300'],
            ['limit', '30'],
          ],
          [
            ['cluster__id__gte', '0'],
            ['order_by', 'cluster'],
            ['offset', '700'],
          ],
          [
            ['cluster__id__gte', '0'],
            ['user__startswith', 'al'],
            ['order_by', '-user'],
          ],
        ] as Params[]) {
          sent.length = 0;
          expect({ params, page: await planned(params) }).toEqual({ params, page: await naive(params) });
          expect(Math.max(...sent.map((q) => q.bindings.length))).toBeLessThan(40);
          expect(sent.some((q) => /"u"\."cluster_id" in \(select "c"\."id" from "clusters" as "c"/.test(q.sql))).toBe(
            true,
          );
        }
        // With the caller's visibility as well: both narrow.
        const visible = [clusters[0]!, clusters[2]!];
        expect(await planned([['cluster__id__gte', '0']], visible)).toEqual(
          await naive([['cluster__id__gte', '0']], visible),
        );
      });
    } finally {
      await db('clusters')
        .whereIn(
          'id',
          extra.map((r) => r.id),
        )
        .delete();
    }
  });
});
