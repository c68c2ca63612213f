import fc from 'fast-check';
import {
  describeWhen,
  formatDuration,
  projectChange,
  thresholdBeforeAfter,
  type WhatIfDevice,
  type WhatIfOptions,
} from '../../src/lib/what-if';

const TB = 1e12;
const DAY = 86_400_000;
const OPTS: WhatIfOptions = { partPower: 10, replicas: 3, stepPct: 5, bytesPerSecondPerNode: 100 * 2 ** 20 };

const device = (i: number, weight: number, used: number): WhatIfDevice => ({
  key: `10.0.0.${i}:6200/sdb`,
  node: `10.0.0.${i}:6200`,
  device: 'sdb',
  weight,
  used,
});

/** Ring sets of 1–40 devices, 1–20 TB each, 0–100 % used. */
const ringSet = fc
  .array(fc.tuple(fc.integer({ min: 1, max: 20_000 }), fc.double({ min: 0, max: 1, noNaN: true })), {
    minLength: 1,
    maxLength: 40,
  })
  .map((xs) => xs.map(([gb, fill], i) => device(i, gb * 1e9, Math.round(gb * 1e9 * fill))));

/** Equal up to float rounding at the scale of the largest figure involved (a sum rounds at its biggest term). */
const close = (a: number, b: number, scale = 0) =>
  Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b), scale);

describe('what if devices are added to a ring set or one is drained', () => {
  it('when 4 × 16 TB are added to 4 × 8 TB half full, then a third of the weight and of the bytes moves', () => {
    const devices = [1, 2, 3, 4].map((i) => device(i, 8 * TB, 4 * TB));
    const w = projectChange(devices, { kind: 'add', count: 4, sizeBytes: 16 * TB, nodes: 2 }, OPTS);
    expect(w.rawBefore).toBe(32 * TB);
    expect(w.rawAfter).toBe(96 * TB);
    expect(w.shareMoved).toBeCloseTo(2 / 3, 12);
    expect(w.bytesToMove).toBeCloseTo((16 * TB * 2) / 3, 0);
    // 2/3 × 1024 parts × 3 replicas = 2048 partition replicas; 5 % of 3072 is 153.6 per step.
    expect(w.partsToMove).toBe(2048);
    expect(w.steps).toBe(14);
    expect(w.nodesInParallel).toBe(2);
    expect(w.seconds).toBeCloseTo(w.bytesToMove / (2 * 100 * 2 ** 20), 6);
    const existing = w.devices.filter((d) => !d.isNew);
    expect(existing.map((d) => [d.pct, d.pctAfter!.toFixed(4)])).toEqual(Array(4).fill([50, (50 / 3).toFixed(4)]));
    expect(w.devices.filter((d) => d.isNew).map((d) => d.pctAfter!.toFixed(4))).toEqual(
      Array(4).fill((50 / 3).toFixed(4)),
    );
  });

  it('when a device is drained, then exactly its bytes move, to the others by weight, and it ends empty', () => {
    const devices = [device(1, 4 * TB, 3 * TB), device(2, 4 * TB, 1 * TB), device(3, 8 * TB, 2 * TB)];
    const w = projectChange(devices, { kind: 'drain', key: devices[0]!.key }, OPTS);
    expect(w.bytesToMove).toBe(3 * TB);
    expect(w.shareMoved).toBeCloseTo(0.25, 12);
    expect(w.partsToMove).toBe(768);
    expect(w.steps).toBe(5);
    expect(w.nodesInParallel).toBe(1);
    expect(w.devices.map((d) => [d.usedAfter, d.pctAfter])).toEqual([
      [0, null],
      [2 * TB, 50],
      [4 * TB, 50],
    ]);
  });

  it('when a device that is not in the set is drained, then it says so', () => {
    expect(() => projectChange([device(1, TB, 0)], { kind: 'drain', key: 'nope' }, OPTS)).toThrow(/No device nope/);
    expect(() => projectChange([device(1, TB, 0)], { kind: 'drain', key: device(1, TB, 0).key }, OPTS)).toThrow(
      /no other device/,
    );
  });

  it('when any weight is added, then no existing device is projected fuller than today', () => {
    fc.assert(
      fc.property(
        ringSet,
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 30_000 }),
        (devices, count, gb) => {
          const w = projectChange(devices, { kind: 'add', count, sizeBytes: gb * 1e9, nodes: 1 }, OPTS);
          for (const d of w.devices.filter((x) => !x.isNew)) {
            if (d.pct === null) continue;
            expect(d.pctAfter! <= d.pct + 1e-9).toBe(true);
          }
        },
      ),
    );
  });

  it('when any device is drained, then exactly its bytes move', () => {
    fc.assert(
      fc.property(
        ringSet
          .filter((d) => d.length > 1)
          .chain((devices) => fc.tuple(fc.constant(devices), fc.integer({ min: 0, max: devices.length - 1 }))),
        ([devices, i]) => {
          const w = projectChange(devices, { kind: 'drain', key: devices[i]!.key }, OPTS);
          expect(w.bytesToMove).toBe(devices[i]!.used);
          expect(close(w.shareMoved, devices[i]!.weight / w.rawBefore)).toBe(true);
        },
      ),
    );
  });

  it('when anything changes, then the used bytes are conserved and the weights add up', () => {
    fc.assert(
      fc.property(
        ringSet.filter((d) => d.length > 1),
        fc.oneof(
          fc.record({
            kind: fc.constant('add' as const),
            count: fc.integer({ min: 1, max: 16 }),
            sizeBytes: fc.integer({ min: 1, max: 30_000 }).map((gb) => gb * 1e9),
            nodes: fc.integer({ min: 1, max: 4 }),
          }),
          fc.nat().map((n) => ({ kind: 'drain' as const, n })),
        ),
        (devices, c) => {
          const change = c.kind === 'add' ? c : { kind: 'drain' as const, key: devices[c.n % devices.length]!.key };
          const w = projectChange(devices, change, OPTS);
          const usedAfter = w.devices.reduce((a, d) => a + d.usedAfter, 0);
          expect(close(usedAfter, w.usedTotal)).toBe(true);
          // What the gaining devices gain is what the others lose. A gain is a difference of two
          // device totals, so it is exact only to the rounding of the ring set's used bytes.
          const moved = w.devices.reduce((a, d) => a + Math.max(0, d.usedAfter - d.used), 0);
          expect(close(moved, w.bytesToMove, w.usedTotal)).toBe(true);
          expect(w.partsToMove).toBeLessThanOrEqual(w.partReplicas);
          expect(w.steps).toBeLessThanOrEqual(100 / OPTS.stepPct);
        },
      ),
      // Draining 1 byte onto a 16 MiB device: its gain rounds at the 16 MiB scale.
      { examples: [[[device(0, 19e9, 1), device(1, 1e9, 2 ** 24), device(2, 1964e9, 0)], { kind: 'drain', n: 0 }]] },
    );
  });
});

