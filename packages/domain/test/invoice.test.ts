import fc from 'fast-check';
import {
  formatUnits,
  invoiceLine,
  parseDecimal,
  parsePriceSheet,
  roundUnits,
  TRANSFER_CLASSES,
  type BilledUsage,
  type TransferClass,
} from '../src';

const noRequests = Object.fromEntries(TRANSFER_CLASSES.map((c) => [c, 0n])) as Record<TransferClass, bigint>;
const usage = (u: Partial<BilledUsage>): BilledUsage => ({
  account: 'AUTH_a',
  hours: 730n,
  storage: [],
  bytesIn: 0n,
  externalBytesOut: 0n,
  requests: noRequests,
  ...u,
});

/** The example sheet of docs/utilization.md. */
const EXAMPLE = {
  currency: 'EUR',
  decimals: 2,
  storage_gb_month: { default: '0.020', gold: '0.045' },
  egress_gb: '0.05',
  requests_per_1000: { put: '0.005', post: '0.005', copy: '0.005', list: '0.005', get: '0.0004', head: '0.0004' },
};

describe('exact decimals', () => {
  it('when decimals are parsed and written back, then no digit changes (0.1 + 0.2 is 0.3)', () => {
    const a = parseDecimal('0.1')!;
    const b = parseDecimal('0.2')!;
    expect(formatUnits(roundUnits({ p: a.p * b.q + b.p * a.q, q: a.q * b.q }, 1), 1)).toBe('0.3');
    expect(parseDecimal('-1')).toBeNull();
    expect(parseDecimal('1e3')).toBeNull();
    expect(parseDecimal('.5')).toBeNull();
    expect(parseDecimal('9'.repeat(30))).toEqual({ p: 10n ** 30n - 1n, q: 1n });
    expect(parseDecimal(`1${'0'.repeat(30)}`)).toBeNull();
    expect(parseDecimal('12345678901234567890.123456789012345678')).toEqual({
      p: 12345678901234567890123456789012345678n,
      q: 10n ** 18n,
    });
  });

  it('when any decimal of up to 18 places is parsed and printed at its own scale, then it reads the same', () => {
    fc.assert(
      // Up to 30 integer digits, what parseDecimal takes (10^30 itself has 31: refused, above).
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 30n - 1n }), fc.integer({ min: 0, max: 18 }), (units, places) => {
        const text = formatUnits(units, places);
        const parsed = parseDecimal(text)!;
        expect(formatUnits(roundUnits(parsed, places), places)).toBe(text);
      }),
    );
  });

  it('when a fraction is rounded, then it is the nearest unit, halves up, never off by more than half a unit', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 25n }),
        fc.bigInt({ min: 1n, max: 10n ** 12n }),
        fc.integer({ min: 0, max: 6 }),
        (p, q, d) => {
          const units = roundUnits({ p, q }, d);
          const scale = 10n ** BigInt(d);
          // |units/scale − p/q| ≤ 1/(2·scale)  ⇔  |2·units·q − 2·p·scale| ≤ q, with a half rounding up.
          const diff = 2n * units * q - 2n * p * scale;
          expect(diff <= q && diff > -q).toBe(true);
        },
      ),
    );
  });
});

