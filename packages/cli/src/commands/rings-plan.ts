import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Option, type Command } from 'commander';
import { errors } from '@cairn/domain/errors';
import type { CheckStepSafety, Plan, SafetyCheck } from '@cairn/rings';
// The defaults the help shows; the planner itself loads when plan or apply runs.
import { DEFAULT_MAX_MOVE_PCT, DEFAULT_SWIFT_PYTHON } from '@cairn/rings/defaults';
import { table } from '../remote/output';
import { collect } from '../remote/session';

/**
 * The recon safety checker `cairn rings apply` calls before a step (ring md5 on every node,
 * replication since the ring went out, fill, mounted): @cairn/swift-cluster's `checkStepSafety`,
 * passed in by commands/rings.ts so tests can give their own. Without one, apply refuses unless
 * --skip-recon-checks is given.
 */
export interface RingPlanDeps {
  checkStepSafety?: CheckStepSafety;
  /** `apply --cluster`: pushes the ring a step wrote as the cluster's new version (commands/rings.ts). */
  pushRing?: (cmd: Command, push: RingPush) => Promise<string>;
  /** `plan --cluster`: stores the plan in the cluster's ring plans in the management API (commands/rings.ts). */
  storePlan?: (cmd: Command, store: PlanStore) => Promise<string>;
}

/** A computed plan to keep with a cluster, for the console's What-if panel. */
export interface PlanStore {
  cluster?: string;
  name?: string;
  plan: Plan;
}

/** The name a stored plan takes from its file: `grow-z5.json` is `grow-z5`, as apply --cluster names ring versions. */
export const planNameOf = (file: string): string => basename(file).replace(/\.json$/, '');

/** A ring file to push to a cluster's versions, and the plan step that wrote it. */
export interface RingPush {
  cluster?: string;
  swiftDir: string;
  ring: string;
  planId?: string;
  step?: string;
}

function wholeNumber(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || !Number.isSafeInteger(n)) throw errors.invalidInput(`${flag} must be a whole number.`);
  return n;
}

function percent(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || n > 100)
    throw errors.invalidInput(`${flag} must be more than 0 and at most 100.`);
  return n;
}

interface PlanFlags {
  swiftDir: string;
  ring: string;
  add?: string[];
  setWeight?: string[];
  remove?: string[];
  seed?: string;
  maxMovePct?: string;
  output: 'table' | 'json';
  save?: string;
  swiftPython: string;
  usageFromRecon?: boolean;
  reconTimeout: string;
  cluster?: string;
  name?: string;
}

interface ApplyFlags {
  swiftDir: string;
  swiftPython: string;
  skipReconChecks?: boolean;
  fillLimitPct: string;
  reconTimeout: string;
  output: 'table' | 'json';
  cluster?: string;
}

