import { contractBreaches, failuresBetween, recovery, RECOVERY_MS } from './checks';
import type { System } from './system';

export type LoadRun = Awaited<ReturnType<System['underLoad']>>;

/**
 * The outage contract for one run: every answer a success or a clear 503 within 5 s; each
 * service answers successfully again within RECOVERY_MS of the dependency's return and only
 * successfully from then on. The services in `felt` must also have failed some requests during
 * the outage, so the run proves something.
 */
export function expectOutageContract(run: LoadRun, felt: Array<'api' | 'gateway'>): void {
  const { load, faultAt, readyAt, endAt } = run;
  expect(contractBreaches(load.rec.outcomes, faultAt, readyAt)).toEqual([]);
  for (const service of ['api', 'gateway'] as const) {
    if (felt.includes(service))
      expect({ service, failedDuringOutage: failuresBetween(load.rec, service, faultAt, readyAt) > 0 }).toEqual({
        service,
        failedDuringOutage: true,
      });
    const r = recovery(load.rec, service, readyAt, endAt);
    expect({ service, lateFailures: r.lateFailures }).toEqual({ service, lateFailures: [] });
    expect({ service, recovered: r.firstSuccessMs !== null && r.firstSuccessMs <= RECOVERY_MS }).toEqual({
      service,
      recovered: true,
    });
  }
}
