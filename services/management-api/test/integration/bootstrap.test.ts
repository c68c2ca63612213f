import { DB_KINDS, countRows, createTestDatabase } from '../support/harness';
import { bootstrap } from '../../src/bootstrap';
import { readConfig } from '../../src/config';

describe.each(DB_KINDS)('first-start bootstrap on %s', (kind) => {
  const urls = { defaultAuthUrl: 'http://127.0.0.1:5000/auth', defaultStorageUrl: 'http://127.0.0.1:8080/v1' };

  it('when started twice on an empty database, then one admin and one default cluster exist, and only the first start shows a key', async () => {
    // The schema, copied from the run's migrated template; no row in it (migrations.test.ts
    // tests the migrations themselves from an empty database).
    const { db, drop } = await createTestDatabase(kind, { migrated: true });
    try {
      const first = await bootstrap(db, { defaultCluster: 'east', ...urls });
      const second = await bootstrap(db, { defaultCluster: 'east', ...urls });
      expect(first.generatedAdmin?.name).toBe('admin');
      expect(first.createdCluster).toBe('east');
      expect(second).toEqual({});
      expect(await db('clusters').pluck('name')).toEqual(['east']);
      expect(await countRows(db, 'operators')).toBe(1);
    } finally {
      await drop();
    }
  });

  it('when CAIRN_CREATE_DEFAULT_CLUSTER=false, then the first start creates the admin but no cluster', async () => {
    const config = readConfig({ CAIRN_CREATE_DEFAULT_CLUSTER: 'false' });
    expect(config.createDefaultCluster).toBe(false);
    const { db, drop } = await createTestDatabase(kind, { migrated: true });
    try {
      const result = await bootstrap(db, config);
      expect(result.createdCluster).toBeUndefined();
      expect(await countRows(db, 'clusters')).toBe(0);
      expect(await countRows(db, 'operators')).toBe(1);
    } finally {
      await drop();
    }
  });
});
