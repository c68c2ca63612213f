import type { Knex } from 'knex';
import { DB_KINDS, createDatabaseWithClusters, type TestDatabaseWithClusters } from '../support/harness';
import { parseListQuery } from '../../src/http/filters';
import { getStorageUserSummary, listStorageUsers } from '../../src/repositories/storage-users';
import { fetchCommonUserPage } from '../../src/repositories/user-page-statements';
import { usersResource } from '../../src/routes/users';

/**
 * Page 1 of a cluster (or of everyone) goes through named prepared statements on Postgres. These
 * tests hold it to the generic path's answer, and check which shapes it takes and leaves.
 */
describe.each(DB_KINDS)('common user pages on %s', (kind) => {
  let database: TestDatabaseWithClusters;
  let db: Knex;
  let clusters: number[];

  beforeAll(async () => {
    database = await createDatabaseWithClusters(kind, ['a', 'b']);
    db = database.db;
    clusters = database.clusters;
    await db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash, is_superuser, enabled)
       SELECT (?::int[])[1 + g % 2], 'p' || g, 'x', g % 5 = 0, g % 7 <> 0 FROM generate_series(1, 300) AS g`,
      [clusters],
    );
  });
  afterAll(() => database.drop());

  const query = (params: Array<[string, string]>) => parseListQuery(usersResource, params, 20, 1000);

  /** The same list through the generic knex path (a transaction never takes the statements). */
  const generic = (params: Array<[string, string]>, visible?: number[]) => db.transaction((trx) => listStorageUsers(trx, query(params), visible));

  it.each([
    ['page 1 of a cluster', [['cluster', '1']]],
    ['a later page of a cluster', [['cluster', '2'], ['offset', '37'], ['limit', '11']]],
    ['page 1 of everyone', []],
    ['a page of everyone ordered by id', [['order_by', 'id'], ['offset', '290']]],
    ['a page past the last user', [['cluster', '1'], ['offset', '5000']]],
    ['a cluster that does not exist', [['cluster', '999']]],
  ] as Array<[string, Array<[string, string]>]>)('when %s is listed, then the answer equals the generic path', async (_name, params) => {
    const fixed = params.map(([k, v]): [string, string] => [k, k === 'cluster' && v !== '999' ? String(clusters[Number(v) - 1]) : v]);
    expect(await listStorageUsers(db, query(fixed))).toEqual(await generic(fixed));
  });

  it('when a restricted operator lists everyone, then only the one cluster it sees is listed', async () => {
    const page = await listStorageUsers(db, query([]), [clusters[1]!]);
    expect(page).toEqual(await generic([], [clusters[1]!]));
    expect(page.total).toBe(150);
    expect(new Set(page.rows.map((r) => r.clusterId))).toEqual(new Set([clusters[1]]));
  });

  it('when the list is ordered otherwise, filtered on more than the cluster, deep, or in a transaction, then the statements leave it to the generic path', async () => {
    const both = new Set(clusters.map(String));
    const shapes: Array<[Array<[string, string]>, Set<string> | 'all' | null]> = [
      [[['order_by', '-id']], 'all'],
      [[['order_by', 'user']], 'all'],
      [[['order_by', 'id'], ['order_by', 'user']], 'all'],
      [[['enabled', 'false']], null],
      [[['cluster__in', [...both].join(',')]], both],
      [[['offset', '5001']], 'all'],
    ];
    for (const [params, set] of shapes) expect(await fetchCommonUserPage(db, query(params), set)).toBeNull();
    await db.transaction(async (trx) => expect(await fetchCommonUserPage(trx, query([]), 'all')).toBeNull());
  });

  it(`when page 1 of a cluster is listed, then ${kind === 'postgres' ? 'a named prepared statement answers it' : 'PGlite answers it the generic way'}`, async () => {
    const page = await fetchCommonUserPage(db, query([['cluster', String(clusters[0])]]), new Set([String(clusters[0])]));
    if (kind === 'pglite') return expect(page).toBeNull();
    expect(page?.total).toBe(150);
    expect(page?.rows).toHaveLength(20);
  });

  it('when one user is read for its detail, then the answer equals the generic path, and an unknown id gives null', async () => {
    const [row] = (await db('storage_users').where({ username: 'p35' }).select('id')) as Array<{ id: string }>;
    const summary = await getStorageUserSummary(db, String(row!.id));
    expect(summary).toEqual(await db.transaction((trx) => getStorageUserSummary(trx, String(row!.id))));
    expect(summary).toEqual({ id: String(row!.id), clusterId: clusters[1], username: 'p35', isSuperuser: true, enabled: false });
    expect(await getStorageUserSummary(db, '9999999')).toBeNull();
  });
});
