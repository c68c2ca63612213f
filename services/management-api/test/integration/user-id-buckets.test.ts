import type { Knex } from 'knex';
import { DB_KINDS, createDatabaseWithClusters, type TestDatabaseWithClusters } from '../support/harness';
import { withStatements } from '../support/statements';
import * as bucketsMigration from '../../src/db/migrations/20261122040000_user_id_buckets';
import * as flagsMigration from '../../src/db/migrations/20261123220000_user_flag_ordering';
import * as spansMigration from '../../src/db/migrations/20261130040000_user_id_spans';
import { parseListQuery } from '../../src/http/filters';
import { applyFilters, applyOrdering, listPage } from '../../src/repositories/list-planner';
import { listStorageUsers, usersListSource } from '../../src/repositories/storage-users';
import { usersResource } from '../../src/routes/users';

/**
 * Deep pages ordered by id come from per-bucket counters (storage_user_id_buckets) instead of an
 * OFFSET walk. These tests hold the triggers to keeping every bucket exact, and check that the list
 * planner reads deep pages through them (list-planner.test.ts compares every kind of page with
 * plain OFFSET and count(*)).
 */

interface Row {
  id: string;
  cluster_id: number;
}

async function insertUsers(db: Knex, users: Array<{ id: number; cluster: number }>): Promise<void> {
  if (users.length === 0) return;
  await db.raw(
    `INSERT INTO storage_users (id, cluster_id, username, password_hash)
     SELECT i, c, 'u' || i, 'x' FROM unnest(?::bigint[], ?::int[]) AS t(i, c) ON CONFLICT (id) DO NOTHING`,
    [users.map((u) => u.id), users.map((u) => u.cluster)],
  );
}

/** Per cluster: the buckets' sum, the counter, and count(*); all three must agree. */
async function tallies(
  db: Knex,
): Promise<Array<{ cluster_id: number; buckets: number; counter: number; rows: number }>> {
  const res = await db.raw(`
    SELECT c.id AS cluster_id,
           (SELECT coalesce(sum(n), 0) FROM storage_user_id_buckets b WHERE b.cluster_id = c.id)::int AS buckets,
           (SELECT coalesce(sum(user_count), 0) FROM cluster_user_counts k WHERE k.cluster_id = c.id)::int AS counter,
           (SELECT count(*) FROM storage_users u WHERE u.cluster_id = c.id)::int AS rows
      FROM clusters c ORDER BY c.id`);
  return res.rows;
}

/**
 * Buckets (2^12 ids) and spans (2^18 ids) whose count differs from the rows they stand for (none,
 * when the triggers are right).
 */
async function wrongBuckets(db: Knex): Promise<unknown[]> {
  const wrong = (table: string, unit: string, bits: number) => `
    SELECT '${table}' AS counters, coalesce(b.cluster_id, u.cluster_id) AS cluster_id, coalesce(b.enabled, u.enabled) AS enabled,
           coalesce(b.is_superuser, u.is_superuser) AS is_superuser, coalesce(b.${unit}, u.${unit}) AS ${unit}, b.n, u.n AS actual
      FROM ${table} b
      FULL JOIN (SELECT cluster_id, enabled, is_superuser, id >> ${bits} AS ${unit}, count(*) AS n FROM storage_users GROUP BY 1, 2, 3, 4) u
        ON u.cluster_id = b.cluster_id AND u.enabled = b.enabled AND u.is_superuser = b.is_superuser AND u.${unit} = b.${unit}
     WHERE coalesce(b.n, 0) <> coalesce(u.n, 0)`;
  const res = await db.raw(
    `${wrong('storage_user_id_buckets', 'bucket', 12)} UNION ALL ${wrong('storage_user_id_spans', 'span', 18)}`,
  );
  return res.rows;
}

