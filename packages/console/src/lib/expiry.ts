import { formatTime } from './format';

/** Whether a credential with this `expires_at` no longer works at `now` (null: it never expires). */
export function isExpired(expiresAt: string | null | undefined, now: Date = new Date()): boolean {
  if (!expiresAt) return false;
  const t = Date.parse(expiresAt);
  return !Number.isNaN(t) && t <= now.getTime();
}

/** "in 3 h", "in 2 days", "in 5 min"; a moment away reads "in under a minute". */
function formatUntil(ms: number): string {
  const min = Math.floor(ms / 60000);
  if (min < 1) return 'in under a minute';
  if (min < 60) return `in ${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return `in ${h} h`;
  return `in ${Math.floor(h / 24)} days`;
}

/** An expiry for a list: "never", "2027-01-31 10:00 (in 3 days)", or past: "2026-11-20 10:00 (3 h ago)". */
export function formatExpiry(expiresAt: string | null | undefined, now: Date = new Date()): string {
  if (!expiresAt) return 'never';
  const t = Date.parse(expiresAt);
  if (Number.isNaN(t)) return expiresAt;
  if (t <= now.getTime()) return formatTime(expiresAt, now);
  return `${formatTime(expiresAt, now).replace(/ \(.*\)$/, '')} (${formatUntil(t - now.getTime())})`;
}

/**
 * A `datetime-local` input's value (the reader's local date and time, no zone) as the API's
 * ISO 8601 UTC, or null when empty; undefined when it is not a date the browser could give.
 */
export function expiryFromLocalInput(value: string): string | null | undefined {
  if (value.trim() === '') return null;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(value)) return undefined;
  const t = new Date(value);
  return Number.isNaN(t.getTime()) ? undefined : t.toISOString();
}