describe('invoice lines', () => {
  const sheet = parsePriceSheet(EXAMPLE);

  it('when an account stored, sent and asked, then each amount is the exact product, rounded once, and the total adds up', () => {
    const line = invoiceLine(
      sheet,
      usage({
        // 1.5 TB in gold for a whole 730-hour month, 200 GB in policy 0 (default price) for it.
        storage: [
          { policy: 'gold', index: 1, bytesAvg: 1_500_000_000_000n },
          { policy: 'silver', index: 0, bytesAvg: 200_000_000_000n },
        ],
        externalBytesOut: 123_456_789_012n,
        requests: { ...noRequests, put: 10_000n, get: 1_000_000n, head: 1n, delete: 5000n },
      }),
    );
    // 1500 × 0.045 = 67.50; 200 × 0.020 = 4.00; 123.456789012 GB × 0.05 = 6.1728394506 → 6.17;
    // 10 × 0.005 + 1000 × 0.0004 + 0.001 × 0.0004 = 0.45 (0.4500004); deletes are free.
    expect(line).toEqual({
      account: 'AUTH_a',
      storage_gb_months: '1700.000000',
      storage: '71.50',
      egress_gb: '123.456789',
      egress: '6.17',
      ingress: '0.00',
      requests: '0.45',
      request_count: '1015001',
      total: '78.12',
      currency: 'EUR',
    });
  });

  it('when the range is shorter than a month, then storage is billed for its hours (GB-months = GB × hours ÷ 730)', () => {
    const line = invoiceLine(
      sheet,
      usage({ hours: 73n, storage: [{ policy: 'gold', index: 1, bytesAvg: 10n ** 12n }] }),
    );
    expect(line).toMatchObject({ storage_gb_months: '100.000000', storage: '4.50' });
  });

  it('when a figure passes 2^53, then it is still exact', () => {
    const line = invoiceLine(
      parsePriceSheet({ ...EXAMPLE, decimals: 6 }),
      usage({ externalBytesOut: 2n ** 64n, requests: { ...noRequests, get: 2n ** 60n + 1n } }),
    );
    // 2^64 B = 18446744073.709551616 GB × 0.05 = 922337203.6854775808;
    // (2^60 + 1) × 0.0004 / 1000 = 461168601842.7387908.
    expect(line.egress).toBe('922337203.685478');
    expect(line.requests).toBe('461168601842.738791');
    expect(line.request_count).toBe('1152921504606846977');
  });

  it('when amounts are computed for random usage, then the total is the sum of the printed amounts and matches a cent-exact reference', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: 10n ** 16n }),
        fc.bigInt({ min: 0n, max: 10n ** 16n }),
        fc.bigInt({ min: 0n, max: 10n ** 12n }),
        (stored, out, gets) => {
          const line = invoiceLine(
            sheet,
            usage({
              storage: [{ policy: 'gold', index: 1, bytesAvg: stored }],
              externalBytesOut: out,
              requests: { ...noRequests, get: gets },
            }),
          );
          const cents = (s: string) => BigInt(s.replace('.', ''));
          expect(cents(line.total)).toBe(
            cents(line.storage) + cents(line.egress) + cents(line.ingress) + cents(line.requests),
          );
          // Reference in cents: bytes × 0.045 / 10^9 EUR = bytes × 45 / 10^10 cents, rounded half up.
          const half = (num: bigint, den: bigint) => (2n * num + den) / (2n * den);
          expect(cents(line.storage)).toBe(half(stored * 45n, 10n ** 10n));
          expect(cents(line.egress)).toBe(half(out * 5n, 10n ** 9n));
          expect(cents(line.requests)).toBe(half(gets * 4n, 10n ** 5n));
        },
      ),
    );
  });
});

describe('price sheets', () => {
  it('when a price is a JSON number, an unknown class or a negative, then the sheet is refused with a sentence naming it', () => {
    expect(() => parsePriceSheet({ egress_gb: 0.05 })).toThrow(/'egress_gb' must be a decimal written as a string/);
    expect(() => parsePriceSheet({ requests_per_1000: { fetch: '1' } })).toThrow(
      /'requests_per_1000.fetch' is not a request class/,
    );
    expect(() => parsePriceSheet({ storage_gb_month: { gold: '-1' } })).toThrow(/storage_gb_month.gold/);
    expect(() => parsePriceSheet({ egress: '1' })).toThrow(/'egress' is not a field/);
    expect(() => parsePriceSheet([])).toThrow(/JSON object/);
  });

  it('when a policy has no price of its own, then it takes its index, then default, then 0', () => {
    const s = parsePriceSheet({ storage_gb_month: { '2': '1', default: '0.5' } });
    const bill = (policy: string, index: number) =>
      invoiceLine(s, usage({ storage: [{ policy, index, bytesAvg: 10n ** 9n }] })).storage;
    expect([bill('x', 2), bill('y', 3)]).toEqual(['1.00', '0.50']);
    expect(
      invoiceLine(parsePriceSheet({}), usage({ storage: [{ policy: 'z', index: 0, bytesAvg: 10n ** 15n }] })).storage,
    ).toBe('0.00');
  });
});
