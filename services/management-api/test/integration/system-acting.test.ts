import * as clusters from '../../src/services/clusters';
import { SYSTEM_ACTING } from '../../src/services/context';
import * as operators from '../../src/services/operators';
import { countRows, createDatabaseWithClusters, type TestDatabaseWithClusters } from '../support/harness';

/** Commands run on the host (bootstrap, migrate, `cairn`) go through the same services as requests. */
describe('services called by host commands (PGlite)', () => {
  let t: TestDatabaseWithClusters;
  beforeAll(async () => {
    t = await createDatabaseWithClusters('pglite', ['alpha', 'beta']);
  });
  afterAll(() => t.drop());

  const declared = {
    name: 'gamma',
    auth_url: 'http://gamma/auth',
    storage_url: 'http://gamma/v1',
    region: 'RegionOne',
  };
  const migrateEntries = (name: string) =>
    t.db('audit_log').where({ operator_name: 'migrate', target_name: name }).orderBy('id');

  test('when the migrate job declares a cluster, moves it, then declares it unchanged, then the trail holds one create and one update by migrate, with no operator id', async () => {
    const created = await clusters.ensure(t.db, SYSTEM_ACTING.migrate, declared);
    const moved = await clusters.ensure(t.db, SYSTEM_ACTING.migrate, { ...declared, storage_url: 'http://gamma-2/v1' });
    const same = await clusters.ensure(t.db, SYSTEM_ACTING.migrate, { ...declared, storage_url: 'http://gamma-2/v1' });
    expect([created.outcome, moved.outcome, same.outcome]).toEqual(['created', 'updated', 'unchanged']);
    expect(moved.cluster.id).toBe(created.cluster.id);
    const entries = await migrateEntries('gamma');
    expect(entries.map((e: { action: string }) => e.action)).toEqual(['create', 'update']);
    expect(entries[1]).toMatchObject({
      operator_id: null,
      request_id: null,
      target_type: 'clusters',
      target_id: String(created.cluster.id),
    });
    expect(entries[1].after).toMatchObject({ storage_url: 'http://gamma-2/v1' });
  });

  test('when bootstrap asks for a default cluster while clusters exist, then none is created and nothing is audited', async () => {
    const audits = await countRows(t.db, 'audit_log');
    expect(await clusters.createIfNone(t.db, SYSTEM_ACTING.bootstrap, { ...declared, name: 'delta' })).toBeNull();
    expect(await countRows(t.db, 'audit_log')).toBe(audits);
  });

  test('when the operator create command names clusters by name and by id, then the operator gets them and the trail names cli', async () => {
    const { operator } = await operators.createWithClusterNames(t.db, SYSTEM_ACTING.cli, {
      name: 'by-name',
      role: 'reader',
      clusters: ['alpha', String(t.clusters[1])],
    });
    expect(operator.clusterIds.sort()).toEqual([...t.clusters].sort());
    const entry = await t.db('audit_log').where({ target_type: 'operators', target_name: 'by-name' }).first();
    expect(entry).toMatchObject({ operator_name: 'cli', operator_id: null, action: 'create' });
  });

  test('when the operator create command names a cluster that does not exist, then it is refused with a sentence and nothing is written', async () => {
    const operatorsBefore = await countRows(t.db, 'operators');
    await expect(
      operators.createWithClusterNames(t.db, SYSTEM_ACTING.cli, {
        name: 'nowhere',
        role: 'reader',
        clusters: ['north'],
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: "No cluster named 'north'.",
    });
    await expect(
      operators.createWithClusterNames(t.db, SYSTEM_ACTING.cli, {
        name: 'nowhere',
        role: 'reader',
        clusters: ['987654'],
      }),
    ).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: 'No cluster with id 987654.',
    });
    expect(await countRows(t.db, 'operators')).toBe(operatorsBefore);
  });

  test('when bootstrap asks for the first admin while one exists, then none is created', async () => {
    await operators.ensureFirstAdmin(t.db, SYSTEM_ACTING.bootstrap, { name: 'first' });
    expect(await operators.ensureFirstAdmin(t.db, SYSTEM_ACTING.bootstrap, { name: 'second' })).toBeNull();
    expect(await t.db('operators').where({ name: 'second' }).first()).toBeUndefined();
  });
});
