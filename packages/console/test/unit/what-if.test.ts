import fc from 'fast-check';
import {
  crowdedZones,
  describeWhen,
  formatDuration,
  measuredRate,
  passesOf,
  projectChange,
  projectionRing,
  replicationSeconds,
  ringsOfSet,
  thresholdBeforeAfter,
  zoneFill,
  zoneLabel,
  zonesOfRings,
  type ReplicationPass,
  type WhatIfDevice,
  type WhatIfOptions,
  type Zone,
} from '../../src/lib/what-if';

const TB = 1e12;
const DAY = 86_400_000;
const OPTS: WhatIfOptions = {
  partPower: 10,
  replicas: 3,
  stepPct: 5,
  rate: { kind: 'assumed', bytesPerSecondPerNode: 100 * 2 ** 20 },
};

const device = (i: number, weight: number, used: number, zone: Zone | null = null): WhatIfDevice => ({
  key: `10.0.0.${i}:6200/sdb`,
  node: `10.0.0.${i}:6200`,
  device: 'sdb',
  weight,
  used,
  zone,
});
const z = (zone: number, region = 1): Zone => ({ region, zone });

/** Ring sets of 1–40 devices, 1–20 TB each, 0–100 % used. */
const ringSet = fc
  .array(fc.tuple(fc.integer({ min: 1, max: 20_000 }), fc.double({ min: 0, max: 1, noNaN: true })), {
    minLength: 1,
    maxLength: 40,
  })
  .map((xs) => xs.map(([gb, fill], i) => device(i, gb * 1e9, Math.round(gb * 1e9 * fill))));

/**
 * Equal up to float rounding at the scale of the largest figure involved (a sum's rounding follows
 * its biggest term).
 */
const close = (a: number, b: number, scale = 0) =>
  Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b), scale);

describe('what if devices are added to a ring set or one is drained', () => {
  it('when 4 × 16 TB are added to 4 × 8 TB half full, then a third of the weight and of the bytes moves', () => {
    const devices = [1, 2, 3, 4].map((i) => device(i, 8 * TB, 4 * TB));
    const w = projectChange(devices, { kind: 'add', count: 4, sizeBytes: 16 * TB, nodes: 2, zone: null }, OPTS);
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
          const w = projectChange(devices, { kind: 'add', count, sizeBytes: gb * 1e9, nodes: 1, zone: z(1) }, OPTS);
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
            zone: fc.option(fc.integer({ min: 1, max: 5 }).map((n) => z(n))),
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

describe('what if devices are added to one zone', () => {
  // Three zones of two 8 TB devices each, half full; zone 3's devices fuller.
  const devices = [
    device(1, 8 * TB, 4 * TB, z(1)),
    device(2, 8 * TB, 4 * TB, z(1)),
    device(3, 8 * TB, 4 * TB, z(2)),
    device(4, 8 * TB, 4 * TB, z(2)),
    device(5, 8 * TB, 6 * TB, z(3)),
    device(6, 8 * TB, 6 * TB, z(3)),
  ];

  it('when 2 × 8 TB go to zone r1z3, then every existing device empties by the same factor, the new ones are in r1z3, and the zone sums add up', () => {
    const w = projectChange(devices, { kind: 'add', count: 2, sizeBytes: 8 * TB, nodes: 1, zone: z(3) }, OPTS);
    // 48 TB → 64 TB: each existing device keeps 3/4 of its bytes.
    for (const d of w.devices.filter((x) => !x.isNew)) expect(d.usedAfter).toBeCloseTo(d.used * 0.75, 0);
    expect(w.devices.filter((d) => d.isNew).map((d) => zoneLabel(d.zone))).toEqual(['r1z3', 'r1z3']);
    const zones = zoneFill(w, 3);
    expect(zones.map((x) => [zoneLabel(x.zone), x.devices, x.newDevices])).toEqual([
      ['r1z1', 2, 0],
      ['r1z2', 2, 0],
      ['r1z3', 4, 2],
    ]);
    // r1z3 held 12 TB; it keeps 9 TB and receives the 7 TB moved (28 TB × 1/4): 16 TB of 32 TB.
    expect(zones[2]!.usedAfter).toBeCloseTo(16 * TB, 0);
    expect(zones[2]!.pctAfter).toBeCloseTo(50, 9);
    expect(zones[0]!.pctAfter).toBeCloseTo(37.5, 9);
    // Its weight asks for 3 × 32 / 64 = 1.5 replicas of each partition: two in one zone for some.
    expect(zones[2]!.replicasWanted).toBeCloseTo(1, 12);
    expect(zones[2]!.replicasWantedAfter).toBeCloseTo(1.5, 12);
    expect(crowdedZones(zones, 3).map((x) => zoneLabel(x.zone))).toEqual(['r1z3']);
    // With fewer zones than replicas two replicas share a zone anyway: nothing to say.
    expect(crowdedZones(zones.slice(1), 3)).toEqual([]);
  });

  it('when a device of a zone is drained, then the zone sums still add up and the drained device counts for nothing after', () => {
    const w = projectChange(devices, { kind: 'drain', key: devices[4]!.key }, OPTS);
    const zones = zoneFill(w, 3);
    expect(zones[2]!.weightAfter).toBe(8 * TB);
    expect(zones.reduce((a, x) => a + x.usedAfter, 0)).toBeCloseTo(w.usedTotal, 0);
  });

  it('when any change is made, then the zones partition the devices, their bytes and the replicas', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.integer({ min: 1, max: 20_000 }),
            fc.double({ min: 0, max: 1, noNaN: true }),
            fc.option(fc.integer({ min: 1, max: 4 })),
          ),
          { minLength: 1, maxLength: 30 },
        ),
        fc.integer({ min: 1, max: 8 }),
        fc.option(fc.integer({ min: 1, max: 5 })),
        (spec, count, zone) => {
          const ds = spec.map(([gb, fill, zn], i) =>
            device(i, gb * 1e9, Math.round(gb * 1e9 * fill), zn === null ? null : z(zn)),
          );
          const w = projectChange(
            ds,
            { kind: 'add', count, sizeBytes: 4e12, nodes: 1, zone: zone === null ? null : z(zone) },
            OPTS,
          );
          const zones = zoneFill(w, 3);
          expect(zones.reduce((a, x) => a + x.devices, 0)).toBe(w.devices.length);
          expect(
            close(
              zones.reduce((a, x) => a + x.usedAfter, 0),
              w.usedTotal,
            ),
          ).toBe(true);
          expect(
            close(
              zones.reduce((a, x) => a + x.replicasWantedAfter, 0),
              3,
            ),
          ).toBe(true);
          expect(new Set(zones.map((x) => zoneLabel(x.zone))).size).toBe(zones.length);
        },
      ),
    );
  });
});

