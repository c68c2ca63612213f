import Joi from 'joi';
import { RING_NAME } from './rings';

/**
 * A ring plan as `cairn rings plan` computes it with Swift's ring builder (packages/rings,
 * docs/rings.md), sent to the management API to be kept with its cluster. The fields the API and
 * the console read are checked one by one; the rest of the plan (the change apply steps toward,
 * the steps applied, later additions) is kept as given, within the body limit.
 *
 * Bounded: a plan of 10,000 devices and 1,000 computed steps fits; the body limit (RING_PLAN_BODY_LIMIT)
 * bounds the rest.
 */
export const RING_PLAN_MAX_DEVICES = 10_000;
export const RING_PLAN_MAX_STEPS = 1_000;
/** The largest JSON body of a plan the API reads: a plan of 10,000 devices is about 3 MB. */
export const RING_PLAN_BODY_LIMIT = '16mb';

const count = Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER);
const real = Joi.number();
const bytes = count.allow(null);

const planDevice = Joi.object({
  id: count.required(),
  region: count.required(),
  zone: count.required(),
  ip: Joi.string().max(255).required(),
  port: Joi.number().integer().min(0).max(65535).required(),
  device: Joi.string().max(255).required(),
  weight: real.min(0).required(),
  weight_after: real.min(0).required(),
  parts: count.required(),
  parts_after: count.required(),
  used_bytes: bytes.required(),
  // Absent from plans computed before the size was kept.
  size_bytes: bytes,
  projected_used_bytes: bytes.required(),
  projected_used_pct: real.allow(null).required(),
}).unknown(true);

const planStep = Joi.object({
  step: Joi.number().integer().min(1).max(RING_PLAN_MAX_STEPS).required(),
  fraction: real.min(0).max(1).required(),
  parts_moved: count.required(),
  parts_moved_pct: real.min(0).max(100).required(),
  replicas_moved: count.required(),
  balance: real.required(),
  dispersion: real.required(),
}).unknown(true);

export const ringPlanSchema = Joi.object({
  ring: Joi.string()
    .pattern(RING_NAME)
    .required()
    .messages({ 'string.pattern.base': "{{#label}} must be 'account', 'container', 'object' or 'object-<n>'." }),
  seed: count.required(),
  swift_version: Joi.string().max(64).required(),
  computed_at: Joi.string().isoDate().max(40),
  builder_md5: Joi.string()
    .pattern(/^[0-9a-f]{32}$/)
    .required(),
  part_power: Joi.number().integer().min(0).max(32).required(),
  replicas: real.greater(0).max(100).required(),
  parts_total: count.required(),
  parts_moved: count.required(),
  parts_moved_pct: real.min(0).max(100).required(),
  replicas_moved: count.required(),
  bytes_to_move: bytes.required(),
  balance: real.required(),
  dispersion: real.required(),
  min_part_hours: count.required(),
  min_part_seconds_left: count.required(),
  max_move_pct: real.greater(0).max(100).required(),
  notes: Joi.array().items(Joi.string().max(2000)).max(100).required(),
  devices: Joi.array().items(planDevice).max(RING_PLAN_MAX_DEVICES).required(),
  steps: Joi.array().items(planStep).min(1).max(RING_PLAN_MAX_STEPS).required(),
  steps_estimated: count.required(),
}).unknown(true);

/** What `POST /api/v1/clusters/<id>/ring_plans/` takes: the plan, and the name of its file when saved. */
export const ringPlanCreateSchema = Joi.object({
  name: Joi.string()
    .pattern(/^[\x21-\x7e]{1,255}$/)
    .messages({ 'string.pattern.base': '{{#label}} must be 1 to 255 printable characters without spaces.' }),
  plan: ringPlanSchema.required(),
});

export interface RingPlanCreateInput {
  name?: string;
  plan: Record<string, unknown> & {
    ring: string;
    seed: number;
    swift_version: string;
    computed_at?: string;
    parts_total: number;
    parts_moved: number;
    parts_moved_pct: number;
    replicas_moved: number;
    bytes_to_move: number | null;
    devices: unknown[];
    steps: unknown[];
    steps_estimated: number;
  };
}
