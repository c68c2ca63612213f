import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makePlan } from '@cairn/rings';
import { buildRing, builderDevices, copyDir, reassigned, removeDir, srb } from './swift-ring';

describe('rings plan, against swift-ring-builder', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await buildRing();
  });
  afterAll(() => removeDir(dir));

  it('when a device is added and a weight set with a seed, then parts_moved and every parts_after are what swift-ring-builder rebalance --seed gives', async () => {
    const plan = await makePlan({
      swiftDir: dir,
      ring: 'object',
      add: ['r1z1-10.0.0.9:6200/sdf:100'],
      setWeight: ['d3:50'],
      seed: 7,
    });
    const copy = await copyDir(dir);
    try {
      await srb(copy, 'object.builder', 'add', 'r1z1-10.0.0.9:6200/sdf', '100');
      await srb(copy, 'object.builder', 'set_weight', 'd3', '50', '--yes');
      const moved = reassigned(await srb(copy, 'object.builder', 'rebalance', '--seed', '7'));
      expect(plan.parts_moved).toBe(moved);
      const after = await builderDevices(copy);
      expect(plan.devices.map((d) => [d.id, d.weight_after, d.parts_after])).toEqual(
        after.map((d) => [d.id, d.weight, d.parts]),
      );
    } finally {
      await removeDir(copy);
    }
    expect(plan).toMatchObject({ ring: 'object', seed: 7, swift_version: '2.30.1', parts_total: 1024 });
    expect(plan.devices.find((d) => d.id === 6)).toMatchObject({
      device: 'sdf',
      weight: 0,
      parts: 0,
      used_bytes: null,
    });
    expect(plan.bytes_to_move).toBeNull();
    expect(plan.notes.join(' ')).toMatch(/No device usage was given/);
  });

  it('when the change moves more than --max-move-pct, then step 1 is what swift-ring-builder does with its weights, within that share, and the plan records the targets', async () => {
    const plan = await makePlan({
      swiftDir: dir,
      ring: 'object',
      add: ['r1z2-10.0.0.7:6200/sdc:100'],
      setWeight: ['d3:0'],
      remove: ['d5'],
      seed: 3,
    });
    expect(plan.parts_moved_pct).toBeGreaterThan(5);
    expect(plan.steps).toHaveLength(1);
    const step = plan.steps[0]!;
    expect(step.parts_moved_pct).toBeLessThanOrEqual(5);
    expect(step.fraction).toBeLessThan(1);
    expect(step.remove).toEqual([]);
    expect(plan.steps_estimated).toBeGreaterThan(1);
    expect(plan.change).toMatchObject({
      targets: expect.arrayContaining([
        [3, 0],
        [5, 0],
        [6, 100],
      ]),
      remove: [5],
    });
    const copy = await copyDir(dir);
    try {
      const added = step.add[0]!;
      expect(added).toMatchObject({ id: 6, device: 'sdc' });
      await srb(copy, 'object.builder', 'add', 'r1z2-10.0.0.7:6200/sdc', String(added.weight));
      await srb(
        copy,
        'object.builder',
        'set_weight',
        ...step.weights.flatMap((w) => [`d${w.id}`, String(w.weight)]),
        '--yes',
      );
      expect(reassigned(await srb(copy, 'object.builder', 'rebalance', '--seed', '3'))).toBe(step.parts_moved);
      const after = await builderDevices(copy);
      expect(Object.fromEntries(after.map((d) => [String(d.id), d.parts]))).toEqual(step.parts_after);
    } finally {
      await removeDir(copy);
    }
  });

  it('when min_part_hours has not passed, then the plan shows the wait and the result after it', async () => {
    // Set after the rebalance, so the hour counts from that rebalance and has not passed.
    const waiting = await copyDir(dir);
    try {
      await srb(waiting, 'object.builder', 'set_min_part_hours', '1');
      const plan = await makePlan({ swiftDir: waiting, ring: 'object', setWeight: ['d0:50'], seed: 5 });
      expect(plan.min_part_seconds_left).toBeGreaterThan(3000);
      expect(plan.notes[0]).toMatch(/min_part_hours \(1 h\) has not passed/);
      await srb(waiting, 'object.builder', 'pretend_min_part_hours_passed');
      await srb(waiting, 'object.builder', 'set_weight', 'd0', '50', '--yes');
      expect(plan.parts_moved).toBe(reassigned(await srb(waiting, 'object.builder', 'rebalance', '--seed', '5')));
    } finally {
      await removeDir(waiting);
    }
  });

  describe('bad input gets a sentence', () => {
    const refused = (options: Partial<Parameters<typeof makePlan>[0]>, sentence: RegExp) =>
      expect(makePlan({ swiftDir: dir, ring: 'object', setWeight: ['d0:100'], ...options })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
        message: expect.stringMatching(sentence),
      });

    it('when a device is unknown, then it says no device matches', () =>
      refused({ setWeight: ['d99:10'] }, /--set-weight 'd99': no device in the builder matches it/));
    it('when a weight is below 0, then it says a weight must be 0 or more', () =>
      refused({ setWeight: ['d1:-1'] }, /a weight must be 0 or more/));
    it('when an added device is already in the ring, then it names the device', () =>
      refused({ add: ['r1z1-10.0.0.1:6200/sdb:10'] }, /device 0 already uses 10.0.0.1:6200\/sdb/));
    it('when the builder is missing, then it says it does not exist', () =>
      refused({ ring: 'object-1' }, /object-1\.builder does not exist/));
    it('when the Python has no Swift, then it says to install swift or pass --swift-python', async () => {
      const noSwift = join(dir, 'python-without-swift');
      await writeFile(noSwift, '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n', { mode: 0o755 });
      await refused(
        { swiftPython: noSwift },
        new RegExp(`^Swift's Python library was not found by ${noSwift}; install swift or pass --swift-python\\.$`),
      );
    });

    it('when the builder file is not a builder, then it says so', async () => {
      const bad = await copyDir(dir);
      try {
        await writeFile(join(bad, 'object.builder'), 'not a pickle');
        await expect(makePlan({ swiftDir: bad, ring: 'object', setWeight: ['d0:1'] })).rejects.toThrow(
          /object\.builder is not a Swift ring builder file/,
        );
      } finally {
        await removeDir(bad);
      }
    });

    it('when the ring.gz does not match the builder, then it refuses as swift-ring-builder calls it obsolete', async () => {
      const other = await copyDir(dir);
      try {
        // A builder changed after the ring was written: the ring on disk is not the builder's.
        await srb(other, 'object.builder', 'set_weight', 'd0', '50', '--yes');
        await expect(makePlan({ swiftDir: other, ring: 'object', setWeight: ['d1:1'] })).rejects.toThrow(
          /object\.ring\.gz does not match .*object\.builder \(swift-ring-builder calls it obsolete\)/,
        );
        expect(await srb(other, 'object.builder')).toMatch(/is obsolete/);
      } finally {
        await removeDir(other);
      }
    });
  });
});