/** `cairn rings plan` and `cairn rings apply`, added to the `rings` command. */
export function addRingPlanCommands(rings: Command, deps: RingPlanDeps = {}): void {
  rings
    .command('plan')
    .description(
      "plan a ring change with Swift's own ring builder on a copy of the builder: the whole change and the first of the steps that each move at most --max-move-pct of the partitions; nothing is written but --save",
    )
    .requiredOption('--swift-dir <dir>', 'where the builder and ring files are (e.g. /etc/swift)')
    .option('--ring <name>', 'account, container, object or object-<policy index>', 'object')
    .option(
      '--add <device>',
      "a new device, swift-ring-builder's add syntax with the weight last: r1z5-10.0.0.9:6200/sdf:4000 (repeatable)",
      collect,
    )
    .option(
      '--set-weight <search:weight>',
      'a new weight for the devices a search value matches, e.g. d3:0 (repeatable)',
      collect,
    )
    .option(
      '--remove <search>',
      'remove the devices a search value matches, e.g. d7, after stepping their weight to 0 (repeatable)',
      collect,
    )
    .option('--seed <n>', 'the rebalance seed (default: random, recorded in the plan)')
    .option('--max-move-pct <pct>', 'most partitions one step may move, in percent', String(DEFAULT_MAX_MOVE_PCT))
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table'))
    .option('--save <file>', 'write the plan as JSON, for cairn rings apply')
    .option('--swift-python <path>', 'the Python that has Swift', DEFAULT_SWIFT_PYTHON)
    .option(
      '--usage-from-recon',
      "read the devices' used bytes from each storage node's /recon/diskusage (else the byte fields are null)",
    )
    .option('--recon-timeout <ms>', 'per recon request', '5000')
    .option(
      '--cluster <id|name>',
      "store the plan in this cluster's ring plans in the management API, where the console's What-if panel shows its figures",
    )
    .option('--name <name>', "the stored plan's name (default: the --save file's name without .json)")
    .action(async (flags: PlanFlags, cmd: Command) => {
      const { makePlan, reconUsage, writeFileAtomic } = await import('@cairn/rings');
      const plan = await makePlan({
        swiftDir: flags.swiftDir,
        ring: flags.ring,
        add: flags.add,
        setWeight: flags.setWeight,
        remove: flags.remove,
        seed: wholeNumber('--seed', flags.seed),
        maxMovePct: percent('--max-move-pct', flags.maxMovePct),
        swiftPython: flags.swiftPython,
        usageOf: flags.usageFromRecon
          ? reconUsage({ timeoutMs: wholeNumber('--recon-timeout', flags.reconTimeout) ?? 5000 })
          : undefined,
      });
      if (flags.save) await writeFileAtomic(flags.save, `${JSON.stringify(plan, null, 2)}\n`);
      process.stdout.write(flags.output === 'json' ? `${JSON.stringify(plan, null, 2)}\n` : planTable(plan));
      if (flags.save && flags.output !== 'json')
        process.stdout.write(
          `Saved to ${flags.save}; apply a step with: cairn rings apply ${flags.save} --swift-dir ${flags.swiftDir}\n`,
        );
      if (flags.cluster !== undefined && deps.storePlan) {
        const said = await deps.storePlan(cmd, {
          cluster: flags.cluster,
          name: flags.name ?? (flags.save === undefined ? undefined : planNameOf(flags.save)),
          plan,
        });
        // -o json prints the plan alone, for scripts; the table says where it went.
        if (flags.output === 'json') process.stderr.write(said);
        else process.stdout.write(said);
      }
    });

  rings
    .command('apply')
    .description(
      "carry out a saved plan's next step when it is safe (the builder is the plan's, min_part_hours has passed, the recon checks pass): writes <ring>.builder and <ring>.ring.gz, keeping the previous ones in backups/, then computes the step after it with Swift and saves it in the plan",
    )
    .argument('<plan>', 'the plan file cairn rings plan --save wrote (it records the steps applied)')
    .requiredOption('--swift-dir <dir>', 'where the builder and ring files are (e.g. /etc/swift)')
    .option('--swift-python <path>', 'the Python that has Swift', DEFAULT_SWIFT_PYTHON)
    .option(
      '--skip-recon-checks',
      'apply without the recon checks (ring md5 on every node, replication, fill, mounted)',
    )
    .option('--fill-limit-pct <pct>', 'refuse while a device is fuller than this', '90')
    .option('--recon-timeout <ms>', 'per recon request', '5000')
    .option(
      '--cluster <id|name>',
      "after the step, push the ring to this cluster's versions in the management API (plan id: the plan file's name; the step's number), for the nodes to pull, and store the plan as it now is (the same name) in the cluster's ring plans",
    )
    .addOption(new Option('-o, --output <format>', 'output format').choices(['table', 'json']).default('table'))
    .action(async (planFile: string, flags: ApplyFlags, cmd: Command) => {
      const { applyNextStep } = await import('@cairn/rings');
      const outcome = await applyNextStep({
        planFile,
        swiftDir: flags.swiftDir,
        swiftPython: flags.swiftPython,
        checkStepSafety: deps.checkStepSafety,
        skipReconChecks: flags.skipReconChecks,
        fillLimitPct: percent('--fill-limit-pct', flags.fillLimitPct),
        reconTimeoutMs: wholeNumber('--recon-timeout', flags.reconTimeout),
      });
      if (flags.output === 'json') process.stdout.write(`${JSON.stringify(outcome, null, 2)}\n`);
      else {
        if (outcome.checks.length > 0) process.stdout.write(checksTable(outcome.checks));
        if (outcome.status === 'applied')
          process.stdout.write(
            `Applied step ${outcome.step}: ${outcome.parts_moved} partitions moved; ring md5 ${outcome.ring_md5}. ` +
              (outcome.next
                ? `Step ${outcome.next.step} is computed and saved in the plan (${outcome.next.parts_moved} partitions, ${outcome.next.parts_moved_pct.toFixed(2)}%); copy the ring to every node before it.\n`
                : 'That was the last step; copy the ring to every node.\n'),
          );
        if (outcome.status === 'done') process.stdout.write(`All ${outcome.steps} steps of this plan are applied.\n`);
      }
      if (outcome.status === 'refused')
        throw errors.invalidInput(`step ${outcome.step} not applied: ${outcome.reason}`);
      // Pushed after the step is written: a failed push leaves a step that `cairn rings push` can still send.
      if (outcome.status === 'applied' && flags.cluster !== undefined && deps.pushRing) {
        // The plan file now records the step applied and the next one Swift computed.
        const plan = JSON.parse(await readFile(planFile, 'utf8')) as Plan;
        const said = await deps.pushRing(cmd, {
          cluster: flags.cluster,
          swiftDir: flags.swiftDir,
          ring: plan.ring,
          planId: planNameOf(planFile),
          step: String(outcome.step),
        });
        if (flags.output !== 'json') process.stdout.write(said);
        // Stored again under the same name, so the console's What-if panel (newest first) shows the later steps.
        if (deps.storePlan) {
          const stored = await deps.storePlan(cmd, { cluster: flags.cluster, name: planNameOf(planFile), plan });
          if (flags.output !== 'json') process.stdout.write(stored);
        }
      }
    });
}

