import { readFile, stat } from 'node:fs/promises';
import { errors } from '@cairn/domain';
import { writeFileAtomic, withLockFile } from './files';
import { DEFAULT_SWIFT_PYTHON, runWrapper } from './python';
import { ringFiles } from './ring-files';
import type { CheckStepSafety, Plan, SafetyCheck } from './types';
import { fromWrapperStep, toWrapperStep, type WrapperStep } from './wrapper-steps';

export interface ApplyOptions {
  planFile: string;
  swiftDir: string;
  swiftPython?: string;
  /** The recon safety verdict (ring md5 on every node, replication since the ring went out, fill, mounted). */
  checkStepSafety?: CheckStepSafety;
  /** Apply without the recon checks (min_part_hours and the plan's freshness are still checked). */
  skipReconChecks?: boolean;
  fillLimitPct?: number;
  reconTimeoutMs?: number;
}

export type ApplyOutcome =
  | {
      status: 'applied';
      step: number;
      steps: number;
      checks: SafetyCheck[];
      parts_moved: number;
      builder_md5: string;
      ring_md5: string;
      /** The step after this one, computed from the builder just written and saved in the plan; null: the last. */
      next: { step: number; parts_moved: number; parts_moved_pct: number } | null;
    }
  | { status: 'refused'; step: number; steps: number; checks: SafetyCheck[]; reason: string }
  | { status: 'done'; steps: number; checks: SafetyCheck[] };

interface Inspection {
  builder_md5: string;
  ring_md5: string | null;
  min_part_hours: number;
  min_part_seconds_left: number;
  nodes: Array<{ ip: string; port: number }>;
}

export async function readPlan(path: string): Promise<Plan> {
  let plan: Plan;
  try {
    plan = JSON.parse(await readFile(path, 'utf8')) as Plan;
  } catch (e) {
    throw errors.invalidInput(`${path} cannot be read as a plan: ${(e as Error).message}`);
  }
  const ok =
    typeof plan === 'object' &&
    plan !== null &&
    typeof plan.ring === 'string' &&
    Number.isSafeInteger(plan.seed) &&
    typeof plan.builder_md5 === 'string' &&
    Array.isArray(plan.steps) &&
    plan.steps.length > 0 &&
    Array.isArray(plan.applied);
  if (!ok) throw errors.invalidInput(`${path} is not a plan written by 'cairn rings plan --save'.`);
  return plan;
}

/**
 * Carries out the plan's next step when it is safe, else says why. Safe means: the builder is the
 * one the plan (or its own previous step) left, min_part_hours has passed, and the recon checks
 * pass. Swift then rebalances with the plan's seed; the wrapper writes the builder and ring only
 * when the result is the planned one, and the plan file records the step.
 */
