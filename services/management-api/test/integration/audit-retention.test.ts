/**
 * @slow: maintenance rounds over a filled audit log, twice (jest.sequencer.js starts it first)
 */
import { LogCapture } from '@cairn/runtime';
import { STORAGE_USER_ACTOR_PREFIX } from '@cairn/contract';
import { DB_KINDS, createTestDatabase, type TestDatabase } from '../support/harness';
import { createLogger } from '../../src/deps';
import { pruneAudit, STORAGE_USER_ENTRY } from '../../src/repositories/audit-retention';
import { runMaintenance } from '../../src/maintenance';

const NOW = new Date('2026-11-27T12:00:00Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000);

describe.each(DB_KINDS)('audit trail retention on %s', (kind) => {
  let t: TestDatabase;
  beforeEach(async () => {
    t = await createTestDatabase(kind, { migrated: true });
  });
  afterEach(async () => {
    await t.drop();
  });

  /**
   * An entry as each kind of actor writes it: an operator (with its id), a host command, a storage user through the
   * gateway.
   */
  const entry = (who: 'operator' | 'host' | 'storage user', days: number, name = `${who}-${days}`) => ({
    occurred_at: daysAgo(days),
    operator_id: who === 'operator' ? 1 : null,
    operator_name: who === 'operator' ? 'root' : who === 'host' ? 'cli' : `${STORAGE_USER_ACTOR_PREFIX}alice`,
    action: 'create',
    target_type: who === 'storage user' ? 's3_credentials' : 'users',
    target_id: '1',
    target_name: name,
    target_uri: '/api/v1/users/1/',
  });
  const remaining = async () =>
    ((await t.db('audit_log').orderBy('target_name').pluck('target_name')) as string[]).sort();

  it("when entries are older than their kind's retention, then storage users' go after their days and operators' and host commands' only after theirs", async () => {
    await t
      .db('audit_log')
      .insert([
        entry('storage user', 100),
        entry('storage user', 80),
        entry('operator', 100),
        entry('operator', 800),
        entry('host', 100),
        entry('host', 800),
      ]);
    const report = await pruneAudit(t.db, { operatorDays: 730, storageUserDays: 90 }, NOW);
    expect(report).toEqual({ storageUserEntries: 1, operatorEntries: 2 });
    expect(await remaining()).toEqual(['host-100', 'operator-100', 'storage user-80']);

    // 0 keeps a kind for ever.
    await t.db('audit_log').insert([entry('storage user', 5000), entry('operator', 5000)]);
    expect(await pruneAudit(t.db, { operatorDays: 0, storageUserDays: 0 }, NOW)).toEqual({
      storageUserEntries: 0,
      operatorEntries: 0,
    });
    expect(await remaining()).toHaveLength(5);
  });

  it('when there are more old entries than a batch, then they go in batches, oldest first, and a call stops after its batches', async () => {
    await t.db('audit_log').insert(Array.from({ length: 7 }, (_, i) => entry('storage user', 100 + i, `old-${i}`)));
    await t.db('audit_log').insert(entry('storage user', 1, 'new'));
    expect(
      await pruneAudit(t.db, { operatorDays: 730, storageUserDays: 90 }, NOW, { batchSize: 2, maxBatches: 2 }),
    ).toEqual({ storageUserEntries: 4, operatorEntries: 0 });
    // The four oldest went first.
    expect(await remaining()).toEqual(['new', 'old-0', 'old-1', 'old-2']);
    expect(await pruneAudit(t.db, { operatorDays: 730, storageUserDays: 90 }, NOW, { batchSize: 2 })).toEqual({
      storageUserEntries: 3,
      operatorEntries: 0,
    });
    expect(await remaining()).toEqual(['new']);
  });

  it("when storage users' old entries are looked for, then Postgres can use their own index rather than read every entry", async () => {
    const plan = await t.db.transaction(async (trx) => {
      await trx.raw('SET LOCAL enable_seqscan = off');
      const explained = (await trx.raw(
        `EXPLAIN SELECT id FROM audit_log WHERE ${STORAGE_USER_ENTRY} AND occurred_at < ? ORDER BY occurred_at LIMIT 5000`,
        [NOW],
      )) as {
        rows: Array<{ 'QUERY PLAN': string }>;
      };
      return explained.rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('audit_log_storage_user_idx');
  });

  it('when the audit prune fails (Postgres refuses the DELETE), then the failure is logged and the utilization maintenance of the same pass still runs', async () => {
    await t.db('audit_log').insert(entry('storage user', 100));
    await t.db.raw(
      `CREATE FUNCTION refuse_delete() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit entries may not be deleted here'; END $$`,
    );
    await t.db.raw(
      'CREATE TRIGGER refuse_delete BEFORE DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_delete()',
    );
    const logs = new LogCapture();
    const pass = await runMaintenance(
      { db: t.db, log: createLogger('info', logs), auditRetention: { operatorDays: 730, storageUserDays: 90 } },
      NOW,
    );
    expect(pass.audit).toBeUndefined();
    expect(pass.utilization?.created).toBeGreaterThan(0);
    expect(logs.text).toContain('audit retention failed; retried at the next run');
    expect(await remaining()).toEqual(['storage user-100']);
  });
});
