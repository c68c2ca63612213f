// A plan's shape, with no imports: the console reads plans through the API and imports these types
// from here ('@cairn/rings/plan-types'), so its type check never reaches the Node code of the rings.
/** A device of a ring: where it is, in which region and zone, of what weight. */
export interface RingDeviceJson {
  id: number;
  region: number;
  zone: number;
  ip: string;
  port: number;
  device: string;
  weight: number;
}

/** One device of a plan: where it is, its weight and partitions now and after the whole change. */
export interface PlanDevice extends RingDeviceJson {
  weight_after: number;
  /** Partition replicas assigned to the device (Swift's `parts`). */
  parts: number;
  parts_after: number;
  /** From the device's recon disk usage; null when no usage was given for it. */
  used_bytes: number | null;
  /** The device's size from recon (what projected_used_pct divides by); null without usage. */
  size_bytes: number | null;
  projected_used_bytes: number | null;
  projected_used_pct: number | null;
}

export interface PlanStep {
  step: number;
  /** How far each changed weight has gone from where it was toward its target (1 = there). */
  fraction: number;
  parts_moved: number;
  parts_moved_pct: number;
  replicas_moved: number;
  balance: number;
  dispersion: number;
  /** Devices this step adds, with the ids Swift's add_dev gives them and the step's weight. */
  add: Array<Record<string, unknown> & { id: number; weight: number }>;
  weights: Array<{ id: number; weight: number }>;
  remove: number[];
  /** Partition replicas per device id after the step, as Swift computed them. */
  parts_after: Record<string, number>;
}

/**
 * The change a plan steps toward, as its wrapper recorded it: what apply needs to compute each step
 * after the first (weights as [device id, weight]).
 */
export interface PlanChange {
  /** The weights the changed devices had when the plan was made. */
  start: Array<[number, number]>;
  targets: Array<[number, number]>;
  /** Devices the change adds, at their target weight, with the ids add_dev gives them. */
  add: Array<Record<string, unknown> & { id: number; weight: number }>;
  remove: number[];
}

export interface AppliedStep {
  step: number;
  builder_md5: string;
  ring_md5: string;
  applied_at: string;
}

export interface Plan {
  ring: string;
  seed: number;
  swift_version: string;
  /** When the plan was computed (ISO 8601 UTC); absent from plan files written before it was kept. */
  computed_at?: string;
  /** md5 of the .builder the plan was made from. */
  builder_md5: string;
  /** md5 of the .ring.gz installed when the plan was made (null: the ring was never written). */
  ring_md5: string | null;
  part_power: number;
  replicas: number;
  parts_total: number;
  parts_moved: number;
  parts_moved_pct: number;
  replicas_moved: number;
  bytes_to_move: number | null;
  balance: number;
  dispersion: number;
  /** The builder's balance and dispersion before the change. */
  balance_before: number;
  dispersion_before: number | null;
  overload: number;
  required_overload: number | null;
  min_part_hours: number;
  min_part_seconds_left: number;
  max_move_pct: number;
  /** Where used_bytes came from: 'recon' (/recon/diskusage) or null when no usage was given. */
  usage_source: 'recon' | null;
  notes: string[];
  devices: PlanDevice[];
  /**
   * The steps computed so far: the plan computes step 1; apply computes each next one right after it
   * writes the one before, so a step is here, with Swift's figures, before it is applied.
   */
  steps: PlanStep[];
  /** How many steps there would be if each took as large a share of the change as step 1: an estimate. */
  steps_estimated: number;
  /** Absent from plan files that hold every step already. */
  change?: PlanChange;
  applied: AppliedStep[];
}
