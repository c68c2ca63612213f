import {
  CairnError,
  computeCapacity,
  ringSetName,
  type CapacityDevice,
  type CapacityElement,
  type CapacityPolicy,
} from '../src';

/** Index order differs from name order on purpose: index 0 'silver', 1 'gold', 2 'bronze'. */
const POLICIES: CapacityPolicy[] = [
  { index: 1, name: 'gold' },
  { index: 0, name: 'silver' },
  { index: 2, name: 'bronze' },
];

const dev = (policyIndexes: number[], usedBytes: number | null, freeBytes: number | null): CapacityDevice => ({
  policyIndexes,
  usedBytes,
  freeBytes,
});
const unreported = (policyIndexes: number[]): CapacityDevice => dev(policyIndexes, null, null);

const EMPTY_STATS = { count: 0, min: null, max: null, avg: null, stddev: null, pct_95: null };

function only(elements: CapacityElement[]): CapacityElement {
  expect(elements).toHaveLength(1);
  return elements[0] as CapacityElement;
}

function refusal(f: () => unknown): CairnError {
  try {
    f();
  } catch (e) {
    if (e instanceof CairnError) return e;
    throw e;
  }
  throw new Error('expected an INVALID_INPUT refusal');
}

/** Percentages k·100/128 are exact doubles (k < 128), so ranks can be checked with toBe. */
const pctOf = (k: number) => (k / 128) * 100;

/** Devices with percentages pctOf(1..n), handed over in a scrambled order. */
function rankedDevices(n: number): CapacityDevice[] {
  const ks = Array.from({ length: n }, (_, i) => i + 1);
  const scramble = (k: number) => (k * 7919) % 104729;
  return ks.sort((a, b) => scramble(a) - scramble(b)).map((k) => dev([0], k, 128 - k));
}

