import { errors } from '@cairn/domain';
import { DEFAULT_MAX_MOVE_PCT } from './defaults';
import { DEFAULT_SWIFT_PYTHON, runWrapper } from './python';
import { ringFiles } from './ring-files';
import type { DeviceUsage, Plan } from './types';
import { withUsage, type MovedDevice } from './usage';
import { fromWrapperStep, type WrapperStep } from './wrapper-steps';

export interface PlanOptions {
  swiftDir: string;
  ring: string;
  /** swift-ring-builder add syntax with the weight after the last colon: `r1z5-10.0.0.9:6200/sdf:4000`. */
  add?: string[];
  /** `<search value>:<weight>`, e.g. `d3:0`. */
  setWeight?: string[];
  /** Search values, e.g. `d7`. */
  remove?: string[];
  /** The rebalance seed; random when not given (the plan records it). */
  seed?: number;
  /** Most partitions one step may move, in percent of the ring's partitions. */
  maxMovePct?: number;
  swiftPython?: string;
  /** Disk usage of the ring's devices (recon's /recon/diskusage), keyed by usageKey; none: nulls. */
  usageOf?: (nodes: Array<{ ip: string; port: number }>) => Promise<Map<string, DeviceUsage>>;
}

interface WrapperPlan extends Omit<
  Plan,
  'ring' | 'devices' | 'steps' | 'applied' | 'bytes_to_move' | 'usage_source' | 'notes' | 'max_move_pct'
> {
  devices: MovedDevice[];
  parts_after: Record<string, number>;
  steps: WrapperStep[];
}

export { DEFAULT_MAX_MOVE_PCT };

/**
 * A plan of the change, computed by Swift's RingBuilder on a copy of the builder; nothing is written.
 * It holds the whole change done at once and the first step; apply computes each later step.
 */
export async function makePlan(options: PlanOptions): Promise<Plan> {
  const files = ringFiles(options.swiftDir, options.ring);
  const maxMovePct = options.maxMovePct ?? DEFAULT_MAX_MOVE_PCT;
  if (!(maxMovePct > 0 && maxMovePct <= 100))
    throw errors.invalidInput('--max-move-pct must be more than 0 and at most 100.');
  if (options.seed !== undefined && !(Number.isSafeInteger(options.seed) && options.seed >= 0))
    throw errors.invalidInput('--seed must be a whole number, 0 or more.');
  const changes = [options.add, options.setWeight, options.remove].reduce((n, l) => n + (l?.length ?? 0), 0);
  if (changes === 0) throw errors.invalidInput('Nothing to plan: give at least one --add, --set-weight or --remove.');
  const raw = await runWrapper<WrapperPlan>(options.swiftPython ?? DEFAULT_SWIFT_PYTHON, {
    mode: 'plan',
    builder: files.builder,
    ring_file: files.ringFile,
    seed: options.seed ?? null,
    add: options.add ?? [],
    set_weight: options.setWeight ?? [],
    remove: options.remove ?? [],
    max_move_pct: maxMovePct,
  });
  const nodes = [...new Map(raw.devices.map((d) => [`${d.ip}:${d.port}`, { ip: d.ip, port: d.port }])).values()];
  const usage = options.usageOf ? await options.usageOf(nodes) : undefined;
  const { devices, bytesToMove, notes } = withUsage(raw.devices, usage);
  if (raw.min_part_seconds_left > 0)
    notes.unshift(
      `min_part_hours (${raw.min_part_hours} h) has not passed since the last rebalance: ${raw.min_part_seconds_left} s left. The figures are what the change does once it has.`,
    );
  // parts_after per device id is in devices[] already.
  const { devices: _d, steps, parts_after: _p, ...numbers } = raw;
  return {
    ring: options.ring,
    ...numbers,
    computed_at: new Date().toISOString(),
    bytes_to_move: bytesToMove,
    max_move_pct: maxMovePct,
    usage_source: usage ? 'recon' : null,
    notes,
    devices,
    steps: steps.map(fromWrapperStep),
    applied: [],
  };
}
