import {
  DEFAULT_HEALTH_THRESHOLDS,
  FINDING_CODES,
  FRACTIONAL_HEALTH_THRESHOLDS,
  HEALTH_THRESHOLD_BOUNDS,
  SEVERITIES,
  type HealthThresholds,
} from '@cairn/domain';
import { STRING_LOOKUPS, type FieldDef, type Lookup, type ResourceDef } from '../http/resource';

/** The resource definitions of cluster health: its filters, ordering, /schema/ and OpenAPI follow them. */

const TIME_LOOKUPS: readonly Lookup[] = ['exact', 'gt', 'gte', 'lt', 'lte'];

/** GET .../health/history/: every finding a cluster had, open and closed. */
export const healthFindingsResource: ResourceDef = {
  name: 'health_findings',
  alias: 'f',
  listMethods: ['GET'],
  detailMethods: [],
  fields: {
    id: { type: 'integer', help: 'The finding’s id.', readonly: true, column: 'id', ordering: true },
    code: {
      type: 'string',
      help: `What was found: ${FINDING_CODES.join(', ')} (docs/health.md).`,
      column: 'code',
      choices: FINDING_CODES,
      filtering: ['exact', 'in'],
      ordering: true,
    },
    severity: {
      type: 'string',
      help: 'warning or critical (the latest round’s, while open).',
      column: 'severity',
      choices: SEVERITIES,
      filtering: ['exact', 'in'],
      ordering: true,
    },
    node: {
      type: 'string',
      help: 'The storage node (ip:port), or null for a ring set.',
      nullable: true,
      column: 'node',
      filtering: STRING_LOOKUPS,
      ordering: true,
    },
    device: {
      type: 'string',
      help: 'The device, or null for a node or a ring set.',
      nullable: true,
      column: 'device',
      filtering: STRING_LOOKUPS,
    },
    ring_set: { type: 'string', help: 'The ring set of a ring_set_filling finding, else null.', nullable: true },
    since: { type: 'datetime', help: 'Since when the condition holds, as far as recon tells.' },
    sentence: { type: 'string', help: 'What is wrong and what to do about it (the latest round’s, while open).' },
    open: { type: 'boolean', help: 'Whether the finding is still open (filter: ?open=true or ?open=false).' },
    opened_at: {
      type: 'datetime',
      help: 'The collection time of the round that first found it.',
      column: 'opened_at',
      filtering: TIME_LOOKUPS,
      ordering: true,
    },
    last_seen_at: { type: 'datetime', help: 'The collection time of the latest round that found it.' },
    closed_at: {
      type: 'datetime',
      help: 'The collection time of the first round that no longer found it; null while open.',
      nullable: true,
      column: 'closed_at',
      filtering: [...TIME_LOOKUPS, 'isnull'],
      ordering: true,
    },
  },
};

const THRESHOLD_HELP: Record<keyof HealthThresholds, string> = {
  fill_warning_pct: 'A mounted device at least this % full is a device_full warning.',
  fill_critical_pct: 'A mounted device at least this % full is a critical device_full.',
  drive_audit_errors_max: 'More swift-drive-audit errors than this on a node is a drive_errors finding.',
  replication_max_age_hours:
    'A replicator with no completed pass for longer than this (hours) is a <type>_replication_stale finding.',
  async_pending_max: 'More async pendings than this on a node is an async_pending_high finding.',
  async_growing_minutes:
    'Async pendings that grew at every round for this long (minutes) are an async_pending_growing finding.',
  quarantine_window_hours: 'A quarantine count that rose within this long (hours) is a quarantined_rising finding.',
  clock_skew_ms: 'A node clock off by more than this (ms), collection time allowed for, is a clock_skew finding.',
  silent_critical_minutes: 'A node silent for this long (minutes) is a critical node_silent (a warning before).',
  full_warning_days: 'A ring set projected full within this many days is a ring_set_filling warning.',
  full_critical_days: 'A ring set projected full within this many days is a critical ring_set_filling.',
  full_projection_days: 'How many days of capacity history the time-to-full projection reads.',
};

/** GET/PUT .../health/thresholds/: a PUT sets any subset; omitted or null takes the default. */
export const healthThresholdsResource: ResourceDef = {
  name: 'health_thresholds',
  alias: 'h',
  listMethods: ['GET', 'PUT'],
  detailMethods: [],
  fields: Object.fromEntries(
    (Object.keys(DEFAULT_HEALTH_THRESHOLDS) as Array<keyof HealthThresholds>).map((k): [string, FieldDef] => [
      k,
      FRACTIONAL_HEALTH_THRESHOLDS.has(k)
        ? {
            type: 'float',
            help: `${THRESHOLD_HELP[k]} From ${HEALTH_THRESHOLD_BOUNDS[k][0]} to ${HEALTH_THRESHOLD_BOUNDS[k][1]}, fractions allowed.`,
            default: DEFAULT_HEALTH_THRESHOLDS[k],
            nullable: true,
          }
        : {
            type: 'integer',
            help: `${THRESHOLD_HELP[k]} From ${HEALTH_THRESHOLD_BOUNDS[k][0]} to ${HEALTH_THRESHOLD_BOUNDS[k][1]}.`,
            default: DEFAULT_HEALTH_THRESHOLDS[k],
            nullable: true,
            max: BigInt(HEALTH_THRESHOLD_BOUNDS[k][1]),
          },
    ]),
  ),
};
