import { TRANSFER_CLASSES, type TransferClass } from './transfer-classes';

/**
 * Amounts of a utilization invoice, in exact decimal arithmetic: every price is a decimal string
 * read into a bigint and a power of ten, every quantity a bigint, every amount a fraction of
 * bigints rounded once, half up, to the sheet's `decimals`. No float ever holds money or a count:
 * 0.1 + 0.2 is 0.3 here, and a petabyte times a price loses no digit.
 */

/** p / q with q > 0. */
export interface Fraction {
  p: bigint;
  q: bigint;
}

const DECIMAL = /^(\d{1,30})(?:\.(\d{1,18}))?$/;

/** "0.0230" as 230 / 10000; null for anything that is not a non-negative decimal. */
export function parseDecimal(s: string): Fraction | null {
  const m = DECIMAL.exec(s);
  if (!m) return null;
  const digits = m[2] ?? '';
  return { p: BigInt(m[1]! + digits), q: 10n ** BigInt(digits.length) };
}

export const mul = (a: Fraction, b: Fraction): Fraction => ({ p: a.p * b.p, q: a.q * b.q });
export const add = (a: Fraction, b: Fraction): Fraction => ({ p: a.p * b.q + b.p * a.q, q: a.q * b.q });
export const frac = (p: bigint, q = 1n): Fraction => ({ p, q });

/** The fraction rounded half up to `decimals` places, as a bigint count of 10^-decimals units. */
export function roundUnits(x: Fraction, decimals: number): bigint {
  const scaled = x.p * 10n ** BigInt(decimals);
  return (2n * scaled + x.q) / (2n * x.q);
}

/** Units of 10^-decimals written as a decimal string: 12345n, 2 → "123.45". */
export function formatUnits(units: bigint, decimals: number): string {
  const s = units.toString().padStart(decimals + 1, '0');
  return decimals === 0 ? s : `${s.slice(0, -decimals)}.${s.slice(-decimals)}`;
}

/** A price sheet as read (prices are decimal strings; see docs/utilization.md). */
export interface PriceSheet {
  currency: string;
  /** Decimal places of each amount (2: cents). */
  decimals: number;
  /** Bytes in a GB: 1,000,000,000 (default) or 1,073,741,824 for GiB. */
  bytesPerGb: bigint;
  /** Hours in a billing month: a GB-month is a GB stored for this long (730 = 8760 / 12). */
  hoursPerMonth: bigint;
  /** Per GB-month, by policy name or index; `default` for a policy not named. */
  storageGbMonth: Record<string, Fraction>;
  /** Per GB sent out to external networks (internal egress is free). */
  egressGb: Fraction;
  /** Per GB received (usually 0). */
  ingressGb: Fraction;
  /** Per 1,000 requests of each class. */
  requestsPer1000: Record<TransferClass, Fraction>;
}

/** What an invoice needs of one account's summary, every figure exact. */
export interface BilledUsage {
  account: string;
  /** Hours in the range. */
  hours: bigint;
  /** Average bytes stored per policy (index → bytes); an account's storage outside every policy under `total`. */
  storage: Array<{ policy: string; index: number | null; bytesAvg: bigint }>;
  bytesIn: bigint;
  /** bytes_out less internal_bytes_out. */
  externalBytesOut: bigint;
  requests: Record<TransferClass, bigint>;
}

export interface InvoiceLine {
  account: string;
  storage_gb_months: string;
  storage: string;
  egress_gb: string;
  egress: string;
  ingress: string;
  requests: string;
  request_count: string;
  total: string;
  currency: string;
}

/** Storage price of a policy: by its name, else its index, else `default`, else 0. */
function storagePrice(sheet: PriceSheet, policy: string, index: number | null): Fraction {
  const byName = Object.entries(sheet.storageGbMonth).find(([k]) => k.toLowerCase() === policy.toLowerCase());
  return (
    byName?.[1] ??
    (index === null ? undefined : sheet.storageGbMonth[String(index)]) ??
    sheet.storageGbMonth.default ??
    frac(0n)
  );
}

/**
 * One account's invoice line. Each amount is computed exactly and rounded once; the total is the
 * sum of the rounded amounts, so the printed line adds up. Quantities are shown to 6 places.
 */
