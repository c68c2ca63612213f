import type { RingPlan, RingPlanDevice } from '../../src/api';
import {
  planCapacity,
  planFillRows,
  planLabel,
  receivingNodes,
  replicationSecondsEstimate,
  ringSetOfPlan,
} from '../../src/lib/ring-plan';
import { reachAt } from '../../src/lib/projection';

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

describe("a computed plan's capacity and when it fills", () => {
  const existing = [0, 1, 2].map((id) =>
    device(id, { used_bytes: 3e12, parts_after: 384, projected_used_bytes: 2.25e12, projected_used_pct: 56.25 }),
  );
  const added = device(3, {
    weight: 0,
    parts: 0,
    used_bytes: 0,
    parts_after: 384,
    projected_used_bytes: 2.25e12,
    projected_used_pct: 56.25,
  });

  it('when every device has its size, then used and raw bytes before and after are the plan’s own sums', () => {
    expect(planCapacity(planWith([...existing, added]))).toEqual({
      usedBefore: 9e12,
      rawBefore: 12e12,
      usedAfter: 9e12,
      rawAfter: 16e12,
      sizedFromWeight: 0,
      usedAfterProjected: true,
      bytesPerWeight: null,
    });
  });

  it('when a drained device is in the plan, then its size leaves the capacity after and its bytes go to the others', () => {
    const drained = device(4, { weight_after: 0, used_bytes: 1e12, parts_after: 0, projected_used_bytes: 0 });
    const cap = planCapacity(planWith([...existing, drained]));
    expect(cap).toMatchObject({ rawBefore: 16e12, rawAfter: 12e12, usedBefore: 10e12, usedAfter: 6.75e12 });
  });

  it('when an added device has no size, then it is sized from its weight at the sized devices’ bytes per unit of weight, and counted', () => {
    const unsized = {
      ...added,
      weight_after: 50,
      size_bytes: null,
      projected_used_bytes: null,
      projected_used_pct: null,
    };
    expect(planCapacity(planWith([...existing, unsized]))).toEqual({
      usedBefore: 9e12,
      rawBefore: 12e12,
      // 4 TB per 100 of weight: the new device of weight 50 is 2 TB; with no projection, the bytes stay.
      usedAfter: 9e12,
      rawAfter: 14e12,
      sizedFromWeight: 1,
      usedAfterProjected: false,
      bytesPerWeight: 4e10,
    });
  });

  it('when the plan has no usage or no size at all, then it says so instead of a figure', () => {
    const noUsage = existing.map((d) => ({ ...d, used_bytes: null, size_bytes: null, projected_used_bytes: null }));
    expect(planCapacity(planWith(noUsage))).toMatch(/without the devices' usage \(--usage-from-recon\)/);
    const noSize = existing.map((d) => ({ ...d, size_bytes: null }));
    expect(planCapacity(planWith(noSize))).toMatch(/^No device of the plan has a size/);
  });

  it('when the plan’s fills grow by a day’s bytes, then full comes later after the change by the added capacity over that growth', () => {
    const cap = planCapacity(planWith([...existing, added]));
    if (typeof cap === 'string') throw new Error(cap);
    const at = Date.parse('2026-11-28T00:00:00Z');
    const before = reachAt(cap.usedBefore, cap.rawBefore, at, 1e11, 100);
    const after = reachAt(cap.usedAfter, cap.rawAfter, at, 1e11, 100);
    // 3 TB free at 0.1 TB a day: 30 days; 7 TB: 70 days.
    expect(before).toEqual({ kind: 'at', t: at + 30 * 86_400_000, bytesPerDay: 1e11 });
    expect(after).toEqual({ kind: 'at', t: at + 70 * 86_400_000, bytesPerDay: 1e11 });
    expect(reachAt(9e12, 10e12, at, 1e11, 80)).toEqual({ kind: 'already', pct: 90 });
    expect(reachAt(1, 10, at, null, 80).kind).toBe('insufficient');
    expect(reachAt(1, 10, at, 0, 80).kind).toBe('never');
  });

  it('when the plan’s devices report to the capacity page, then its ring set is the one most of them are in', () => {
    const plan = planWith([...existing, added]);
    const row = (ip: string, ringSet: string) => ({ node: `${ip}:6200`, device: 'sdb', ringSet });
    expect(
      ringSetOfPlan(plan, [row('10.0.0.1', 'gold'), row('10.0.0.2', 'gold,silver'), row('10.0.0.3', 'gold')]),
    ).toBe('gold');
    // The added device (no weight yet) does not count.
    expect(ringSetOfPlan(plan, [row('10.0.0.4', 'silver')])).toBeNull();
  });
});