describe("the zones of the cluster's stored rings", () => {
  const dev = (ip: string, device: string, zone: number, region = 1) => ({ ip, port: 6200, device, zone, region });

  it('when object rings list devices, then each device has the zone of the first current object ring that lists it', () => {
    const zones = zonesOfRings([
      { ring: 'object-1', current: true, devices: [dev('10.0.0.1', 'sdb', 9), dev('10.0.0.2', 'sdb', 2, 2)] },
      { ring: 'object', current: true, devices: [dev('10.0.0.1', 'sdb', 1)] },
      { ring: 'object', current: false, devices: null },
      { ring: 'container', current: true, devices: [dev('10.0.0.3', 'sdb', 3)] },
      { ring: 'object-10', current: true, devices: [dev('10.0.0.4', 'sdc', 4)] },
    ]);
    expect(Object.fromEntries([...zones].map(([k, z]) => [k, zoneLabel(z)]))).toEqual({
      '10.0.0.1:6200/sdb': 'r1z1',
      '10.0.0.2:6200/sdb': 'r2z2',
      '10.0.0.4:6200/sdc': 'r1z4',
    });
    expect(zoneLabel(null)).toBe('zone unknown');
  });
});

describe("the part power and replicas of the cluster's stored rings", () => {
  const ring = (name: string, partPower: number, replicas: number, ips: string[], current = true) => ({
    ring: name,
    version: 4,
    current,
    part_power: partPower,
    replicas,
    devices: current ? ips.map((ip) => ({ ip, port: 6200, device: 'sdb' })) : null,
  });
  const rings = [
    ring('object-1', 8, 2, ['10.0.0.2']),
    ring('object', 10, 3, ['10.0.0.1', '10.0.0.2']),
    ring('object', 12, 3, [], false),
    ring('container', 14, 3, ['10.0.0.1']),
    ring('object-2', 16, 3, ['10.0.0.9']),
  ];

  it("when current object rings list a ring set's devices, then those rings, in policy order, and the projection takes the one with the most partition replicas", () => {
    const of = ringsOfSet(rings, ['10.0.0.2:6200/sdb', '10.0.0.3:6200/sdb']);
    expect(of).toEqual([
      { ring: 'object', version: 4, partPower: 10, replicas: 3 },
      { ring: 'object-1', version: 4, partPower: 8, replicas: 2 },
    ]);
    expect(projectionRing(of)?.ring).toBe('object');
    expect(projectionRing([...of].reverse())?.ring).toBe('object');
    expect(projectionRing(ringsOfSet(rings, ['10.0.0.9:6200/sdb']))).toEqual({
      ring: 'object-2',
      version: 4,
      partPower: 16,
      replicas: 3,
    });
  });

  it('when no current object ring lists the devices, then there is no ring and the typed fields stand in', () => {
    expect(ringsOfSet(rings, ['10.0.0.7:6200/sdb'])).toEqual([]);
    expect(projectionRing([])).toBeNull();
  });
});

