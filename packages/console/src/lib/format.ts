/** Display formatting. Numbers are rounded only here, for the eye; the API's values stay exact. */

const TB = 1e12;

/** The console's byte units: binary (KiB = 1024 bytes), as quotas are set and as Swift's tools count. */
const BINARY: ReadonlyArray<[string, bigint]> = [
  ['EiB', 2n ** 60n],
  ['PiB', 2n ** 50n],
  ['TiB', 2n ** 40n],
  ['GiB', 2n ** 30n],
  ['MiB', 2n ** 20n],
  ['KiB', 2n ** 10n],
];
const DECIMAL = ['B', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB'];

/** A byte count as an exact BigInt: a float (an average) is rounded to whole bytes; null when not a count. */
function wholeBytes(bytes: number | string | bigint | null | undefined): bigint | null {
  if (bytes === null || bytes === undefined) return null;
  if (typeof bytes === 'number') return Number.isFinite(bytes) ? BigInt(Math.round(bytes)) : null;
  try {
    return BigInt(bytes);
  } catch {
    return null;
  }
}

/**
 * Every byte figure of the console, in one unit system: binary units, exact when the count is a whole
 * number of the unit ("10 GiB"), else two decimals ("1.50 GiB"); below 1 KiB in bytes. BigInt all the
 * way, so quotas up to 2^63 − 1 (decimal strings from the API) keep their digits. The decimal figure
 * and the exact count are in {@link bytesTitle}, for a tooltip.
 */
export function formatBytes(bytes: number | string | bigint | null | undefined): string {
  let n = wholeBytes(bytes);
  if (n === null) return '—';
  const sign = n < 0n ? '-' : '';
  if (n < 0n) n = -n;
  for (const [name, size] of BINARY) {
    if (n < size) continue;
    if (n % size === 0n) return `${sign}${(n / size).toLocaleString('en-US')} ${name}`;
    // Two decimals, rounded half up, without passing through a float for the whole part.
    const hundredths = (n * 100n + size / 2n) / size;
    return `${sign}${(hundredths / 100n).toLocaleString('en-US')}.${String(hundredths % 100n).padStart(2, '0')} ${name}`;
  }
  return `${sign}${n.toString()} ${n === 1n ? 'byte' : 'bytes'}`;
}

/** The same count in decimal units (TB = 10^12 bytes, as disks are sold), two decimals: the tooltip's reading. */
export function formatDecimalBytes(bytes: number | string | bigint | null | undefined): string {
  const n = wholeBytes(bytes);
  if (n === null) return '—';
  let value = Math.abs(Number(n));
  let unit = 0;
  while (value >= 1000 && unit < DECIMAL.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const sign = n < 0n ? '-' : '';
  return unit === 0 ? `${sign}${value} B` : `${sign}${value.toFixed(2)} ${DECIMAL[unit]}`;
}

/** A tooltip for a byte figure: the exact count and the decimal reading, "1,500,000,000 bytes (1.50 GB)". */
export function bytesTitle(bytes: number | string | bigint | null | undefined): string | undefined {
  const n = wholeBytes(bytes);
  if (n === null) return undefined;
  return `${n.toLocaleString('en-US')} ${n === 1n || n === -1n ? 'byte' : 'bytes'} (${formatDecimalBytes(n)})`;
}

/** A TB figure of the capacity API (10^12 bytes) in the console's units: 1.5 → "1.36 TiB". */
export function formatTb(tb: number): string {
  return Number.isFinite(tb) ? formatBytes(tb * TB) : '—';
}

/** The tooltip of a capacity API figure: its TB as the API gave it, and the bytes. */
export const tbTitle = (tb: number): string | undefined =>
  Number.isFinite(tb) ? `${tb} TB (${Math.round(tb * TB).toLocaleString('en-US')} bytes)` : undefined;

/** What every page says of an account the storage collector has not sampled (yet, or within the retention). */
export const NOT_SAMPLED = 'not sampled';

/** A percentage, one decimal: 62.5 → "62.5 %". */
export function formatPct(pct: number | null | undefined): string {
  if (pct === null || pct === undefined || !Number.isFinite(pct)) return '—';
  return `${pct.toFixed(1)} %`;
}

/** An ISO time as the reader's local date and time, with the age: "2026-11-22 04:38 (3 h ago)". */
export function formatTime(iso: string | null | undefined, now: Date = new Date()): string {
  if (!iso) return 'never';
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return iso;
  return `${localMinute(t)} (${formatAge(now.getTime() - t.getTime())})`;
}

/** An audit time: the reader's local date to the second, and the age apart ("2026-11-22 04:38:09", "3 h ago"). */
export function formatSecond(iso: string, now: Date = new Date()): { when: string; age: string } {
  const t = new Date(iso);
  if (Number.isNaN(t.getTime())) return { when: iso, age: '' };
  return {
    when: `${localMinute(t)}:${String(t.getSeconds()).padStart(2, '0')}`,
    age: formatAge(now.getTime() - t.getTime()),
  };
}

/** The reader's local date and minute: "2026-11-22 04:38". */
function localMinute(t: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${pad(t.getHours())}:${pad(t.getMinutes())}`;
}

/** "just now", "5 min ago", "3 h ago", "2 days ago"; a future time (clock skew) reads "just now". */
export function formatAge(ms: number): string {
  const min = Math.floor(ms / 60000);
  if (min < 1) return 'just now';
  if (min < 60) return `${min} min ago`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} days ago`;
}

/** Percent used of one device, or null when it reports no usage (as the capacity API leaves it out). */
export function devicePctUsed(used: number | null, avail: number | null): number | null {
  if (used === null || avail === null) return null;
  const raw = used + avail;
  return raw > 0 ? (used / raw) * 100 : null;
}
