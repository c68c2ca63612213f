import { Client, type Notification } from 'pg';
import { createDatabaseWithClusters, type TestDatabaseWithClusters } from '../support/harness';

/**
 * Gateways follow their cluster's row (name, URLs, region, deletion) when Postgres announces a
 * change on `cairn_clusters`; these tests hold the trigger to that contract, whoever writes.
 */
describe('cluster change notices on postgres', () => {
  let database: TestDatabaseWithClusters;
  let listener: Client;
  let notices: unknown[];

  beforeAll(async () => {
    database = await createDatabaseWithClusters('postgres', ['a']);
    listener = new Client({ connectionString: database.url });
    await listener.connect();
    listener.on('notification', (n: Notification) => notices.push([n.channel, JSON.parse(n.payload ?? 'null')]));
    await listener.query('LISTEN cairn_clusters');
  });

  afterAll(async () => {
    await listener.end();
    await database.drop();
  });

  beforeEach(() => {
    notices = [];
  });

  const received = async () => {
    await listener.query('SELECT 1');
    return notices;
  };

  it('when clusters are inserted, updated and deleted, then each committed row is announced by its id', async () => {
    const [a] = database.clusters as [number];
    const [made] = (await database
      .db('clusters')
      .insert({
        name: 'b',
        uuid: '0b6a1c2e-3f4d-4e5f-8a9b-0c1d2e3f4a5b',
        auth_url: 'http://b/auth',
        storage_url: 'http://b/v1',
      })
      .returning('id')) as Array<{ id: number }>;
    await database.db('clusters').where({ id: a }).update({ storage_url: 'http://a2/v1' });
    await database.db('clusters').where({ id: made!.id }).delete();
    expect(await received()).toEqual([
      ['cairn_clusters', { id: made!.id }],
      ['cairn_clusters', { id: a }],
      ['cairn_clusters', { id: made!.id }],
    ]);
  });

  it('when a change is rolled back, then nothing is announced', async () => {
    const [a] = database.clusters as [number];
    await database.db
      .transaction(async (trx) => {
        await trx('clusters').where({ id: a }).update({ region: 'Elsewhere' });
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(await received()).toEqual([]);
  });
});
