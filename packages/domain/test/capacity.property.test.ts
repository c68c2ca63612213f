import fc from 'fast-check';
import {
  computeCapacity,
  ringSetName,
  type CapacityDevice,
  type CapacityElement,
  type CapacityPolicy,
  type PctUsedStats,
} from '../src';

// ---------------------------------------------------------------------------------------------
// Naive reference, written apart from src/capacity.ts: plain loops, bigint byte sums, the
// textbook mean and sample variance, sort + Math.ceil(0.95 · n) − 1 for pct_95.
// ---------------------------------------------------------------------------------------------

/** bytes / 10^12 written out as an exact decimal and parsed: the correctly rounded double. */
function referenceTb(bytes: bigint): number {
  const digits = bytes.toString().padStart(13, '0');
  return Number(`${digits.slice(0, -12)}.${digits.slice(-12)}`);
}

function referenceStats(pcts: number[]): PctUsedStats {
  const n = pcts.length;
  if (n === 0) return { count: 0, min: null, max: null, avg: null, stddev: null, pct_95: null };
  const sorted = [...pcts].sort((a, b) => a - b);
  let sum = 0;
  for (const x of pcts) sum += x;
  const mean = sum / n;
  let squares = 0;
  for (const x of pcts) squares += (x - mean) * (x - mean);
  return {
    count: n,
    min: sorted[0] as number,
    max: sorted[n - 1] as number,
    avg: mean,
    stddev: n === 1 ? 0 : Math.sqrt(squares / (n - 1)),
    pct_95: sorted[Math.ceil(0.95 * n) - 1] as number,
  };
}

