import { setTimeout as delay } from 'node:timers/promises';
import { parseInterval, runRounds } from '../src/collector-loop';
import type { StopSignal } from '../src/stop-signal';

/** What stopOnSignals gives, with `stop()` in place of a SIGTERM. */
function fakeStop(): StopSignal & { stop(): void } {
  const controller = new AbortController();
  const { signal } = controller;
  return {
    signal,
    wait: (ms) => delay(ms, undefined, { signal }).catch(() => undefined),
    stop: () => controller.abort(),
  };
}

/** The --interval loop both recon collectors (capacity, health) run. */
describe('runRounds', () => {
  let stderr: jest.SpyInstance;
  beforeEach(() => {
    // Only the loop's own lines; jest's reporter writes to stderr too, between the tests.
    stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    process.exitCode = undefined;
  });
  afterEach(() => {
    stderr.mockRestore();
    process.exitCode = undefined;
  });

  it('when the interval is 0, then one round runs and its error is the command’s', async () => {
    let rounds = 0;
    await expect(
      runRounds(0, async (signal) => {
        rounds++;
        expect(signal).toBeUndefined();
        throw new Error('API down');
      }),
    ).rejects.toThrow('API down');
    expect(rounds).toBe(1);
  });

  it('when a scheduled round fails, then the next still runs; a stop then ends the running round and exits 0', async () => {
    const signals: AbortSignal[] = [];
    const stop = fakeStop();
    const started = Date.now();
    await runRounds(
      1,
      async (signal) => {
        signals.push(signal!);
        if (signals.length === 1) throw new Error('API down');
        // The second round waits for its stop, as a round reading hung nodes would.
        setTimeout(() => stop.stop(), 50);
        await new Promise((resolve) => signal!.addEventListener('abort', resolve));
      },
      () => stop,
    );
    // One interval between the rounds, none after the stop.
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(signals).toHaveLength(2);
    expect(signals[1]!.aborted).toBe(true);
    expect(process.exitCode).toBe(0);
    const written = stderr.mock.calls.map((c) => String(c[0]));
    expect(written).toEqual(['error: API down\n', 'stopped on request\n']);
  });
});

describe('parseInterval', () => {
  it.each(['-1', '1.5', 'five'])('when --interval is %p, then it is refused with a sentence', (flag) => {
    expect(() => parseInterval(flag)).toThrow('--interval must be a whole number of seconds.');
  });
  it('when --interval is absent, then it is one round', () => {
    expect(parseInterval(undefined)).toBe(0);
    expect(parseInterval('300')).toBe(300);
  });
});