describe('computeCapacity: totals', () => {
  it('when a device has root-reserved space (used + free < size), then raw is used + free and the reserved part counts nowhere', () => {
    // statvfs of a 10 TB disk: f_blocks − f_bfree = 6 TB in use, 0.5 TB reserved for root, f_bavail = 3.5 TB.
    // The caller passes used = 6e12 and free = 3.5e12; the size (10e12) is not part of the model.
    const e = only(computeCapacity(POLICIES, [dev([0], 6e12, 3.5e12)]));
    expect(e.total_raw_tb).toBe(9.5);
    expect(e.total_used_tb).toBe(6);
    expect(e.total_free_tb).toBe(3.5);
    expect(e.total_used_pct).toBeCloseTo(63.157894736842, 10); // 6 / 9.5 × 100, not 6 / 10 × 100
    expect(e.pct_used_stats.min).toBeCloseTo(63.157894736842, 10);
  });

  it('when bytes are converted to TB, then 10^12 bytes are one TB, exactly', () => {
    const e = only(computeCapacity(POLICIES, [dev([0], 1.5e12, 1)]));
    expect(e.total_used_tb).toBe(1.5);
    expect(e.total_free_tb).toBe(1e-12);
    expect(e.total_raw_tb).toBe(1.500000000001);
  });

  it('when 100,000 devices of 20 TB are summed (2·10^18 bytes, past 2^53), then the totals are still exact', () => {
    const devices = Array.from({ length: 100_000 }, () => dev([0, 1], 15e12, 5e12));
    const e = only(computeCapacity(POLICIES, devices));
    expect(e.total_raw_tb).toBe(2_000_000);
    expect(e.total_used_tb).toBe(1_500_000);
    expect(e.total_free_tb).toBe(500_000);
    expect(e.total_used_pct).toBe(75);
  });

  it('when byte totals pass 2^53 with odd digits, then TB is the correctly rounded exact quotient', () => {
    // 3 × (2^53 − 1) = 27021597764222973 bytes, which is not a double itself.
    const max = Number.MAX_SAFE_INTEGER;
    const e = only(computeCapacity(POLICIES, [dev([2], max, 0), dev([2], max, 1), dev([2], max, 2)]));
    expect(e.total_used_tb).toBe(Number('27021.597764222973')); // the double nearest the exact decimal
    expect(e.total_free_tb).toBe(3e-12);
    expect(e.total_raw_tb).toBe(Number('27021.597764222976'));
  });

  it('when some devices report no usage, then they are left out of the totals and the statistics', () => {
    const e = only(
      computeCapacity(POLICIES, [dev([0], 1e12, 3e12), unreported([0]), dev([0], 3e12, 1e12), unreported([0])]),
    );
    expect(e.total_raw_tb).toBe(8);
    expect(e.total_used_tb).toBe(4);
    expect(e.total_free_tb).toBe(4);
    expect(e.total_used_pct).toBe(50);
    expect(e.pct_used_stats).toEqual({ count: 2, min: 25, max: 75, avg: 50, stddev: Math.sqrt(1250), pct_95: 75 });
  });

  it('when every device of a ring set reports no usage, then its element has zero totals, a null total_used_pct and empty statistics', () => {
    const elements = computeCapacity(POLICIES, [unreported([2]), unreported([2]), dev([0], 1, 1)]);
    expect(elements.map((e) => e.ring_set)).toEqual(['bronze', 'silver']);
    expect(elements[0]).toEqual({
      ring_set: 'bronze',
      total_raw_tb: 0,
      total_used_tb: 0,
      total_free_tb: 0,
      total_used_pct: null,
      pct_used_stats: EMPTY_STATS,
    });
  });

  it('when a reporting device has raw 0, then it adds 0 to the totals and is left out of the statistics', () => {
    const e = only(computeCapacity(POLICIES, [dev([1], 0, 0), dev([1], 1e12, 1e12)]));
    expect(e.total_raw_tb).toBe(2);
    expect(e.total_used_pct).toBe(50);
    expect(e.pct_used_stats).toEqual({ count: 1, min: 50, max: 50, avg: 50, stddev: 0, pct_95: 50 });
  });

  it('when the only devices of a ring set have raw 0, then totals are 0, total_used_pct is null and the statistics are empty', () => {
    const e = only(computeCapacity(POLICIES, [dev([1], 0, 0), dev([1], 0, 0)]));
    expect(e.total_raw_tb).toBe(0);
    expect(e.total_used_pct).toBeNull();
    expect(e.pct_used_stats).toEqual(EMPTY_STATS);
  });

  it('when a full device has no free bytes, then its percentage is 100', () => {
    const e = only(computeCapacity(POLICIES, [dev([0], 7, 0)]));
    expect(e.total_used_pct).toBe(100);
    expect(e.pct_used_stats.max).toBe(100);
  });
});