function reference(policies: CapacityPolicy[], devices: CapacityDevice[]): CapacityElement[] {
  const sets = new Map<string, { used: bigint; free: bigint; pcts: number[] }>();
  for (const d of devices) {
    const indexes: number[] = [];
    for (const i of d.policyIndexes) if (!indexes.includes(i)) indexes.push(i);
    if (indexes.length === 0) continue;
    indexes.sort((a, b) => a - b);
    const name = indexes.map((i) => policies.find((p) => p.index === i)?.name).join(',');
    let set = sets.get(name);
    if (!set) {
      set = { used: 0n, free: 0n, pcts: [] };
      sets.set(name, set);
    }
    if (d.usedBytes !== null && d.freeBytes !== null) {
      set.used += BigInt(d.usedBytes);
      set.free += BigInt(d.freeBytes);
      const raw = d.usedBytes + d.freeBytes;
      if (raw > 0) set.pcts.push((d.usedBytes / raw) * 100);
    }
  }
  const out: CapacityElement[] = [];
  for (const [name, set] of sets) {
    const raw = set.used + set.free;
    out.push({
      ring_set: name,
      total_raw_tb: referenceTb(raw),
      total_used_tb: referenceTb(set.used),
      total_free_tb: referenceTb(set.free),
      total_used_pct: raw === 0n ? null : (Number(set.used) / Number(raw)) * 100,
      pct_used_stats: referenceStats(set.pcts),
    });
  }
  return out.sort((a, b) => (a.ring_set < b.ring_set ? -1 : a.ring_set > b.ring_set ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

/** Unique indexes and unique comma-free names, in random order (so name order ≠ index order). */
const policiesArb = (minLength: number, maxLength: number): fc.Arbitrary<CapacityPolicy[]> =>
  fc
    .uniqueArray(fc.record({ index: fc.nat(1000), name: fc.stringMatching(/^[A-Za-z0-9_-]{1,6}$/) }), {
      minLength,
      maxLength,
      selector: (p) => p.index,
    })
    .filter((ps) => new Set(ps.map((p) => p.name)).size === ps.length);

const bytesArb = fc.oneof(
  { arbitrary: fc.constant(0), weight: 1 },
  { arbitrary: fc.nat(1000), weight: 3 },
  { arbitrary: fc.integer({ min: 0, max: 20_000_000_000_000 }), weight: 4 },
  { arbitrary: fc.maxSafeNat(), weight: 2 },
);

const deviceArb = (policies: CapacityPolicy[]): fc.Arbitrary<CapacityDevice> =>
  fc
    .record({
      policyIndexes: fc.array(fc.constantFrom(...policies.map((p) => p.index)), { maxLength: 6 }),
      usage: fc.option(fc.tuple(bytesArb, bytesArb), { nil: null, freq: 5 }),
    })
    .map(({ policyIndexes, usage }) => ({
      policyIndexes,
      usedBytes: usage?.[0] ?? null,
      freeBytes: usage?.[1] ?? null,
    }));

const clusterArb = (minPolicies: number, maxPolicies: number) =>
  policiesArb(minPolicies, maxPolicies).chain((policies) =>
    fc.record({ policies: fc.constant(policies), devices: fc.array(deviceArb(policies), { maxLength: 300 }) }),
  );

// ---------------------------------------------------------------------------------------------
// Comparison
// ---------------------------------------------------------------------------------------------

/** Relative tolerance 1e-9, with an absolute floor of 1e-12 for results that are 0 up to rounding. */
const close = (actual: number | null, expected: number | null): boolean =>
  actual === null || expected === null
    ? actual === expected
    : Math.abs(actual - expected) <= 1e-9 * Math.max(Math.abs(actual), Math.abs(expected)) + 1e-12;

function expectMatchesReference(actual: CapacityElement[], expected: CapacityElement[]): void {
  expect(actual.map((e) => e.ring_set)).toEqual(expected.map((e) => e.ring_set));
  actual.forEach((a, i) => {
    const e = expected[i] as CapacityElement;
    const at = `ring set '${a.ring_set}'`;
    expect([at, a.total_raw_tb, a.total_used_tb, a.total_free_tb]).toEqual([
      at,
      e.total_raw_tb,
      e.total_used_tb,
      e.total_free_tb,
    ]);
    expect([at, a.pct_used_stats.count, a.pct_used_stats.min, a.pct_used_stats.max, a.pct_used_stats.pct_95]).toEqual([
      at,
      e.pct_used_stats.count,
      e.pct_used_stats.min,
      e.pct_used_stats.max,
      e.pct_used_stats.pct_95,
    ]);
    const loose: [string, number | null, number | null][] = [
      ['total_used_pct', a.total_used_pct, e.total_used_pct],
      ['avg', a.pct_used_stats.avg, e.pct_used_stats.avg],
      ['stddev', a.pct_used_stats.stddev, e.pct_used_stats.stddev],
    ];
    for (const [field, got, want] of loose) {
      if (!close(got, want)) throw new Error(`${at}: ${field} is ${got}, the reference says ${want}`);
    }
  });
}

const inSomePolicy = (d: CapacityDevice) => d.policyIndexes.length > 0;
const countsInStats = (d: CapacityDevice) =>
  d.usedBytes !== null && d.freeBytes !== null && d.usedBytes + d.freeBytes > 0;

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

describe('computeCapacity: properties', () => {
  it('when policies (1–8) and devices (0–300) are random, then the elements match the naive reference', () => {
    fc.assert(
      fc.property(clusterArb(1, 8), ({ policies, devices }) => {
        expectMatchesReference(computeCapacity(policies, devices), reference(policies, devices));
      }),
      { numRuns: 300 },
    );
  });

  it('when there are more than 32 policies, then the elements still match the naive reference', () => {
    fc.assert(
      fc.property(clusterArb(33, 40), ({ policies, devices }) => {
        expectMatchesReference(computeCapacity(policies, devices), reference(policies, devices));
      }),
      { numRuns: 50 },
    );
  });

  it('when devices are random, then each count is the number of its reporting devices with raw > 0', () => {
    fc.assert(
      fc.property(clusterArb(1, 8), ({ policies, devices }) => {
        const elements = computeCapacity(policies, devices);
        for (const e of elements) {
          const members = devices.filter(
            (d) => inSomePolicy(d) && ringSetName(policies, d.policyIndexes) === e.ring_set,
          );
          expect(e.pct_used_stats.count).toBe(members.filter(countsInStats).length);
        }
        const total = elements.reduce((n, e) => n + e.pct_used_stats.count, 0);
        expect(total).toBe(devices.filter((d) => inSomePolicy(d) && countsInStats(d)).length);
      }),
    );
  });

  it('when devices are random, then min ≤ pct_95 ≤ max and min ≤ avg ≤ max, or all are null for count 0', () => {
    fc.assert(
      fc.property(clusterArb(1, 8), ({ policies, devices }) => {
        for (const { pct_used_stats: s } of computeCapacity(policies, devices)) {
          if (s.count === 0) {
            expect([s.min, s.max, s.avg, s.stddev, s.pct_95]).toEqual([null, null, null, null, null]);
            continue;
          }
          const [min, max, avg, p95, sd] = [s.min, s.max, s.avg, s.pct_95, s.stddev] as number[];
          expect(min).toBeLessThanOrEqual(p95 as number);
          expect(p95).toBeLessThanOrEqual(max as number);
          expect(min).toBeLessThanOrEqual(avg as number);
          expect(avg).toBeLessThanOrEqual(max as number);
          expect(min).toBeGreaterThanOrEqual(0);
          expect(max).toBeLessThanOrEqual(100);
          expect(sd).toBeGreaterThanOrEqual(0);
        }
      }),
    );
  });

  it('when devices are random, then the elements are sorted by ring_set with no ring set twice', () => {
    fc.assert(
      fc.property(clusterArb(1, 8), ({ policies, devices }) => {
        const names = computeCapacity(policies, devices).map((e) => e.ring_set);
        for (let i = 1; i < names.length; i++) expect((names[i - 1] as string) < (names[i] as string)).toBe(true);
      }),
    );
  });

  it('when the devices are permuted, then the result is the same', () => {
    const permuted = clusterArb(1, 8).chain(({ policies, devices }) =>
      fc.record({
        policies: fc.constant(policies),
        devices: fc.constant(devices),
        shuffled: fc.shuffledSubarray(devices, { minLength: devices.length, maxLength: devices.length }),
      }),
    );
    fc.assert(
      fc.property(permuted, ({ policies, devices, shuffled }) => {
        expect(computeCapacity(policies, shuffled)).toEqual(computeCapacity(policies, devices));
      }),
    );
  });

  it('when a device is in some policy, then ringSetName of its indexes names an element of the result', () => {
    fc.assert(
      fc.property(clusterArb(1, 8), ({ policies, devices }) => {
        const names = new Set(computeCapacity(policies, devices).map((e) => e.ring_set));
        for (const d of devices.filter(inSomePolicy))
          expect(names.has(ringSetName(policies, d.policyIndexes))).toBe(true);
      }),
    );
  });
});