export function invoiceLine(sheet: PriceSheet, u: BilledUsage): InvoiceLine {
  const d = sheet.decimals;
  // GB-months: average bytes × hours ÷ (bytes per GB × hours per month).
  const gbMonths = (bytes: bigint) => frac(bytes * u.hours, sheet.bytesPerGb * sheet.hoursPerMonth);
  let storageGbm = frac(0n);
  let storage = frac(0n);
  for (const s of u.storage) {
    const q = gbMonths(s.bytesAvg);
    storageGbm = add(storageGbm, q);
    storage = add(storage, mul(q, storagePrice(sheet, s.policy, s.index)));
  }
  const egressGb = frac(u.externalBytesOut, sheet.bytesPerGb);
  const egress = mul(egressGb, sheet.egressGb);
  const ingress = mul(frac(u.bytesIn, sheet.bytesPerGb), sheet.ingressGb);
  let requests = frac(0n);
  let count = 0n;
  for (const c of TRANSFER_CLASSES) {
    count += u.requests[c];
    requests = add(requests, mul(frac(u.requests[c], 1000n), sheet.requestsPer1000[c]));
  }
  const amounts = [storage, egress, ingress, requests].map((x) => roundUnits(x, d));
  const total = amounts.reduce((a, b) => a + b, 0n);
  return {
    account: u.account,
    storage_gb_months: formatUnits(roundUnits(storageGbm, 6), 6),
    storage: formatUnits(amounts[0]!, d),
    egress_gb: formatUnits(roundUnits(egressGb, 6), 6),
    egress: formatUnits(amounts[1]!, d),
    ingress: formatUnits(amounts[2]!, d),
    requests: formatUnits(amounts[3]!, d),
    request_count: count.toString(),
    total: formatUnits(total, d),
    currency: sheet.currency,
  };
}

/** A sheet's errors are sentences naming the field. */
export function parsePriceSheet(raw: unknown): PriceSheet {
  const fail = (msg: string): never => {
    throw new Error(`price sheet: ${msg}`);
  };
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return fail('must be a JSON object.');
  const o = raw as Record<string, unknown>;
  const known = new Set([
    'currency',
    'decimals',
    'bytes_per_gb',
    'hours_per_month',
    'storage_gb_month',
    'egress_gb',
    'ingress_gb',
    'requests_per_1000',
  ]);
  for (const k of Object.keys(o)) if (!known.has(k)) fail(`'${k}' is not a field of a price sheet.`);
  const price = (v: unknown, name: string): Fraction => {
    if (v === undefined) return frac(0n);
    if (typeof v !== 'string')
      return fail(
        `'${name}' must be a decimal written as a string ("0.023"), so that no digit is lost to floating point.`,
      );
    return parseDecimal(v) ?? fail(`'${name}' (${v.slice(0, 40)}) is not a non-negative decimal such as "0.023".`);
  };
  const whole = (v: unknown, name: string, dflt: bigint): bigint => {
    if (v === undefined) return dflt;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
      return fail(`'${name}' must be a whole number ≥ 1.`);
    return BigInt(v);
  };
  const currency = o.currency ?? '';
  if (typeof currency !== 'string' || currency.length > 16) fail("'currency' must be a short text (EUR, USD).");
  const decimals = o.decimals ?? 2;
  if (typeof decimals !== 'number' || !Number.isInteger(decimals) || decimals < 0 || decimals > 12)
    fail("'decimals' must be a whole number from 0 to 12.");
  const storageRaw = o.storage_gb_month ?? {};
  if (storageRaw === null || typeof storageRaw !== 'object' || Array.isArray(storageRaw))
    fail("'storage_gb_month' must map policy names or indexes (or 'default') to prices.");
  const requestsRaw = o.requests_per_1000 ?? {};
  if (requestsRaw === null || typeof requestsRaw !== 'object' || Array.isArray(requestsRaw))
    fail(`'requests_per_1000' must map request classes (${TRANSFER_CLASSES.join(', ')}) to prices.`);
  for (const k of Object.keys(requestsRaw as object))
    if (!(TRANSFER_CLASSES as readonly string[]).includes(k))
      fail(`'requests_per_1000.${k}' is not a request class (${TRANSFER_CLASSES.join(', ')}).`);
  return {
    currency: currency as string,
    decimals: decimals as number,
    bytesPerGb: whole(o.bytes_per_gb, 'bytes_per_gb', 1_000_000_000n),
    hoursPerMonth: whole(o.hours_per_month, 'hours_per_month', 730n),
    storageGbMonth: Object.fromEntries(
      Object.entries(storageRaw as Record<string, unknown>).map(([k, v]) => [k, price(v, `storage_gb_month.${k}`)]),
    ),
    egressGb: price(o.egress_gb, 'egress_gb'),
    ingressGb: price(o.ingress_gb, 'ingress_gb'),
    requestsPer1000: Object.fromEntries(
      TRANSFER_CLASSES.map((c) => [c, price((requestsRaw as Record<string, unknown>)[c], `requests_per_1000.${c}`)]),
    ) as Record<TransferClass, Fraction>,
  };
}
