import type { RingPlan, RingPlanDevice } from '../../src/api';
import { planFillRows, planLabel, receivingNodes, replicationSecondsEstimate } from '../../src/lib/ring-plan';

const device = (id: number, over: Partial<RingPlanDevice> = {}): RingPlanDevice => ({
  id,
  region: 1,
  zone: 1 + (id % 3),
  ip: `10.0.0.${id + 1}`,
  port: 6200,
  device: 'sdb',
  weight: 100,
  weight_after: 100,
  parts: 512,
  parts_after: 512,
  used_bytes: 2e12,
  size_bytes: 4e12,
  projected_used_bytes: 2e12,
  projected_used_pct: 50,
  ...over,
});

function planWith(devices: RingPlanDevice[], over: Partial<RingPlan> = {}): RingPlan {
  return {
    id: '3',
    name: 'grow-z1',
    ring: 'object',
    seed: 7,
    swift_version: '2.30.1',
    computed_at: '2026-11-28T10:05:09.123Z',
    parts_total: 1024,
    parts_moved: 384,
    parts_moved_pct: 37.5,
    replicas_moved: 384,
    bytes_to_move: 3e12,
    device_count: devices.length,
    steps_computed: 1,
    steps_estimated: 8,
    created_at: '2026-11-28T10:06:00.000Z',
    created_by: 'admin',
    resource_uri: '/api/v1/clusters/1/ring_plans/3/',
    plan: {
      replicas: 3,
      balance: 0,
      balance_before: 0,
      min_part_hours: 1,
      max_move_pct: 5,
      notes: [],
      devices,
      steps: [],
    },
    ...over,
  };
}

describe("a computed ring plan's figures in the What-if panel", () => {
  const plan = planWith([
    device(0, { parts_after: 384, projected_used_pct: 37.5 }),
    device(1, { projected_used_pct: 90 }),
    device(2, { weight: 0, parts: 0, used_bytes: 0, parts_after: 128, projected_used_pct: 12.5 }),
    device(3, { ip: '10.0.0.3', weight: 0, parts: 0, used_bytes: 0, parts_after: 256, projected_used_pct: 25 }),
  ]);

  it('when rows are listed, then the devices the change touches come first, today is used over size, and added devices are not "existing"', () => {
    const rows = planFillRows(plan, 3);
    expect(rows.map((r) => [r.id, r.existing, r.pct, r.pctAfter])).toEqual([
      [0, true, 50, 37.5],
      [3, false, 0, 25],
      [2, false, 0, 12.5],
    ]);
  });

  it('when a device has no size (an older plan) or no usage, then its fill today is unknown', () => {
    const [row] = planFillRows(planWith([device(0, { size_bytes: undefined })]), 1);
    expect(row!.pct).toBeNull();
    const [none] = planFillRows(planWith([device(0, { used_bytes: null, size_bytes: null })]), 1);
    expect(none!.pct).toBeNull();
  });

  it('when the replication time is estimated, then the bytes are shared by the distinct receiving nodes; without bytes, then unknown', () => {
    // Devices 2 and 3 receive partitions, both on 10.0.0.3:6200: one node.
    expect(receivingNodes(plan)).toBe(1);
    const assumed = (bytesPerSecondPerNode: number) => ({ kind: 'assumed' as const, bytesPerSecondPerNode });
    expect(replicationSecondsEstimate(plan, assumed(1e9))).toBe(3000);
    expect(replicationSecondsEstimate(planWith(plan.plan.devices, { bytes_to_move: null }), assumed(1e9))).toBeNull();
    expect(replicationSecondsEstimate(plan, assumed(0))).toBeNull();
  });

  it('when the rate is measured, then the partition replicas move at it, and each estimated step takes a pass at least', () => {
    const measured = (partitionsPerSecondPerNode: number, longestPassSeconds: number) => ({
      kind: 'measured' as const,
      partitionsPerSecondPerNode,
      passes: 3,
      from: 0,
      to: 0,
      longestPassSeconds,
    });
    // 384 partition replicas at 2 a second on the one receiving node: 192 s; 8 steps of a 10 s pass: 80 s.
    expect(replicationSecondsEstimate(plan, measured(2, 10))).toBe(192);
    // 8 steps of a 60 s pass: 480 s, longer than moving the partitions.
    expect(replicationSecondsEstimate(plan, measured(2, 60))).toBe(480);
    // Bytes are not needed at a measured rate.
    expect(replicationSecondsEstimate(planWith(plan.plan.devices, { bytes_to_move: null }), measured(2, 10))).toBe(192);
  });

  it('when plans are offered in the list, then each says its name, ring, seed and when it was computed, in UTC', () => {
    expect(planLabel(plan)).toBe('grow-z1 — object, seed 7, 2026-11-28 10:05 UTC');
    expect(planLabel(planWith([], { name: null, computed_at: null }))).toBe(
      'plan 3 — object, seed 7, 2026-11-28 10:06 UTC',
    );
  });
});
