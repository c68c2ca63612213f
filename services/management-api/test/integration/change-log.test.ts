import { LogCapture } from '@cairn/runtime';
import { DB_KINDS, createTestDatabase, type TestDatabase } from '../support/harness';
import { createLogger } from '../../src/deps';
import { heartbeat, runMaintenance } from '../../src/maintenance';

/**
 * The primary's side of what a gateway on a hot standby follows: the triggers' change log, its
 * retention in the maintenance pass, and the heartbeat (migration 20261127150000_change_log).
 */
describe.each(DB_KINDS)('the change log and the heartbeat on %s', (kind) => {
  let t: TestDatabase;
  beforeEach(async () => {
    t = await createTestDatabase(kind, { migrated: true });
  });
  afterEach(async () => {
    await t.drop();
  });

  const log = () => t.db('change_log').orderBy('seq').select('kind', 'cluster_id', 'key');

  it('when users are written one by one, in bulk, or truncated, then each change is logged in its own transaction, one row per cluster past 64 rows', async () => {
    const [{ id: cluster }] = (await t
      .db('clusters')
      .insert({
        name: 'logged',
        uuid: '6f1c3b1e-0000-4000-8000-000000000001',
        auth_url: 'http://a/auth',
        storage_url: 'http://s/v1',
      })
      .returning('id')) as [{ id: number }];
    const user = (username: string) => ({ cluster_id: cluster, username, password_hash: 'x' });
    await t.db('change_log').delete();
    await t.db('storage_users').insert(user('alice'));
    // A rolled-back change leaves no row.
    await t.db
      .transaction(async (trx) => {
        await trx('storage_users').where({ username: 'alice' }).update({ enabled: false });
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    await t.db('storage_users').where({ username: 'alice' }).update({ enabled: false });
    await t.db('storage_users').insert(Array.from({ length: 65 }, (_, i) => user(`bulk-${i}`)));
    await t.db('storage_users').where({ username: 'alice' }).delete();
    expect(await log()).toEqual([
      { kind: 'user', cluster_id: cluster, key: 'alice' },
      { kind: 'user', cluster_id: cluster, key: 'alice' },
      { kind: 'user', cluster_id: cluster, key: null },
      { kind: 'user', cluster_id: cluster, key: 'alice' },
    ]);
  });

  it('when the maintenance pass runs, then rows older than an hour are deleted and newer ones kept', async () => {
    await t.db('change_log').delete();
    await t.db('change_log').insert([
      { kind: 'user', cluster_id: 1, key: 'old', logged_at: new Date(Date.now() - 2 * 3_600_000) },
      { kind: 'user', cluster_id: 1, key: 'new', logged_at: new Date() },
    ]);
    const pass = await runMaintenance({ db: t.db, log: createLogger('silent') }, new Date());
    expect(pass.changeLog).toBe(1);
    expect((await log()).map((r) => r.key)).toEqual(['new']);
  });

  it('when the heartbeat beats, then its one row holds the time; when it cannot, then it says so once and not at every beat', async () => {
    await t.db('replication_heartbeat').update({ beat_at: new Date('2000-01-01T00:00:00Z') });
    const logs = new LogCapture();
    const beat = heartbeat({ db: t.db, log: createLogger('info', logs) });
    await beat();
    const { beat_at } = (await t.db('replication_heartbeat').first('beat_at')) as { beat_at: Date };
    expect(Math.abs(new Date(beat_at).getTime() - Date.now())).toBeLessThan(60_000);
    await t.db.raw('ALTER TABLE replication_heartbeat RENAME TO replication_heartbeat_gone');
    await beat();
    await beat();
    expect(logs.text.match(/could not write the heartbeat/g)).toHaveLength(1);
    await t.db.raw('ALTER TABLE replication_heartbeat_gone RENAME TO replication_heartbeat');
    await beat();
    expect(logs.text).toContain('heartbeat written again');
  });
});
