import type { Knex } from 'knex';
import { createDatabase } from '../../src/db/database';
import { parseListQuery } from '../../src/http/filters';
import { getStorageUserView, listStorageUsers } from '../../src/repositories/storage-users';
import { usersResource } from '../../src/routes/users';
import { createDatabaseWithClusters, type TestDatabaseWithClusters } from '../support/harness';

/** A name prefix as its range of names, each bound as a subquery's result (see list-ranges.ts, unseen). */
const NAME_RANGE = /"u"\."username" >= \(SELECT \$\d+::text\) and "u"\."username" < \(SELECT \$\d+::text\)/;

/**
 * The statements a list or detail route repeats are prepared under a name (db/prepared.ts), so
 * Postgres parses and plans them once per connection. Read on one connection (a pool of one), the
 * session's pg_prepared_statements shows which were.
 */
describe('prepared statements on Postgres', () => {
  let database: TestDatabaseWithClusters;
  const handles: Knex[] = [];
  const oneConnection = (preparedStatements: boolean) => {
    const db = createDatabase({ url: database.url, poolMax: 1, preparedStatements });
    handles.push(db);
    return db;
  };
  const prepared = async (db: Knex) =>
    (
      (await db.raw('SELECT name, statement FROM pg_prepared_statements ORDER BY name')) as {
        rows: Array<{ name: string; statement: string }>;
      }
    ).rows;
  const page = (db: Knex, cluster: number, offset = 0) =>
    listStorageUsers(
      db,
      parseListQuery(
        usersResource,
        [
          ['cluster', String(cluster)],
          ['limit', '2'],
          ['offset', String(offset)],
        ],
        20,
        1000,
      ),
    );

  beforeAll(async () => {
    database = await createDatabaseWithClusters('postgres', ['north', 'south']);
    const [north, south] = database.clusters as [number, number];
    await database.db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash)
       SELECT CASE WHEN g % 2 = 0 THEN ?::int ELSE ?::int END, 'user' || g, 'x' FROM generate_series(1, 6) AS g`,
      [north, south],
    );
  });
  afterAll(async () => {
    await Promise.all(handles.map((h) => h.destroy()));
    await database.drop();
  });

  it('when a users page and a detail are read again with other values, then each statement was prepared once, under a name, and answers for its own values', async () => {
    const db = oneConnection(true);
    const [north, south] = database.clusters as [number, number];
    const first = await page(db, north);
    const second = await page(db, south, 1);
    expect(first.rows.map((u) => u.clusterId)).toEqual([north, north]);
    expect(second.rows.map((u) => u.clusterId)).toEqual([south, south]);
    expect(second.total).toBe(3);
    const view = await getStorageUserView(db, first.rows[1]!.id);
    expect(view?.username).toBe(first.rows[1]!.username);
    expect((await getStorageUserView(db, second.rows[0]!.id))?.username).toBe(second.rows[0]!.username);

    // A related filter: the cluster's id by its name, then the page of that one cluster.
    const byName = await listStorageUsers(
      db,
      parseListQuery(
        usersResource,
        [
          ['cluster__name', 'south'],
          ['limit', '2'],
        ],
        20,
        1000,
      ),
    );
    expect(byName.rows.map((u) => u.clusterId)).toEqual([south, south]);

    const statements = await prepared(db);
    // One for the first page's shape (both clusters, by id or by name), one for the pages after
    // it, one for the detail, one for the cluster's id by its name.
    expect(statements).toHaveLength(4);
    expect(statements.some((s) => /"c"\."name" = \$1 limit \$2$/.test(s.statement))).toBe(true);
    for (const s of statements) expect(s.name).toMatch(/^cairn_[\w-]{32}$/);
    const [firstPage, laterPage, detailStatement] = [
      /LIMIT 2\) AS "u"/,
      /OFFSET \$\d+::bigint/,
      /"u"\."id" = \$\d+ limit \$\d+$/,
    ].map((re) => statements.find((s) => re.test(s.statement)));
    expect(firstPage).toBeDefined();
    expect(laterPage).toBeDefined();
    expect(detailStatement).toBeDefined();
  });

  it('when users are listed by name and by a prefix of it, with other values, then each filter shape was prepared once, and answers for its own values', async () => {
    const db = oneConnection(true);
    const list = (params: Array<[string, string]>) =>
      listStorageUsers(db, parseListQuery(usersResource, params, 20, 1000)).then((p) => ({
        total: p.total,
        names: p.rows.map((u) => u.username).sort(),
      }));
    expect(await list([['user', 'user2']])).toEqual({ total: 1, names: ['user2'] });
    expect(await list([['user', 'user5']])).toEqual({ total: 1, names: ['user5'] });
    expect(await list([['user__startswith', 'user']])).toEqual({
      total: 6,
      names: ['user1', 'user2', 'user3', 'user4', 'user5', 'user6'],
    });
    expect(await list([['user__startswith', 'user3']])).toEqual({ total: 1, names: ['user3'] });
    expect(await list([['user__startswith', 'usex']])).toEqual({ total: 0, names: [] });
    const statements = await prepared(db);
    expect(statements).toHaveLength(2);
    // The prefix as a range of names: a LIKE pattern would bound no index scan in a generic plan.
    expect(statements.filter((s) => NAME_RANGE.test(s.statement))).toHaveLength(1);
  });

  it('when more statement shapes are asked for than names are allowed, then the first keep theirs, the rest go unnamed, and every one answers', async () => {
    const db = createDatabase({ url: database.url, poolMax: 1, preparedStatementsMax: 2 });
    handles.push(db);
    const names = async (params: Array<[string, string]>) =>
      (await listStorageUsers(db, parseListQuery(usersResource, params, 20, 1000))).rows.map((u) => u.username).sort();
    const shapes: Array<[Array<[string, string]>, string[]]> = [
      [[['user', 'user2']], ['user2']],
      [[['user__startswith', 'user3']], ['user3']],
      [[['enabled', 'true']], ['user1', 'user2', 'user3', 'user4', 'user5', 'user6']],
      [[['order_by', '-user']], ['user1', 'user2', 'user3', 'user4', 'user5', 'user6']],
    ];
    for (const round of [1, 2])
      for (const [params, expected] of shapes)
        expect({ round, params, names: await names(params) }).toEqual({ round, params, names: expected });
    const statements = await prepared(db);
    expect(statements).toHaveLength(2);
    expect(statements.map((s) => s.statement).join('\n')).toMatch(/"u"\."username" = \$1/);
  });

  it('when prepared statements are off (PgBouncer before 1.21), then nothing is prepared and the same pages answer', async () => {
    const db = oneConnection(false);
    const [north] = database.clusters as [number, number];
    const rows = (await page(db, north)).rows;
    expect(rows).toHaveLength(2);
    expect((await getStorageUserView(db, rows[0]!.id))?.id).toBe(rows[0]!.id);
    expect(await prepared(db)).toEqual([]);
  });

  it('when one connection lists prefixes matching one user, twenty thousand and none, deep and not, then Postgres keeps one plan of each statement instead of planning every request', async () => {
    // Enough users that a plan made for a few-match prefix's values costs less than one made
    // without them: with the values in sight Postgres would go on planning every request.
    await database.db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash)
       SELECT ?::int, 'bulk' || g, 'x' FROM generate_series(1, 20000) AS g`,
      [database.clusters[0]!],
    );
    await database.db.raw('VACUUM ANALYZE storage_users');
    const db = oneConnection(true);
    const list = (prefix: string, offset: number) =>
      listStorageUsers(
        db,
        parseListQuery(
          usersResource,
          [
            ['user__startswith', prefix],
            ['offset', String(offset)],
          ],
          20,
          1000,
        ),
      ).then((p) => p.total);
    // More than the five plans Postgres makes for a statement's values before it compares their
    // cost with the generic plan's; the first five of few matches or none, whose plans cost least.
    const totals: Record<string, number> = { bulk12345: 1, bulkz: 0, bulk: 20000 };
    const searches = [
      'bulk12345',
      'bulkz',
      'bulk12345',
      'bulkz',
      'bulk12345',
      'bulk',
      'bulk',
      'bulkz',
      'bulk12345',
      'bulk',
      'bulkz',
      'bulk',
    ];
    for (const offset of [0, 6000])
      for (const prefix of searches)
        expect([prefix, offset, await list(prefix, offset)]).toEqual([prefix, offset, totals[prefix]]);
    const plans = (
      (await db.raw(
        'SELECT statement, generic_plans::int AS generic, custom_plans::int AS custom FROM pg_prepared_statements',
      )) as { rows: Array<{ statement: string; generic: number; custom: number }> }
    ).rows.filter((s) => s.statement.includes('"u"."username" >= '));
    // Page 1 and the deep page: two shapes, each run 12 times, each planned for its values 5 times at most.
    expect(plans.map(({ generic, custom }) => ({ generic, custom }))).toEqual([
      { generic: expect.any(Number), custom: 5 },
      { generic: expect.any(Number), custom: 5 },
    ]);
    for (const p of plans) expect(p.generic).toBe(12 - p.custom);
  });
});