describe('computeCapacity: ring sets', () => {
  it('when a device is in three policies, then it forms one ring set named in index order and counts once', () => {
    const e = only(computeCapacity(POLICIES, [dev([2, 1, 0], 1e12, 1e12)]));
    expect(e.ring_set).toBe('silver,gold,bronze');
    expect(e.total_raw_tb).toBe(2);
    expect(e.pct_used_stats.count).toBe(1);
  });

  it('when policy indexes are given out of order or repeated, then the devices share one ring set', () => {
    const e = only(computeCapacity(POLICIES, [dev([2, 0], 1, 3), dev([0, 2, 0], 2, 2), dev([2, 2, 0, 0], 3, 1)]));
    expect(e.ring_set).toBe('silver,bronze');
    expect(e.total_raw_tb).toBe(12e-12);
    expect(e.pct_used_stats).toEqual({ count: 3, min: 25, max: 75, avg: 50, stddev: 25, pct_95: 75 });
  });

  it('when policy names sort differently from their indexes, then a ring set prints them by index and elements sort by the printed name', () => {
    const elements = computeCapacity(POLICIES, [dev([0, 1], 1, 1), dev([1], 1, 1), dev([0], 1, 1), dev([2, 1], 1, 1)]);
    // 'gold' (1) < 'gold,bronze' (1,2) < 'silver' (0) < 'silver,gold' (0,1) in JS string order.
    expect(elements.map((e) => e.ring_set)).toEqual(['gold', 'gold,bronze', 'silver', 'silver,gold']);
  });

  it('when a device is in no policy, then it is left out entirely', () => {
    expect(computeCapacity(POLICIES, [dev([], 5, 5)])).toEqual([]);
    const e = only(computeCapacity(POLICIES, [dev([], 1e12, 0), dev([1], 1e12, 1e12)]));
    expect(e.total_raw_tb).toBe(2);
  });

  it('when there are no devices, then there are no elements', () => {
    expect(computeCapacity(POLICIES, [])).toEqual([]);
  });

  it('when devices come from a generator, then any iterable is accepted', () => {
    function* devices(): Generator<CapacityDevice> {
      yield dev([0], 1, 1);
      yield dev([0], 3, 1);
    }
    expect(only(computeCapacity(POLICIES, devices())).pct_used_stats.count).toBe(2);
  });

  it('when there are more than 32 policies, then ring sets are still grouped as sets and named by index', () => {
    const many = Array.from({ length: 40 }, (_, i) => ({ index: 100 - i, name: `p${i}` })); // p39 has the lowest index
    const elements = computeCapacity(many, [dev([100, 61], 1, 3), dev([61, 100, 61], 3, 1), dev([70], 1, 1)]);
    expect(elements.map((e) => [e.ring_set, e.pct_used_stats.count])).toEqual([
      ['p30', 1],
      ['p39,p0', 2],
    ]);
  });

  it('when policy names contain commas so that two ring sets print alike, then both still get their own element, in index order', () => {
    const odd = [
      { index: 0, name: 'a,b' },
      { index: 1, name: 'a' },
      { index: 2, name: 'b' },
    ];
    const elements = computeCapacity(odd, [dev([1, 2], 1, 1), dev([0], 1, 3)]);
    expect(elements.map((e) => [e.ring_set, e.pct_used_stats.avg])).toEqual([
      ['a,b', 25],
      ['a,b', 50],
    ]);
  });
});

describe('computeCapacity: pct_used_stats', () => {
  it('when a ring set has one device, then min = max = avg = pct_95 = its percentage and stddev is 0', () => {
    const e = only(computeCapacity(POLICIES, [dev([0], 3, 1)]));
    expect(e.pct_used_stats).toEqual({ count: 1, min: 75, max: 75, avg: 75, stddev: 0, pct_95: 75 });
  });

  it('when many devices have the same percentage, then stddev is exactly 0 and avg is exactly that percentage', () => {
    const v = (600 / 1000) * 100; // 60.00000000000001 in doubles: a naive mean would drift
    const e = only(
      computeCapacity(
        POLICIES,
        Array.from({ length: 1000 }, () => dev([0], 600, 400)),
      ),
    );
    expect(e.pct_used_stats).toEqual({ count: 1000, min: v, max: v, avg: v, stddev: 0, pct_95: v });
  });

  it('when percentages are 25, 50 and 75, then avg is 50, the sample stddev is 25 and pct_95 is 75', () => {
    const e = only(computeCapacity(POLICIES, [dev([1], 2, 2), dev([1], 3, 1), dev([1], 1, 3)]));
    expect(e.pct_used_stats).toEqual({ count: 3, min: 25, max: 75, avg: 50, stddev: 25, pct_95: 75 });
  });

  it.each([
    [1, 1],
    [2, 2],
    [19, 19],
    [20, 19],
    [21, 20],
    [40, 38],
    [100, 95],
  ])('when there are %i devices, then pct_95 is the value at nearest rank %i', (n, rank) => {
    const s = only(computeCapacity(POLICIES, rankedDevices(n))).pct_used_stats;
    expect(s.count).toBe(n);
    expect(s.pct_95).toBe(pctOf(rank));
    expect(s.min).toBe(pctOf(1));
    expect(s.max).toBe(pctOf(n));
  });

  it('when percentages differ only far below their magnitude, then stddev stays accurate (no catastrophic cancellation)', () => {
    // Percentages 100·(1 − 2^-40) and 100·(1 − 3·2^-40), alternating: sample stddev = |a − b| / 2 · √(n / (n − 1)).
    const raw = 2 ** 40;
    const n = 10_000;
    const devices = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? dev([0], raw - 1, 1) : dev([0], raw - 3, 3)));
    const a = ((raw - 1) / raw) * 100;
    const b = ((raw - 3) / raw) * 100;
    const expected = (Math.abs(a - b) / 2) * Math.sqrt(n / (n - 1));
    const s = only(computeCapacity(POLICIES, devices)).pct_used_stats;
    expect(Math.abs((s.stddev as number) - expected) / expected).toBeLessThan(1e-6);
    expect(s.avg).toBeGreaterThanOrEqual(b);
    expect(s.avg).toBeLessThanOrEqual(a);
  });
});

