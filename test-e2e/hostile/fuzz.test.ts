import { ADMIN_AUTH, ADMIN_KEY, startStack, type Stack } from '../support/stack';
import { apiRequest, gatewayRequest, type HostileContext } from './arbitraries';
import { LOGIN_PASSWORD, prepareContext, startTrap, type Trap } from './context';
import { formatFailures, runRequests, runSeed, sampleStream, Targets } from './runner';
import { changedTables, snapshot } from './snapshot';

/**
 * Random hostile requests against every endpoint of both services, on real Postgres and, with
 * HOSTILE_PGLITE=1, (fewer) on the embedded PGlite. Bounded: a few hundred requests per service; `pnpm bench:hostile`
 * sends
 * a million.
 */
const RUNS = Number(process.env.HOSTILE_RUNS ?? 300);

// PGlite takes about 20 s to start on a busy 2-core machine: HOSTILE_PGLITE=1 adds its run.
const DATABASES: Array<readonly ['postgres' | 'pglite', number]> = [
  ['postgres', RUNS],
  ...(process.env.HOSTILE_PGLITE ? [['pglite', Math.ceil(RUNS / 3)] as const] : []),
];

for (const [database, runs] of DATABASES)
  describe(`hostile input on ${database}`, () => {
    let stack: Stack;
    let trap: Trap;
    let ctx: HostileContext;
    let targets: Targets;
    let secrets: string[];
    beforeAll(async () => {
      // Two failures per name, then 429: the malformed logins cost few scrypt runs, and the limit is exercised too.
      stack = await startStack({ database, gateway: { failureLimit: 2 } });
      trap = await startTrap();
      ctx = await prepareContext(stack.apiUrl, stack.gatewayUrl, ADMIN_AUTH, trap.url);
      targets = new Targets(stack.apiUrl, stack.gatewayUrl, 4);
      secrets = [ADMIN_KEY, ctx.readerAuth.split(':')[1]!, LOGIN_PASSWORD];
    });
    afterAll(async () => {
      targets?.close();
      await trap?.close();
      await stack?.close();
    });

    for (const [service, arbitrary] of [
      ['management API', apiRequest],
      ['auth gateway', gatewayRequest],
    ] as const) {
      it(`when random hostile requests hit every ${service} endpoint, then none is answered 5xx, every 4xx says why, no write is accepted and the database is unchanged`, async () => {
        const seed = runSeed();
        const before = await snapshot(stack.db);
        const result = await runRequests(sampleStream(arbitrary(ctx), seed, runs), targets, {
          concurrency: 4,
          secrets,
        });
        if (result.failureCount) throw new Error(formatFailures(result, seed));
        expect(result.tally.byClass['5xx']).toBe(0);
        expect(changedTables(before, await snapshot(stack.db))).toEqual([]);
        expect(trap.connections).toEqual([]);
        for (const url of [stack.apiUrl, stack.gatewayUrl]) expect((await fetch(`${url}/healthz`)).status).toBe(200);
      });
    }
  });
