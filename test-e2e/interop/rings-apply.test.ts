import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { applyNextStep, makePlan, readPlan, type StepSafetyInput } from '@cairn/rings';
import { buildRing, builderDevices, copyDir, removeDir, srb } from './swift-ring';

const md5 = async (path: string) =>
  createHash('md5')
    .update(await readFile(path))
    .digest('hex');

describe('rings apply', () => {
  let dir: string;
  let planFile: string;
  beforeAll(async () => {
    dir = await buildRing();
    planFile = join(dir, 'plan.json');
    const plan = await makePlan({ swiftDir: dir, ring: 'object', setWeight: ['d3:60'], seed: 11, maxMovePct: 20 });
    await writeFile(planFile, JSON.stringify(plan));
  });
  afterAll(() => removeDir(dir));

  it('when the recon checker says unsafe, then nothing is written and the failed check is the reason', async () => {
    const before = await md5(join(dir, 'object.builder'));
    const seen: StepSafetyInput[] = [];
    const outcome = await applyNextStep({
      planFile,
      swiftDir: dir,
      checkStepSafety: async (input) => {
        seen.push(input);
        return {
          safe: false,
          checks: [
            { name: 'replication', ok: false, detail: 'No replication pass on 10.0.0.2:6200 since the ring went out.' },
          ],
        };
      },
    });
    expect(outcome).toMatchObject({
      status: 'refused',
      step: 1,
      reason: 'No replication pass on 10.0.0.2:6200 since the ring went out.',
    });
    expect(seen[0]).toMatchObject({
      ring: 'object',
      expectedMd5: await md5(join(dir, 'object.ring.gz')),
      fillLimitPct: 90,
    });
    expect(seen[0]!.nodes).toHaveLength(6);
    expect(await md5(join(dir, 'object.builder'))).toBe(before);
  });

  it('when no recon checker is wired and the checks are not skipped, then it refuses and names --skip-recon-checks', async () => {
    const outcome = await applyNextStep({ planFile, swiftDir: dir });
    expect(outcome).toMatchObject({ status: 'refused', reason: expect.stringMatching(/--skip-recon-checks/) });
  });

  it('when each step is applied in turn, then each is in the plan file before it runs, Swift writes exactly it, the previous builder is kept in backups/ and the last reaches the targets', async () => {
    const planned = await readPlan(planFile);
    expect(planned.steps).toHaveLength(1);
    expect(planned.steps[0]!.fraction).toBeLessThan(1);
    let shown = planned.steps[0]!;
    for (;;) {
      const previous = await md5(join(dir, 'object.builder'));
      const outcome = await applyNextStep({ planFile, swiftDir: dir, skipReconChecks: true });
      // apply refuses a result other than the step the plan file showed; parts_moved is its figure.
      expect(outcome).toMatchObject({ status: 'applied', step: shown.step, parts_moved: shown.parts_moved });
      const kept = (await readdir(join(dir, 'backups'))).filter((f) => f.endsWith('.object.builder'));
      expect(await Promise.all(kept.map((f) => md5(join(dir, 'backups', f))))).toContain(previous);
      const plan = await readPlan(planFile);
      if (shown.fraction >= 1) {
        expect(outcome).toMatchObject({ next: null });
        expect(plan.steps).toHaveLength(shown.step);
        break;
      }
      const next = plan.steps[shown.step]!;
      expect(next).toMatchObject({ step: shown.step + 1 });
      expect(next.fraction).toBeGreaterThan(shown.fraction);
      expect(next.parts_moved_pct).toBeLessThanOrEqual(20);
      expect(outcome).toMatchObject({ next: { step: next.step, parts_moved: next.parts_moved } });
      shown = next;
    }
    expect(shown.step).toBeGreaterThan(1);
    // This reads the written builder back.
    const devices = await builderDevices(dir);
    expect(Object.fromEntries(devices.map((d) => [String(d.id), d.parts]))).toEqual(shown.parts_after);
    expect(devices.find((d) => d.id === 3)!.weight).toBe(60);
    expect(await srb(dir, 'object.builder')).toMatch(/object\.ring\.gz is up-to-date/);
    expect(await applyNextStep({ planFile, swiftDir: dir, skipReconChecks: true })).toMatchObject({ status: 'done' });
  });

  it('when the builder changed since the plan, not by its own step, then apply refuses and says re-plan', async () => {
    const other = await copyDir(dir);
    try {
      const plan = await makePlan({ swiftDir: other, ring: 'object', setWeight: ['d0:90'], seed: 1 });
      await writeFile(join(other, 'plan.json'), JSON.stringify(plan));
      await srb(other, 'object.builder', 'set_weight', 'd1', '99', '--yes');
      await srb(other, 'object.builder', 'write_ring');
      const outcome = await applyNextStep({
        planFile: join(other, 'plan.json'),
        swiftDir: other,
        skipReconChecks: true,
      });
      expect(outcome).toMatchObject({
        status: 'refused',
        reason: expect.stringMatching(/has changed since the plan was made .*; re-plan\.$/),
      });
    } finally {
      await removeDir(other);
    }
  });

  it('when min_part_hours has not passed, then apply refuses with the min_part_hours check', async () => {
    const waiting = await copyDir(dir);
    try {
      const plan = await makePlan({ swiftDir: waiting, ring: 'object', setWeight: ['d0:90'], seed: 1 });
      await srb(waiting, 'object.builder', 'set_min_part_hours', '1');
      plan.builder_md5 = await md5(join(waiting, 'object.builder'));
      await writeFile(join(waiting, 'plan.json'), JSON.stringify(plan));
      const outcome = await applyNextStep({
        planFile: join(waiting, 'plan.json'),
        swiftDir: waiting,
        skipReconChecks: true,
      });
      expect(outcome).toMatchObject({
        status: 'refused',
        checks: [
          {
            name: 'min_part_hours',
            ok: false,
            detail: expect.stringMatching(/has not passed since the last rebalance: \d+ s left/),
          },
        ],
      });
    } finally {
      await removeDir(waiting);
    }
  });

  it('when two applies run at once, then the second is refused while the first holds the lock', async () => {
    const twice = await copyDir(dir);
    try {
      const plan = await makePlan({ swiftDir: twice, ring: 'object', setWeight: ['d0:90'], seed: 1 });
      await writeFile(join(twice, 'plan.json'), JSON.stringify(plan));
      const run = () => applyNextStep({ planFile: join(twice, 'plan.json'), swiftDir: twice, skipReconChecks: true });
      // Either may take the lock first: the one that applied, then the one refused.
      const [first, second] = (await Promise.allSettled([run(), run()])).sort((a, b) =>
        a.status === b.status ? 0 : a.status === 'fulfilled' ? -1 : 1,
      );
      expect(first).toMatchObject({ status: 'fulfilled', value: { status: 'applied', step: 1 } });
      expect(second).toMatchObject({
        status: 'rejected',
        reason: {
          code: 'IN_USE',
          message: expect.stringMatching(/Another 'cairn rings apply' holds .*object\.builder\.cairn-apply\.lock/),
        },
      });
    } finally {
      await removeDir(twice);
    }
  });
});
