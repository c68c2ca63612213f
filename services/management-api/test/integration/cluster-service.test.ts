import type { ClusterCreateInput, Operator } from '@cairn/domain';
import { CairnError } from '@cairn/domain';
import * as clusters from '../../src/services/clusters';
import type { Acting } from '../../src/services/context';
import { countRows, createDatabaseWithClusters, type TestDatabaseWithClusters } from '../support/harness';

const operator = (role: Operator['role'], clusterIds: number[] = []): Operator => ({
  id: 7,
  name: `op-${role}`,
  role,
  clusterIds,
  createdAt: new Date(),
  updatedAt: new Date(),
});
const acting = (op: Operator): Acting => ({ operator: op, requestId: 'req-42' });
const input: ClusterCreateInput = {
  name: 'gamma',
  auth_url: 'http://gamma/auth',
  storage_url: 'http://gamma/v1',
  region: 'RegionOne',
};

describe('cluster service (PGlite)', () => {
  let t: TestDatabaseWithClusters;
  beforeAll(async () => {
    t = await createDatabaseWithClusters('pglite', ['alpha', 'beta']);
  });
  afterAll(() => t.drop());

  test('when a reader creates a cluster, then it is refused as the route refuses it, before its input is read', async () => {
    let read = false;
    const refusal = await clusters
      .create(t.db, acting(operator('reader')), async () => {
        read = true;
        return input;
      })
      .catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(CairnError);
    expect(refusal).toMatchObject({
      code: 'FORBIDDEN',
      message: "Operator 'op-reader' has the reader role and may only read.",
    });
    expect(read).toBe(false);
    expect(await countRows(t.db, 'clusters')).toBe(2);
    expect(await countRows(t.db, 'audit_log')).toBe(0);
  });

  test('when an operator limited to one cluster asks for another, then that cluster is not found', async () => {
    const limited = acting(operator('admin', [t.clusters[0]!]));
    await expect(clusters.show(t.db, limited, String(t.clusters[1]))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await expect(clusters.show(t.db, limited, String(t.clusters[0]))).resolves.toMatchObject({ name: 'alpha' });
    await expect(clusters.remove(t.db, limited, String(t.clusters[0]))).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  test('when an admin creates a cluster, then the row and its audit entry commit together with the request id', async () => {
    const created = await clusters.create(t.db, acting(operator('admin')), async () => input);
    const entry = await t
      .db('audit_log')
      .where({ target_type: 'clusters', target_id: String(created.id) })
      .first();
    expect(entry).toMatchObject({
      action: 'create',
      operator_name: 'op-admin',
      operator_id: 7,
      request_id: 'req-42',
      target_name: 'gamma',
    });
  });

  test('when a name is taken, then the domain error says so and nothing is written', async () => {
    const audits = await countRows(t.db, 'audit_log');
    await expect(clusters.create(t.db, acting(operator('admin')), async () => input)).rejects.toMatchObject({
      code: 'ALREADY_EXISTS',
      message: "A cluster named 'gamma' already exists.",
    });
    expect(await countRows(t.db, 'audit_log')).toBe(audits);
  });
});