describe('when the ring set fills, before and after', () => {
  // 100 TB raw, 50 TB used, growing 1 TB a day.
  const samples = [0, 1, 2, 3].map((d) => ({ t: d * DAY, usedBytes: (47 + d) * TB, rawBytes: 100 * TB }));

  it('when 50 TB are added, then the same growth reaches full 50 days later', () => {
    const { before, after } = thresholdBeforeAfter(samples, 50 * TB, 100);
    expect(before.kind === 'at' && before.t / DAY).toBeCloseTo(53, 6);
    expect(after.kind === 'at' && after.t / DAY).toBeCloseTo(103, 6);
    expect(describeWhen(after)).toBe('around 1970-04-14');
  });

  it('when a drain takes the set past the threshold, then after reads already', () => {
    const { after } = thresholdBeforeAfter(samples, -40 * TB, 80);
    expect(describeWhen(after)).toBe('already 83.3 %');
  });
});

describe('durations', () => {
  it('when a duration is shown, then in minutes, hours and minutes, or days', () => {
    expect(formatDuration(20)).toBe('under a minute');
    expect(formatDuration(45 * 60)).toBe('45 min');
    expect(formatDuration(7.5 * 3600)).toBe('7 h 30 min');
    expect(formatDuration(3 * 86_400 + 5 * 3600)).toBe('3.2 days');
    expect(formatDuration(Infinity)).toBe('—');
  });
});
