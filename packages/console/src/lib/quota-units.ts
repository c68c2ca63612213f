/**
 * Quotas as operators type and read them. The API holds exact integers up to 2^63 − 1 (numbers up to
 * 2^53, decimal strings above), so everything here is BigInt: "8 EiB" must not become 2^63 + 1024.
 */

import type { BigCount } from '../api';

/** The API's largest quota (Postgres bigint). */
export const QUOTA_MAX = 9223372036854775807n;

/** Binary and decimal units, as storage is sold either way; a bare number is bytes. */
const BYTE_UNITS: Record<string, bigint> = {
  b: 1n,
  kb: 10n ** 3n,
  mb: 10n ** 6n,
  gb: 10n ** 9n,
  tb: 10n ** 12n,
  pb: 10n ** 15n,
  eb: 10n ** 18n,
  kib: 2n ** 10n,
  mib: 2n ** 20n,
  gib: 2n ** 30n,
  tib: 2n ** 40n,
  pib: 2n ** 50n,
  eib: 2n ** 60n,
};

/** The byte units a picker offers, largest last. */
export const BYTE_UNIT_CHOICES = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'KB', 'MB', 'GB', 'TB', 'PB'] as const;

export type Parsed = { ok: true; value: string } | { ok: false; error: string };

const RANGE = `from 0 to ${QUOTA_MAX.toLocaleString('en-US')}`;

/**
 * "10 GiB", "1.5 TB", "500gb", "1,073,741,824" or "1073741824 bytes" → the exact byte count as a
 * decimal string; a fraction of a byte, an unknown unit or a value past 2^63 − 1 is refused with a
 * sentence. `unit` applies when the text names none (a unit picker beside the field).
 */
export function parseBytes(text: string, unit = 'bytes'): Parsed {
  const m = /^\s*(\d[\d,_ ]*)(?:\.(\d+))?\s*([a-z]*)\s*$/i.exec(text);
  if (!m)
    return {
      ok: false,
      error: `'${text.trim()}' is not a size: write a whole or decimal number with a unit, such as 10 GiB or 500 GB.`,
    };
  const name = (m[3] || unit).toLowerCase().replace(/^bytes?$/, 'b');
  const factor = BYTE_UNITS[name];
  if (factor === undefined)
    return {
      ok: false,
      error: `'${m[3] || unit}' is not a unit of size: use bytes, KiB, MiB, GiB, TiB, PiB, EiB or KB, MB, GB, TB, PB, EB.`,
    };
  const whole = BigInt(m[1]!.replace(/[,_ ]/g, ''));
  const fraction = m[2] ?? '';
  const scale = 10n ** BigInt(fraction.length);
  const scaled = (whole * scale + BigInt(fraction || '0')) * factor;
  if (scaled % scale !== 0n) return { ok: false, error: `${text.trim()} is not a whole number of bytes.` };
  return inRange(scaled / scale);
}

/** "1000", "1,000,000" → the count as a decimal string. */
export function parseCount(text: string): Parsed {
  const t = text.trim().replace(/[,_ ]/g, '');
  if (!/^\d+$/.test(t)) return { ok: false, error: `'${text.trim()}' is not a whole number of objects.` };
  return inRange(BigInt(t));
}

const inRange = (n: bigint): Parsed =>
  n <= QUOTA_MAX ? { ok: true, value: n.toString() } : { ok: false, error: `A quota must be ${RANGE}.` };

/** What the API should be sent: a JSON number while it is exact, the decimal string beyond. */
export const quotaBody = (value: string): BigCount =>
  BigInt(value) <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;

/** The exact figure with thousands separators: "10,737,418,240". */
export const exactCount = (value: BigCount): string => BigInt(value).toLocaleString('en-US');

/**
 * used ÷ quota in percent (a float is close enough to draw a bar); null without a quota, or with a quota of 0 and
 * nothing used.
 */
export function pctOfQuota(used: BigCount, quota: BigCount | null | undefined): number | null {
  if (quota === null || quota === undefined) return null;
  const q = BigInt(quota);
  const u = BigInt(used);
  if (q === 0n) return u === 0n ? null : Infinity;
  // Ten-thousandths of a percent, exact in BigInt, then a float.
  return Number((u * 1_000_000n) / q) / 10_000;
}

/** total ÷ capacity as "1.4×"; capacity in bytes as a float (TB figures of the capacity API). */
export function ratio(total: BigCount, capacityBytes: number): number | null {
  if (!(capacityBytes > 0)) return null;
  return Number(BigInt(total)) / capacityBytes;
}
