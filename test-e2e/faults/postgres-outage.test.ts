import { apiTotalCount, counterBreaches, databaseBreaches, tokenBreaches } from './support/checks';
import { expectOutageContract } from './support/assertions';
import { restartPostgres, startPostgres, stopPostgres } from './support/postgres-cluster';
import { startSystem, type System } from './support/system';

/**
 * Postgres restarts and goes away for a while under a steady load on both services (the
 * management API writes, the gateway reads users on every login and validation).
 *
 * @slow: Postgres restarted and stopped under load, most of a minute (jest.sequencer.js starts it first)
 */
describe('Postgres outages under load', () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem();
  });
  afterAll(async () => {
    await sys?.close();
  });

  test('when Postgres restarts (pg_ctlcluster restart), then every answer is a success or a clear 503 within 5 s, and both services recover within 5 s', async () => {
    const run = await sys.underLoad('Postgres restart', () => restartPostgres());
    expectOutageContract(run, []);
  });

  test('when Postgres is stopped for 4 s and started again, then every answer is a success or a clear 503 within 5 s (the gateway never says 401), and both services recover within 5 s', async () => {
    const run = await sys.underLoad('Postgres down for 4 s', async () => {
      await stopPostgres();
      await new Promise((r) => setTimeout(r, 4000));
      return startPostgres();
    });
    expectOutageContract(run, ['api', 'gateway']);
  });

  test('when the outages are over, then every acknowledged write is in the database, nothing refused was written, the user count matches the rows, and revoked tokens stay revoked', async () => {
    expect(sys.loads.length).toBe(2);
    for (const load of sys.loads) {
      expect(load.users.filter((u) => u.create.ok).length).toBeGreaterThan(0);
      // Not vacuous: some tokens were revoked through the management API (user disabled or deleted).
      expect(load.tokens.filter((t) => t.state === 'revoked' && t.how?.startsWith('user')).length).toBeGreaterThan(0);
      expect(await databaseBreaches(sys.db, load)).toEqual([]);
      expect(await tokenBreaches(load)).toEqual([]);
    }
    // Not vacuous either: during the 4 s stop some creates were refused (and must not exist).
    expect(sys.loads[1]!.users.filter((u) => u.create.status === 503).length).toBeGreaterThan(0);
    expect(await counterBreaches(sys.db)).toEqual([]);
    const { n } = (await sys.db('storage_users').where({ cluster_id: 1 }).count({ n: '*' }).first()) as { n: string };
    expect(await apiTotalCount(sys.api.url)).toBe(Number(n));
  });
});