describe('the replication rate, measured or assumed', () => {
  it("when the health API's nodes report passes, then each node's pass of the type is read, and nodes without one are left out", () => {
    expect(
      passesOf([
        {
          node: 'a:6200',
          replication_passes: {
            object: { ended_at: '2026-11-29T01:00:00.000Z', seconds: 120, partitions: 900 },
            container: { ended_at: '2026-11-29T01:05:00.000Z', seconds: 3, partitions: 20 },
          },
        },
        { node: 'b:6200', replication_passes: { object: null } },
        { node: 'c:6200' },
      ]),
    ).toEqual([{ node: 'a:6200', endedAt: Date.parse('2026-11-29T01:00:00.000Z'), seconds: 120, partitions: 900 }]);
  });

  const pass = (node: number, endedAt: number, seconds: number | null, partitions: number | null): ReplicationPass => ({
    node: `10.0.0.${node}:6200`,
    endedAt,
    seconds,
    partitions,
  });

  it('when nodes report their last passes, then the rate is their partitions over their seconds, with when they ended', () => {
    const rate = measuredRate([pass(1, 5000, 100, 1000), pass(2, 9000, 300, 1000), pass(3, 7000, null, 50)]);
    expect(rate).toEqual({
      partitionsPerSecondPerNode: 5,
      passes: 2,
      from: 5000,
      to: 9000,
      longestPassSeconds: 300,
    });
  });

  it('when no pass says both its length and its partitions, or they took no time, then there is no measurement', () => {
    expect(measuredRate([])).toBeNull();
    expect(measuredRate([pass(1, 0, null, 10), pass(2, 0, 10, null), pass(3, 0, 0, 10)])).toBeNull();
    expect(measuredRate([pass(1, 0, 10, 0)])).toBeNull();
  });

  it('when the rate is measured, then partition replicas move at it and each step takes a pass at least; assumed, then bytes move at it', () => {
    const rate = { kind: 'measured' as const, ...measuredRate([pass(1, 0, 100, 1000)])! };
    expect(replicationSeconds(rate, { partReplicas: 2000, bytes: null, nodes: 2, steps: 1 })).toBe(100);
    expect(replicationSeconds(rate, { partReplicas: 2000, bytes: null, nodes: 2, steps: 3 })).toBe(300);
    expect(replicationSeconds(rate, { partReplicas: 2000, bytes: 1, nodes: 0, steps: 3 })).toBeNull();
    const assumed = { kind: 'assumed' as const, bytesPerSecondPerNode: 1e6 };
    expect(replicationSeconds(assumed, { partReplicas: 2000, bytes: 4e6, nodes: 2, steps: 3 })).toBe(2);
    expect(replicationSeconds(assumed, { partReplicas: 2000, bytes: null, nodes: 2, steps: 3 })).toBeNull();
  });

  it('when any passes are measured, then the rate lies between the slowest and the fastest node and never beats a step of a pass', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 1, max: 86_400 }), fc.integer({ min: 1, max: 1_000_000 })), {
          minLength: 1,
          maxLength: 20,
        }),
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 20 }),
        (xs, parts, nodes, steps) => {
          const m = measuredRate(xs.map(([s, p], i) => pass(i, i * 1000, s, p)))!;
          const rates = xs.map(([s, p]) => p / s);
          expect(m.partitionsPerSecondPerNode).toBeGreaterThanOrEqual(Math.min(...rates) * (1 - 1e-12));
          expect(m.partitionsPerSecondPerNode).toBeLessThanOrEqual(Math.max(...rates) * (1 + 1e-12));
          const t = replicationSeconds({ kind: 'measured', ...m }, { partReplicas: parts, bytes: null, nodes, steps })!;
          expect(t).toBeGreaterThanOrEqual(steps * m.longestPassSeconds);
          expect(t * m.partitionsPerSecondPerNode * nodes).toBeGreaterThanOrEqual(parts * (1 - 1e-12));
        },
      ),
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
