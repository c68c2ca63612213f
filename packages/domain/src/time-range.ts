import { errors } from './errors';
import { escapeHtml } from './escape';

/**
 * The time rules of the utilization API, pure: `start` (required) is rounded down to the half
 * hour, `end` (default: now) up to a whole number of hours after `start`, all in UTC. Record i of
 * a range covers [start + i h, start + (i + 1) h) and reports the stored hour that begins inside
 * it (the hour itself when start is on the hour, the next one when it is on the half hour), so no
 * stored hour is ever counted in two records.
 */
export interface UtilizationRetention {
  /** Days hourly records are kept. */
  hourlyDays: number;
  /** Days daily rollups are kept. */
  dailyDays: number;
}

export const DEFAULT_RETENTION: UtilizationRetention = Object.freeze({ hourlyDays: 90, dailyDays: 1095 });

export const HOUR_MS = 3_600_000;
const HALF_HOUR_MS = HOUR_MS / 2;
export const DAY_MS = 24 * HOUR_MS;

export interface TimeRange {
  start: Date;
  end: Date;
  /** Number of hourly records in the range. */
  hours: number;
  /** The first stored hour reported (start, or the next whole hour). */
  firstHour: Date;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i;

/** An ISO 8601 date or date-time; without an offset it is UTC. Null when it is not one (or does not exist). */
export function parseUtc(raw: string): Date | null {
  const m = ISO.exec(raw.trim());
  if (!m) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const year = Number(y);
  if (year < 1970 || year > 9999) return null;
  const day = new Date(Date.UTC(year, Number(mo) - 1, Number(d)));
  if (day.getUTCMonth() !== Number(mo) - 1 || day.getUTCDate() !== Number(d)) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone;
  const t = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${frac ? `.${frac.padEnd(3, '0').slice(0, 3)}` : ''}${offset}`);
  return Number.isNaN(t) ? null : new Date(t);
}

const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
/** The last day formatted: record bounds come in runs of 24 or 48 on the same day. */
let lastDay = Number.NaN;
let lastDayText = '';

/**
 * '2026-11-24 22:00:00Z', the original controller's format for record bounds. A 31-day detail
 * formats 1,488 of them, so whole minutes (every record bound) are written from the day's text and
 * two table lookups; toISOString per bound was a sixth of the request's time.
 */
export function formatUtc(d: Date): string {
  const ms = d.getTime();
  if (ms % 60_000 !== 0 || ms < 0 || ms >= 253_402_300_800_000)
    return `${d.toISOString().slice(0, 19).replace('T', ' ')}Z`;
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDayText = new Date(day * DAY_MS).toISOString().slice(0, 10);
    lastDay = day;
  }
  const minutes = (ms - day * DAY_MS) / 60_000;
  return `${lastDayText} ${TWO_DIGITS[Math.floor(minutes / 60)]}:${TWO_DIGITS[minutes % 60]}:00Z`;
}

export const floorHour = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;

function parseParam(name: string, raw: string): Date {
  const parsed = parseUtc(raw);
  if (!parsed) {
    throw errors.invalidInput(
      `'${escapeHtml(raw)}' is not a valid ${name}: give an ISO 8601 date or UTC date-time such as 2026-11-24 or 2026-11-24T22:00:00Z.`,
    );
  }
  return parsed;
}

/**
 * The range asked for. `oldestDays`: how far back records are kept; a start before that is a 400
 * saying so. The range is also capped at that many days (plus a day) so an answer stays bounded.
 */
export function parseTimeRange(
  startRaw: string | undefined,
  endRaw: string | undefined,
  now: Date,
  oldestDays: number,
): TimeRange {
  if (startRaw === undefined || startRaw === '')
    throw errors.invalidInput(
      "'start' is required: give an ISO 8601 date or UTC date-time such as 2026-11-24T22:00:00Z.",
    );
  const start = new Date(Math.floor(parseParam('start', startRaw).getTime() / HALF_HOUR_MS) * HALF_HOUR_MS);
  const endAsked = endRaw === undefined || endRaw === '' ? now : parseParam('end', endRaw);
  if (endAsked.getTime() <= start.getTime()) {
    throw errors.invalidInput(
      `'end' (${formatUtc(endAsked)}) must be after 'start' (${formatUtc(start)}, rounded down to the half hour).`,
    );
  }
  const oldest = floorHour(now.getTime() - oldestDays * DAY_MS);
  if (start.getTime() < oldest) {
    throw errors.invalidInput(
      `'start' (${formatUtc(start)}) is beyond the retention: records are kept ${oldestDays} days, so the earliest start is ${formatUtc(new Date(oldest))}.`,
    );
  }
  const hours = Math.ceil((endAsked.getTime() - start.getTime()) / HOUR_MS);
  if (hours > (oldestDays + 1) * 24) {
    throw errors.invalidInput(
      `The range is ${hours} hours long; at most ${(oldestDays + 1) * 24} hours (the retention of ${oldestDays} days, plus one) may be asked for at once.`,
    );
  }
  const firstHour = new Date(Math.ceil(start.getTime() / HOUR_MS) * HOUR_MS);
  return { start, end: new Date(start.getTime() + hours * HOUR_MS), hours, firstHour };
}
