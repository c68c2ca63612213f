import { databaseBreaches, tokenBreaches } from './support/checks';
import { expectOutageContract } from './support/assertions';
import { startSystem, type System } from './support/system';

/**
 * The gateway's Redis (token records, revocations, failed-login counters) restarts and goes away
 * for a while under load. The management API does not use Redis and must not notice.
 *
 * @slow: Redis restarted, stopped and frozen under load, a minute (jest.sequencer.js starts it first)
 */
describe('Redis outages under load', () => {
  let sys: System;
  beforeAll(async () => {
    sys = await startSystem();
  });
  afterAll(async () => {
    await sys?.close();
  });

  test('when Redis restarts, then every answer is a success or a clear 503 within 5 s (never 401), and the gateway recovers within 5 s', async () => {
    const run = await sys.underLoad('Redis restart', () => sys.redis.restart());
    expectOutageContract(run, []);
  });

  test('when Redis is stopped for 4 s and started again, then the gateway answers 503 (never 401) within 5 s, the management API is unaffected, and the gateway recovers within 5 s', async () => {
    const run = await sys.underLoad('Redis down for 4 s', async () => {
      await sys.redis.stop();
      await new Promise((r) => setTimeout(r, 4000));
      return sys.redis.start();
    });
    expectOutageContract(run, ['gateway']);
    // The management API has no Redis: not one of its requests may fail.
    expect(
      run.load.rec.outcomes.filter((o) => o.service === 'api' && !o.ok).map((o) => `${o.op} ${o.status} ${o.body}`),
    ).toEqual([]);
  });

  test('when Redis hangs for 6 s (SIGSTOP: connections open, no answers), then the gateway answers 503 within 5 s instead of waiting for it, and recovers within 5 s after it resumes', async () => {
    const run = await sys.underLoad('Redis hung for 6 s', async () => {
      sys.redis.pause();
      await new Promise((r) => setTimeout(r, 6000));
      return sys.redis.resume();
    });
    expectOutageContract(run, ['gateway']);
  });

  test('when the outages are over, then tokens issued before them still validate, revoked ones (acknowledged 204) stay revoked, and the database matches what was acknowledged', async () => {
    expect(sys.loads.length).toBe(3);
    for (const load of sys.loads) {
      expect(load.tokens.filter((t) => t.state === 'revoked' && t.how?.startsWith('gateway')).length).toBeGreaterThan(
        0,
      );
      expect(await tokenBreaches(load)).toEqual([]);
      expect(await databaseBreaches(sys.db, load)).toEqual([]);
    }
  });
});