const checksTable = (checks: SafetyCheck[]) =>
  table(
    checks.map((c) => ({ check: c.name, ok: c.ok ? 'yes' : 'NO', detail: c.detail })),
    ['check', 'ok', 'detail'],
  );

const fixed = (n: number | null) => (n === null ? 'unknown' : n.toFixed(2));

function planTable(plan: Plan): string {
  const lines = [
    `Ring ${plan.ring}: ${plan.parts_total} partitions, ${plan.replicas} replicas; Swift ${plan.swift_version}, seed ${plan.seed}`,
    `Moves ${plan.parts_moved} partitions (${plan.parts_moved_pct.toFixed(2)}%), ${plan.replicas_moved} replicas, ${plan.bytes_to_move === null ? 'unknown' : plan.bytes_to_move} bytes`,
    `Balance ${fixed(plan.balance)} (now ${fixed(plan.balance_before)}), dispersion ${fixed(plan.dispersion)} (now ${fixed(plan.dispersion_before)})`,
    plan.min_part_seconds_left > 0
      ? `min_part_hours ${plan.min_part_hours} h: wait ${plan.min_part_seconds_left} s before the first step (figures are after the wait)`
      : `min_part_hours ${plan.min_part_hours} h: passed`,
    '',
  ];
  const devices = table(
    plan.devices.filter((d) => d.weight !== d.weight_after || d.parts !== d.parts_after).map((d) => ({ ...d })),
    [
      'id',
      'region',
      'zone',
      'ip',
      'port',
      'device',
      'weight',
      'weight_after',
      'parts',
      'parts_after',
      'used_bytes',
      'projected_used_pct',
    ],
  );
  const steps = table(
    plan.steps.map((s) => ({
      step: s.step,
      parts_moved: s.parts_moved,
      pct: s.parts_moved_pct.toFixed(2),
      balance: s.balance.toFixed(2),
      weights: [
        ...s.add.map((d) => `+d${d.id}=${d.weight}`),
        ...s.weights.map((w) => `d${w.id}=${w.weight}`),
        ...s.remove.map((id) => `-d${id}`),
      ].join(' '),
    })),
    ['step', 'parts_moved', 'pct', 'balance', 'weights'],
  );
  return [
    ...lines,
    'Devices that change:',
    devices,
    `Steps (each moves at most ${plan.max_move_pct}% of the partitions):`,
    steps,
    ...(plan.steps[plan.steps.length - 1]!.fraction < 1
      ? [
          `About ${plan.steps_estimated} steps in all (an estimate); apply computes each next step with Swift when it writes the one before, and saves it in the plan.`,
        ]
      : []),
    ...plan.notes.map((n) => `Note: ${n}`),
    '',
  ].join('\n');
}