describe.each(DB_KINDS)('user id buckets on %s', (kind) => {
  let database: TestDatabaseWithClusters;
  let db: Knex;
  let clusters: number[];

  beforeAll(async () => {
    database = await createDatabaseWithClusters(kind, ['a', 'b', 'c']);
    db = database.db;
    clusters = database.clusters;
  });
  afterAll(() => database.drop());
  beforeEach(() => db('storage_users').delete());

  it('when users are inserted one by one, in bulk and by INSERT … SELECT, then every bucket sum equals count(*) per cluster', async () => {
    for (let i = 1; i <= 5; i++)
      await db('storage_users').insert({
        id: i * 3000,
        cluster_id: clusters[i % 3],
        username: `one${i}`,
        password_hash: 'x',
      });
    await insertUsers(
      db,
      Array.from({ length: 300 }, (_, i) => ({ id: 20_000 + i * 97, cluster: clusters[i % 2]! })),
    );
    await db.raw(
      `INSERT INTO storage_users (id, cluster_id, username, password_hash)
      SELECT 60000 + g, ?, 'bulk' || g, 'x' FROM generate_series(1, 9000) AS g`,
      [clusters[2]!],
    );
    expect(await wrongBuckets(db)).toEqual([]);
    for (const t of await tallies(db)) expect(t.buckets).toBe(t.rows);
    expect((await tallies(db)).map((t) => t.rows)).toEqual([151, 152, 9002]);
  });

  it('when users are deleted one by one, by a range and all at once, then every bucket sum still equals count(*)', async () => {
    await insertUsers(
      db,
      Array.from({ length: 2000 }, (_, i) => ({ id: 1 + i * 23, cluster: clusters[i % 3]! })),
    );
    await db('storage_users').where({ id: 24 }).delete();
    await db('storage_users').whereBetween('id', [4000, 30_000]).delete();
    expect(await wrongBuckets(db)).toEqual([]);
    for (const t of await tallies(db)) expect(t).toMatchObject({ buckets: t.rows, counter: t.rows });
    await db('storage_users').delete();
    expect(await wrongBuckets(db)).toEqual([]);
    for (const t of await tallies(db)) expect(t).toMatchObject({ buckets: 0, counter: 0, rows: 0 });
  });

  it('when storage_users is truncated, then the buckets and the per-cluster counter are empty too', async () => {
    await insertUsers(
      db,
      Array.from({ length: 500 }, (_, i) => ({ id: 1 + i * 50, cluster: clusters[i % 3]! })),
    );
    // CASCADE: S3 credentials reference their users.
    await db.raw('TRUNCATE storage_users CASCADE');
    expect(await wrongBuckets(db)).toEqual([]);
    for (const t of await tallies(db)) expect(t).toMatchObject({ buckets: 0, counter: 0, rows: 0 });
  });

  it("when an UPDATE changes a user's id or cluster, then it fails and the counts stay right", async () => {
    await insertUsers(db, [{ id: 10, cluster: clusters[0]! }]);
    await expect(db('storage_users').where({ id: 10 }).update({ cluster_id: clusters[1] })).rejects.toThrow(
      /never change/,
    );
    await expect(db('storage_users').where({ id: 10 }).update({ id: 9000 })).rejects.toThrow(/never change/);
    await db('storage_users').where({ id: 10 }).update({ enabled: false, cluster_id: clusters[0] });
    expect(await wrongBuckets(db)).toEqual([]);
  });

  it('when flags change one user at a time, in bulk, both at once or back again, then every (cluster, flags, bucket) counter equals count(*)', async () => {
    await insertUsers(
      db,
      Array.from({ length: 3000 }, (_, i) => ({ id: 1 + i * 11, cluster: clusters[i % 3]! })),
    );
    await db('storage_users').where({ id: 12 }).update({ enabled: false });
    await db('storage_users')
      .where('id', '<', 9000)
      .update({ is_superuser: db.raw('id % 3 = 0') });
    await db('storage_users')
      .whereBetween('id', [5000, 20_000])
      .update({ enabled: db.raw('NOT enabled'), is_superuser: db.raw('NOT is_superuser') });
    await db('storage_users').where('id', '>', 30_000).update({ password_hash: 'y' });
    await db('storage_users')
      .whereBetween('id', [5000, 7000])
      .update({ enabled: db.raw('NOT enabled') });
    expect(await wrongBuckets(db)).toEqual([]);
    for (const t of await tallies(db)) expect(t).toMatchObject({ buckets: t.rows, counter: t.rows });
    const split = await db.raw(
      'SELECT count(DISTINCT (enabled, is_superuser))::int AS n FROM storage_user_id_buckets WHERE n > 0',
    );
    expect(split.rows[0].n).toBe(4);
  });

  it('when the migrations are rolled back and applied again over existing users, then the buckets are backfilled exactly', async () => {
    await insertUsers(
      db,
      Array.from({ length: 3000 }, (_, i) => ({ id: 1 + i * 13, cluster: clusters[i % 3]! })),
    );
    await db('storage_users').where('id', '<', 6000).update({ enabled: false });
    await db.transaction((trx) => spansMigration.down(trx));
    await db.transaction((trx) => flagsMigration.down(trx));
    await db.transaction((trx) => bucketsMigration.down(trx));
    expect(await db.schema.hasTable('storage_user_id_buckets')).toBe(false);
    await insertUsers(db, [{ id: 45_000, cluster: clusters[0]! }]);
    await db.transaction((trx) => bucketsMigration.up(trx));
    await db('storage_users').where('id', '<', 3000).update({ is_superuser: true });
    await db.transaction((trx) => flagsMigration.up(trx));
    await db('storage_users').where('id', '<', 1000).delete();
    await db.transaction((trx) => spansMigration.up(trx));
    expect(await wrongBuckets(db)).toEqual([]);
    await insertUsers(db, [{ id: 46_000, cluster: clusters[1]! }]);
    expect(await wrongBuckets(db)).toEqual([]);
  });

  /** The same page the plain way: filters, ordering, LIMIT and OFFSET, and count(*). */
  async function plainPage(
    params: Array<[string, string]>,
    visible?: number[],
  ): Promise<{ total: number; ids: string[] }> {
    const query = parseListQuery(usersResource, params, 20, 1000);
    const base = db('storage_users as u');
    applyFilters(base, query.filters);
    if (visible) base.whereIn('u.cluster_id', visible);
    const [count] = await base.clone().count({ total: '*' });
    const rows = (await applyOrdering(base.clone().select('u.id'), query.ordering, 'u')
      .limit(query.limit)
      .offset(Number(query.offset))) as Row[];
    return { total: Number((count as { total: string }).total), ids: rows.map((r) => String(r.id)) };
  }

  it('when a list asks for a page past the deep threshold, then listStorageUsers answers it through the buckets with the rows and total of OFFSET, visibility included', async () => {
    await db.raw(
      `INSERT INTO storage_users (id, cluster_id, username, password_hash)
      SELECT g * 67, (?::int[])[1 + g % 3], 'deep' || g, 'x' FROM generate_series(1, 12000) AS g`,
      [clusters],
    );
    // Ids over four spans of 2^18 (the buckets' counters per span), a gap across the first boundary.
    await db('storage_users').whereBetween('id', [250_000, 300_000]).delete();
    const cases: Array<{ params: Array<[string, string]>; visible?: number[]; none?: true }> = [
      { params: [['offset', '9000']] },
      {
        params: [
          ['offset', '9000'],
          ['order_by', '-id'],
          ['limit', '7'],
        ],
      },
      {
        params: [
          ['offset', '5001'],
          ['cluster', String(clusters[1])],
        ],
        visible: [clusters[1]!, clusters[2]!],
      },
      { params: [['offset', '6000']], visible: [clusters[0]!, clusters[2]!] },
      {
        params: [
          ['offset', '5500'],
          ['cluster', String(clusters[0])],
        ],
        visible: [clusters[2]!],
        none: true,
      },
      { params: [['offset', '20000']] },
    ];
    await withStatements(db, async (statements) => {
      for (const c of cases) {
        statements.length = 0;
        const query = parseListQuery(usersResource, c.params, 20, 1000);
        const page = await listStorageUsers(db, query, c.visible);
        // Clusters that cannot be seen leave nothing to ask for: no statement at all.
        expect(statements).toHaveLength(c.none ? 0 : 1);
        if (!c.none) expect(statements[0]!.sql).toMatch(/storage_user_id_spans[^]*storage_user_id_buckets/);
        const expected = await plainPage(c.params, c.visible);
        expect({ total: page.total, ids: page.rows.map((r) => r.id) }).toEqual(expected);
      }
    });
  });

  it('when a deep page of a prefix leaves out a few users spread over several spans, then the spans less those users find the rows and total of OFFSET', async () => {
    await db.raw(
      `INSERT INTO storage_users (id, cluster_id, username, password_hash)
      SELECT g * 67, (?::int[])[1 + g % 3], 'deep' || g, 'x' FROM generate_series(1, 12000) AS g`,
      [clusters],
    );
    // 40 users the prefix leaves out, their ids over five spans of 2^18 (one shared with matches),
    // their names on both sides of the matches'.
    await db.raw(
      `INSERT INTO storage_users (id, cluster_id, username, password_hash)
      SELECT 1000000 + g * 25013, (?::int[])[1 + g % 3], CASE WHEN g % 2 = 0 THEN 'a' ELSE 'z' END || g, 'x'
        FROM generate_series(1, 40) AS g`,
      [clusters],
    );
    await withStatements(db, async (statements) => {
      for (const params of [
        [
          ['user__startswith', 'deep'],
          ['offset', '9000'],
        ],
        [
          ['user__startswith', 'deep'],
          ['offset', '11000'],
          ['order_by', '-id'],
        ],
        [
          ['user__startswith', 'deep'],
          ['offset', '7001'],
          ['order_by', 'cluster'],
        ],
      ] as Array<Array<[string, string]>>) {
        statements.length = 0;
        // A threshold of 100: the 12,000 matches are many, the 40 left out few.
        const page = await listPage<{ id: string }>(
          usersListSource(db),
          parseListQuery(usersResource, params, 20, 1000),
          { fewMatches: 100 },
        );
        expect(statements.map((q) => q.sql).join()).toMatch(/outside[^]*storage_user_id_spans/);
        expect({ params, total: page.total, ids: page.rows.map((r) => String(r.id)) }).toEqual({
          params,
          ...(await plainPage(params)),
        });
      }
    });
  });
});
