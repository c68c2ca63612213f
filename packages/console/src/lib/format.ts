/** Display formatting. Numbers are rounded only here, for the eye; the API's values stay exact. */

const TB = 1e12;
const UNITS = ['B', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB'];

/** Decimal units, as the capacity API (TB = 10^12 bytes): 1 500 000 000 → "1.50 GB". */
export function formatBytes(bytes: number | null | undefined): string {
  if (bytes === null || bytes === undefined || !Number.isFinite(bytes)) return '—';
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1000 && unit < UNITS.length - 1) {
    value /= 1000;
    unit += 1;
  }
  const sign = bytes < 0 ? '-' : '';
  return unit === 0 ? `${sign}${value} B` : `${sign}${value.toFixed(2)} ${UNITS[unit]}`;
}

/** A TB figure from the capacity API, two decimals: 1.5 → "1.50 TB"; below 0.01 TB in GB. */
export function formatTb(tb: number): string {
  if (!Number.isFinite(tb)) return '—';
  if (tb !== 0 && Math.abs(tb) < 0.01) return formatBytes(tb * TB);
  return `${tb.toFixed(2)} TB`;
}

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
