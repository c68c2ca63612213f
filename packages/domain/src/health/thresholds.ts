import Joi from 'joi';
import { validate } from '../validation';

/**
 * The limits the health rules judge a cluster's recon by, per cluster. Each has a default taken
 * from Swift's own behaviour or runbook (docs/health.md says why); a cluster stores only what an
 * operator changed, so a better default reaches every cluster that kept it.
 */
export interface HealthThresholds {
  /** A mounted device at or above this share of its size is a warning… */
  fill_warning_pct: number;
  /** …and a critical finding at or above this one. */
  fill_critical_pct: number;
  /** swift-drive-audit errors on a node above this count are a finding. */
  drive_audit_errors_max: number;
  /** A server type whose replicator has not completed a pass for this long is a finding. */
  replication_max_age_hours: number;
  /** Async pendings on one node above this count are a finding. */
  async_pending_max: number;
  /** Async pendings that only grew for this long are a finding. */
  async_growing_minutes: number;
  /** A node's quarantine count that rose within this long is a finding. */
  quarantine_window_hours: number;
  /** A node whose clock is off by more than this, collection time allowed for, is a finding. */
  clock_skew_ms: number;
  /** A node silent for this long is critical (a warning before). */
  silent_critical_minutes: number;
  /** A ring set projected to be full within this many days is a warning… */
  full_warning_days: number;
  /** …and critical within this many. */
  full_critical_days: number;
  /** How far back the time-to-full projection reads the capacity history. */
  full_projection_days: number;
}

export const DEFAULT_HEALTH_THRESHOLDS: Readonly<HealthThresholds> = Object.freeze({
  fill_warning_pct: 90,
  fill_critical_pct: 95,
  drive_audit_errors_max: 0,
  replication_max_age_hours: 24,
  async_pending_max: 10_000,
  async_growing_minutes: 60,
  quarantine_window_hours: 24,
  clock_skew_ms: 1_000,
  silent_critical_minutes: 60,
  full_warning_days: 30,
  full_critical_days: 7,
  full_projection_days: 7,
});

/**
 * Bounds of each threshold: what a person could mean, nothing that makes a rule meaningless. The
 * hour limits go down to 3.6 s so that a test (or a drill) can watch a pass grow old or a
 * quarantine window pass without waiting an hour; a limit shorter than the collection interval
 * simply holds at every round.
 */
export const HEALTH_THRESHOLD_BOUNDS: Readonly<Record<keyof HealthThresholds, readonly [number, number]>> = {
  fill_warning_pct: [1, 100],
  fill_critical_pct: [1, 100],
  drive_audit_errors_max: [0, 1_000_000],
  replication_max_age_hours: [0.001, 24 * 365],
  async_pending_max: [0, 1_000_000_000],
  async_growing_minutes: [10, 24 * 60],
  quarantine_window_hours: [0.001, 24 * 30],
  clock_skew_ms: [1, 3_600_000],
  silent_critical_minutes: [1, 7 * 24 * 60],
  full_warning_days: [1, 3650],
  full_critical_days: [1, 3650],
  full_projection_days: [1, 31],
};

/**
 * The durations in hours, minutes or days: a number of their unit, fractions allowed (0.5 h). Counts,
 * percentages and the clock skew in ms are whole numbers. An integer means what it always did.
 */
export const FRACTIONAL_HEALTH_THRESHOLDS: ReadonlySet<keyof HealthThresholds> = new Set([
  'replication_max_age_hours',
  'async_growing_minutes',
  'quarantine_window_hours',
  'silent_critical_minutes',
  'full_warning_days',
  'full_critical_days',
  'full_projection_days',
]);

const keys = Object.keys(DEFAULT_HEALTH_THRESHOLDS) as Array<keyof HealthThresholds>;

const thresholdSchema = (k: keyof HealthThresholds) => {
  const [min, max] = HEALTH_THRESHOLD_BOUNDS[k];
  if (!FRACTIONAL_HEALTH_THRESHOLDS.has(k)) return Joi.number().integer().min(min).max(max).allow(null);
  // The shared messages speak of integers; a duration is refused in its own words.
  return Joi.number()
    .min(min)
    .max(max)
    .allow(null)
    .messages({
      'number.base': `The {{#label}} field must be a number from ${min} to ${max} (fractions allowed).`,
      'number.unsafe': `The {{#label}} field must be at most ${max}.`,
    });
};

/** A PUT's body: any subset of the thresholds (an omitted one takes its default). */
export const healthThresholdsSchema = Joi.object(Object.fromEntries(keys.map((k) => [k, thresholdSchema(k)])))
  .custom((value: Partial<HealthThresholds>, helpers) => {
    const t = withDefaults(value);
    if (t.fill_critical_pct < t.fill_warning_pct) return helpers.error('health.fill');
    if (t.full_critical_days > t.full_warning_days) return helpers.error('health.full');
    return value;
  })
  .messages({
    'health.fill': 'The fill_critical_pct field must be at least fill_warning_pct.',
    'health.full': 'The full_critical_days field must be at most full_warning_days.',
  });

/** Null or absent: the default. */
export function withDefaults(overrides: Partial<Record<keyof HealthThresholds, number | null>>): HealthThresholds {
  const t = { ...DEFAULT_HEALTH_THRESHOLDS };
  for (const k of keys) {
    const v = overrides[k];
    if (typeof v === 'number') t[k] = v;
  }
  return t;
}

/** The overrides a body sets (nulls dropped: they ask for the default). */
export function validateHealthThresholds(body: unknown): Partial<HealthThresholds> {
  const value = validate<Partial<Record<keyof HealthThresholds, number | null>>>(healthThresholdsSchema, body);
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => typeof v === 'number'),
  ) as Partial<HealthThresholds>;
}
