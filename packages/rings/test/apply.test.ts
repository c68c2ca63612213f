import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { applyNextStep, makePlan, readPlan, type StepSafetyInput } from '../src';
import { buildRing, builderDevices, copyDir, removeDir, srb } from './helpers/swift-ring';

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

  it('when each step is applied in turn, then Swift writes the planned builder and ring, keeps the previous ones in backups/ and the last reaches the targets', async () => {
    const plan = await readPlan(planFile);
    expect(plan.steps.length).toBeGreaterThan(1);
    for (const step of plan.steps) {
      const previous = await md5(join(dir, 'object.builder'));
      const outcome = await applyNextStep({ planFile, swiftDir: dir, skipReconChecks: true });
      expect(outcome).toMatchObject({ status: 'applied', step: step.step, parts_moved: step.parts_moved });
      const kept = (await readdir(join(dir, 'backups'))).filter((f) => f.endsWith('.object.builder'));
      const keptMd5s = await Promise.all(kept.map((f) => md5(join(dir, 'backups', f))));
      expect(keptMd5s).toContain(previous);
    }
    // apply itself refuses a result other than the planned one; this reads the written builder back.
    const devices = await builderDevices(dir);
    expect(Object.fromEntries(devices.map((d) => [String(d.id), d.parts]))).toEqual(plan.steps.at(-1)!.parts_after);
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
      const [first, second] = await Promise.allSettled([run(), run()]);
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