export async function applyNextStep(options: ApplyOptions): Promise<ApplyOutcome> {
  const plan = await readPlan(options.planFile);
  const files = ringFiles(options.swiftDir, plan.ring);
  const python = options.swiftPython ?? DEFAULT_SWIFT_PYTHON;
  const steps = plan.steps.length;
  return withLockFile(`${files.builder}.cairn-apply.lock`, async () => {
    const now = await runWrapper<Inspection>(python, {
      mode: 'inspect',
      builder: files.builder,
      ring_file: files.ringFile,
    });
    const last = plan.applied[plan.applied.length - 1];
    if (!last && now.builder_md5 !== plan.builder_md5 && plan.steps.length > 0)
      return refused(
        1,
        steps,
        [],
        `${files.builder} has changed since the plan was made (md5 ${now.builder_md5}, the plan was made from ${plan.builder_md5}); re-plan.`,
      );
    if (last && now.builder_md5 !== last.builder_md5)
      return refused(
        last.step + 1,
        steps,
        [],
        `${files.builder} has changed since step ${last.step} of this plan wrote it (md5 ${now.builder_md5}, expected ${last.builder_md5}); re-plan.`,
      );
    const index = plan.applied.length;
    const step = plan.steps[index];
    if (!step) {
      const lastStep = plan.steps[plan.steps.length - 1]!;
      if (lastStep.fraction >= 1) return { status: 'done', steps, checks: [] };
      // Apply computes each next step after writing the one before; Swift refused that one.
      return refused(
        lastStep.step + 1,
        steps,
        [],
        `Swift's ring builder could not compute step ${lastStep.step + 1} after step ${lastStep.step} was written (see the plan's notes); make a new plan from the current builder.`,
      );
    }
    const checks: SafetyCheck[] = [
      now.min_part_seconds_left > 0
        ? {
            name: 'min_part_hours',
            ok: false,
            detail: `min_part_hours (${now.min_part_hours} h) has not passed since the last rebalance: ${now.min_part_seconds_left} s left.`,
          }
        : {
            name: 'min_part_hours',
            ok: true,
            detail: `min_part_hours (${now.min_part_hours} h) has passed since the last rebalance.`,
          },
    ];
    if (!checks[0]!.ok) return refused(step.step, steps, checks, checks[0]!.detail);
    if (!options.skipReconChecks) {
      if (!options.checkStepSafety)
        return refused(
          step.step,
          steps,
          checks,
          'The recon safety checks are not available to this command; pass --skip-recon-checks to apply without them.',
        );
      if (now.ring_md5 === null) return refused(step.step, steps, checks, `${files.ringFile} does not exist.`);
      const verdict = await options.checkStepSafety(
        {
          ring: plan.ring,
          expectedMd5: now.ring_md5,
          ringWrittenAt: (await stat(files.ringFile)).mtime,
          nodes: now.nodes,
          fillLimitPct: options.fillLimitPct ?? 90,
        },
        { timeoutMs: options.reconTimeoutMs },
      );
      checks.push(...verdict.checks);
      if (!verdict.safe || verdict.checks.some((c) => !c.ok))
        return refused(
          step.step,
          steps,
          checks,
          verdict.checks
            .filter((c) => !c.ok)
            .map((c) => c.detail)
            .join(' ') || 'The recon checks found the cluster not ready.',
        );
    }
    const written = await runWrapper<{
      parts_moved: number;
      builder_md5: string;
      ring_md5: string;
      next_step?: Omit<WrapperStep, 'step'>;
      next_step_refused?: string;
    }>(python, {
      mode: 'apply',
      builder: files.builder,
      ring_file: files.ringFile,
      seed: plan.seed,
      step: toWrapperStep(step),
      expect: { parts_moved: step.parts_moved, parts_after: step.parts_after },
      // A plan file without `change` holds every step already.
      next: plan.change
        ? {
            change: plan.change,
            previous_fraction: plan.steps[index - 1]?.fraction ?? 0,
            max_move_pct: plan.max_move_pct,
          }
        : null,
    });
    const next = written.next_step ? fromWrapperStep({ ...written.next_step, step: step.step + 1 }) : null;
    if (next) plan.steps.push(next);
    if (written.next_step_refused) plan.notes.push(`Step ${step.step + 1}: ${written.next_step_refused}`);
    plan.applied.push({
      step: step.step,
      builder_md5: written.builder_md5,
      ring_md5: written.ring_md5,
      applied_at: new Date().toISOString(),
    });
    await writeFileAtomic(options.planFile, `${JSON.stringify(plan, null, 2)}\n`);
    return {
      status: 'applied',
      step: step.step,
      steps: plan.steps.length,
      checks,
      parts_moved: written.parts_moved,
      builder_md5: written.builder_md5,
      ring_md5: written.ring_md5,
      next: next && { step: next.step, parts_moved: next.parts_moved, parts_moved_pct: next.parts_moved_pct },
    };
  });
}

const refused = (step: number, steps: number, checks: SafetyCheck[], reason: string): ApplyOutcome => ({
  status: 'refused',
  step,
  steps,
  checks,
  reason,
});