describe('computeCapacity: refusals', () => {
  it('when a device names a policy index that is not among the policies, then it is INVALID_INPUT', () => {
    const e = refusal(() => computeCapacity(POLICIES, [dev([0], 1, 1), dev([0, 7], 1, 1)]));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.message).toContain('7');
    expect(e.details).toEqual({ policyIndex: 7, device: 1 });
  });

  it('when a device in more than 32 policies names an unknown index, then it is INVALID_INPUT too', () => {
    const many = Array.from({ length: 33 }, (_, i) => ({ index: i, name: `p${i}` }));
    expect(refusal(() => computeCapacity(many, [dev([0, 33], 1, 1)])).code).toBe('INVALID_INPUT');
  });

  it.each([
    ['one of used/free is null', dev([0], 1, null)],
    ['the other one is null', dev([0], null, 1)],
    ['a byte count is negative', dev([0], -1, 1)],
    ['a byte count is fractional', dev([0], 1.5, 1)],
    ['a byte count is past 2^53 − 1', dev([0], 2 ** 53, 1)],
    ['a byte count is NaN', dev([0], NaN, 1)],
    ['a device in no policy has bad bytes', dev([], 1, -1)],
  ])('when %s, then it is INVALID_INPUT', (_label, device) => {
    expect(refusal(() => computeCapacity(POLICIES, [device])).code).toBe('INVALID_INPUT');
  });

  it.each([
    [
      'an index appears twice',
      [
        { index: 0, name: 'a' },
        { index: 0, name: 'b' },
      ],
    ],
    [
      'a name appears twice',
      [
        { index: 0, name: 'a' },
        { index: 1, name: 'a' },
      ],
    ],
    ['an index is negative', [{ index: -1, name: 'a' }]],
    ['an index is fractional', [{ index: 0.5, name: 'a' }]],
  ])('when in the policies %s, then it is INVALID_INPUT', (_label, policies) => {
    expect(refusal(() => computeCapacity(policies, [])).code).toBe('INVALID_INPUT');
  });
});

describe('ringSetName', () => {
  it('when indexes are out of order or repeated, then the names come sorted by index, once each', () => {
    expect(ringSetName(POLICIES, [2, 0, 2, 1, 0])).toBe('silver,gold,bronze');
    expect(ringSetName(POLICIES, [1, 0])).toBe('silver,gold');
  });

  it('when no index is given, then the name is empty', () => {
    expect(ringSetName(POLICIES, [])).toBe('');
  });

  it('when an index is not among the policies, then it is INVALID_INPUT', () => {
    const e = refusal(() => ringSetName(POLICIES, [0, 9]));
    expect(e.code).toBe('INVALID_INPUT');
    expect(e.details).toEqual({ policyIndex: 9 });
  });
});
