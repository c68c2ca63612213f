import { Client, type Notification } from 'pg';
import { createDatabaseWithClusters, type TestDatabaseWithClusters } from '../support/harness';

/**
 * Gateways keep user rows in memory and drop them when Postgres announces a change; these tests
 * hold the triggers to that contract for every kind of write, whoever makes it. Postgres only:
 * notifications need a second connection, which embedded PGlite does not have.
 */
describe('storage user change notices on postgres', () => {
  let database: TestDatabaseWithClusters;
  let listener: Client;
  let notices: unknown[];
  let clusterA: number;
  let clusterB: number;

  beforeAll(async () => {
    database = await createDatabaseWithClusters('postgres', ['a', 'b']);
    [clusterA, clusterB] = database.clusters as [number, number];
    listener = new Client({ connectionString: database.url });
    await listener.connect();
    listener.on('notification', (n: Notification) => notices.push(JSON.parse(n.payload ?? 'null')));
    await listener.query('LISTEN cairn_storage_users');
  });

  afterAll(async () => {
    await listener.end();
    await database.drop();
  });

  beforeEach(() => {
    notices = [];
  });

  /** Notifications travel on their own connection: a round trip on it means every earlier one has arrived. */
  const received = async () => {
    await listener.query('SELECT 1');
    return notices;
  };
  const user = (clusterId: number, username: string) => ({
    cluster_id: clusterId,
    username,
    password_hash: 'x',
    generation: 1,
  });

  it('when users are inserted, updated and deleted, then each committed row is announced with its cluster and name', async () => {
    await database.db('storage_users').insert([user(clusterA, 'alice'), user(clusterB, 'bob')]);
    await database.db('storage_users').where({ username: 'alice' }).update({ enabled: false });
    await database.db('storage_users').where({ username: 'bob' }).delete();
    expect(await received()).toEqual([
      { cluster_id: clusterA, user: 'alice' },
      { cluster_id: clusterB, user: 'bob' },
      { cluster_id: clusterA, user: 'alice' },
      { cluster_id: clusterB, user: 'bob' },
    ]);
  });

  it('when a change is rolled back, then nothing is announced', async () => {
    await database.db
      .transaction(async (trx) => {
        await trx('storage_users').insert(user(clusterA, 'carol'));
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(await received()).toEqual([]);
  });

  it('when one statement changes more than 64 rows, then one notice per cluster says that all of its users may have changed', async () => {
    await database.db.raw(
      `INSERT INTO storage_users (cluster_id, username, password_hash, generation)
         SELECT CASE WHEN i % 2 = 0 THEN ?::int ELSE ?::int END, 'bulk-' || i, 'x', 1 FROM generate_series(1, 1000) i`,
      [clusterA, clusterB],
    );
    const got = (await received()) as Array<{ cluster_id: number }>;
    expect(got.sort((x, y) => x.cluster_id - y.cluster_id)).toEqual([
      { cluster_id: clusterA, all: true },
      { cluster_id: clusterB, all: true },
    ]);
  });
});
